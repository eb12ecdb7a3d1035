import { describe, expect, it } from 'vitest';
import { ConfigError, EnvReader, type SettingRead } from './env.js';

describe('EnvReader', () => {
  it('reads typed values with defaults and freezes the result', () => {
    const env = new EnvReader({ N: ' 42 ', FLAG: 'yes', LIST: 'a, b,,c', URL: 'https://x.test/' });
    const config = env.done({
      n: env.int('N', { min: 1 }),
      flag: env.bool('FLAG'),
      list: env.list('LIST'),
      url: env.url('URL'),
      fallback: env.str('MISSING', { default: 'd' }),
    });
    expect(config).toEqual({ n: 42, flag: true, list: ['a', 'b', 'c'], url: 'https://x.test', fallback: 'd' });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('fails on a renamed variable, naming the new one; an unset or blank old name is fine', () => {
    const env = new EnvReader({ OLD_NAME: 'true', BLANK_OLD: ' ' });
    env.renamed('OLD_NAME', 'NEW_NAME', 'it means less now');
    env.renamed('BLANK_OLD', 'NEW_TOO');
    env.renamed('UNSET_OLD', 'NEW_THREE');
    expect(() => env.done({})).toThrow(new ConfigError(['OLD_NAME is no longer read: set NEW_NAME instead (it means less now)']));
  });

  it('treats blank values as unset', () => {
    const env = new EnvReader({ X: '   ' });
    expect(env.str('X', { default: 'fallback' })).toBe('fallback');
  });
});

describe('EnvReader reads, as recorded for docs/configuration.md', () => {
  it('reports each variable with its type, default, range and doc, whatever the environment holds', () => {
    const reads: SettingRead[] = [];
    const env = new EnvReader({ N: '5' }, (r) => reads.push(r));
    env.int('N', { default: 3, min: 1, max: 9, doc: 'a number' });
    env.oneOf('MODE', ['a', 'b'] as const, { default: 'a' });
    env.str('KEY', { doc: 'needed', range: 'base64' });
    env.optionalStr('MAYBE');
    env.renamed('OLD', 'NEW', 'why');
    expect(reads).toEqual([
      { name: 'N', type: 'integer', required: false, default: 3, min: 1, max: 9, doc: 'a number' },
      { name: 'MODE', type: 'one of', required: false, default: 'a', values: ['a', 'b'] },
      { name: 'KEY', type: 'string', required: true, doc: 'needed', range: 'base64' },
      { name: 'MAYBE', type: 'string', required: false },
      { name: 'OLD', type: 'string', required: false, renamedTo: 'NEW', doc: 'why' },
    ]);
  });
});
