import { describe, expect, it } from 'vitest';
import { ConfigError, EnvReader } from '../config/env.js';
import { readBase, readDb, readNats } from './config.js';

describe('the settings every process reads', () => {
  it('reports every bad variable by name at once', () => {
    const env = new EnvReader({ PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x', NATS_PREFIX: 'a.b' });
    readBase(env, 'svc', 1);
    readDb(env);
    readNats(env);
    env.int('PORT', { min: 0 });
    env.str('REQUIRED_ONE', { doc: 'needed for X' });
    let err: unknown;
    try {
      env.done({});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    for (const name of ['PORT', 'LOG_LEVEL', 'DATABASE_URL', 'NATS_PREFIX', 'REQUIRED_ONE is required (needed for X)']) {
      expect(message).toContain(name);
    }
  });
});
