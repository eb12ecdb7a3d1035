import { describe, expect, it } from 'vitest';
import { ConfigError, EnvReader } from '@partner/shared/config/env';
import { DEFAULT_ATTACHMENT_LIMIT_BYTES, readAttachmentConfig } from './config.js';

describe('readAttachmentConfig', () => {
  it('defaults to 25 MiB and a 300 s transfer deadline', () => {
    expect(readAttachmentConfig(new EnvReader({}))).toEqual({ limitBytes: 25 * 1024 * 1024, transferTimeoutMs: 300_000 });
    expect(DEFAULT_ATTACHMENT_LIMIT_BYTES).toBe(26_214_400);
  });

  it('reads ATTACHMENT_LIMIT_BYTES and ATTACHMENT_TRANSFER_TIMEOUT_MS', () => {
    expect(readAttachmentConfig(new EnvReader({ ATTACHMENT_LIMIT_BYTES: '1048576', ATTACHMENT_TRANSFER_TIMEOUT_MS: '60000' }))).toEqual({
      limitBytes: 1_048_576,
      transferTimeoutMs: 60_000,
    });
  });

  it('fails fast, naming the variable', () => {
    expect(() => readAttachmentConfig(new EnvReader({ ATTACHMENT_LIMIT_BYTES: '25MB' }))).toThrow(ConfigError);
    expect(() => readAttachmentConfig(new EnvReader({ ATTACHMENT_LIMIT_BYTES: '0' }))).toThrow(/ATTACHMENT_LIMIT_BYTES/);
  });
});
