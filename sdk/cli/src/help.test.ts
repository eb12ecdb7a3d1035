import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { COMMANDS } from './cli.js';
import { commandHelp, completionScript, groupHelp, OPTION_HELP } from './help.js';

describe('help', () => {
  it('has examples for every command and a description for every option a command takes', () => {
    for (const [name, command] of Object.entries(COMMANDS)) {
      expect(command.examples.length, name).toBeGreaterThan(0);
      for (const o of command.options) expect(OPTION_HELP[o], `${name} --${o}`).toBeTruthy();
      const text = commandHelp(name, command, {});
      expect(text).toContain(`Usage: partner ${command.usage}`);
      for (const e of command.examples) expect(text).toContain(e);
    }
  });

  it('lists the commands of a group, and nothing for a word that is not one', () => {
    expect(groupHelp('attachments', COMMANDS)).toMatch(/upload .*\n.*list .*\n.*get .*\n.*download .*\n.*delete /);
    expect(groupHelp('health', COMMANDS)).toBeUndefined();
  });
});

describe('bash completion', () => {
  const script = completionScript('bash', COMMANDS, ['json', 'profile'], { status: ['active', 'cancelled'] });
  /** What bash completes for the words typed so far (the last one being completed). */
  const complete = (...words: string[]) =>
    execFileSync('bash', ['-c', `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _partner; printf '%s\\n' "\${COMPREPLY[@]}"`], {
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean);

  it('completes commands, subcommands, options and fixed option values', () => {
    expect(complete('partner', 'sub')).toEqual(['submissions']);
    expect(complete('partner', 'policies', '')).toEqual(['list', 'get', 'documents']);
    expect(complete('partner', 'submissions', 'create', '--')).toEqual(expect.arrayContaining(['--file', '--wait', '--idempotency-key', '--json', '--profile']));
    expect(complete('partner', 'submissions', 'create', '--')).not.toContain('--status');
    expect(complete('partner', 'policies', 'list', '--status', 'a')).toEqual(['active']);
    expect(complete('partner', 'health', '--p')).toEqual(['--profile']);
  });

  it('is loaded by zsh through bashcompinit', () => {
    const zsh = completionScript('zsh', COMMANDS, ['json'], {});
    expect(zsh.split('\n')[0]).toBe('#compdef partner');
    expect(zsh).toContain('bashcompinit');
    // The zsh script is the bash function behind bashcompinit: bash checks its syntax.
    execFileSync('bash', ['-n', '-c', zsh.replace(/^autoload.*$/m, '')]);
  });
});
