import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { UnknownKekError } from '@partner/shared/crypto/sealed-keys';
import { newWebhookSecret } from '@partner/shared/domain/webhooks';
import { openSecret, sealSecret, signingSecrets, signingSecretsOrNone } from './secrets.js';

describe('webhook signing secrets sealed at rest', () => {
  const [older, newer] = [randomBytes(32), randomBytes(32)];
  const [s1, s2] = [newWebhookSecret(), newWebhookSecret()];

  it('seal under the newest KEK, bound to their endpoint and column: a blob moved elsewhere does not open', () => {
    const blob = sealSecret([newer, older], 'we_a', 'secret', s1);
    expect(blob.toString('latin1')).not.toContain(s1.slice('whsec_'.length));
    expect(openSecret([newer], 'we_a', 'secret', blob)).toBe(s1);
    expect(() => openSecret([older], 'we_a', 'secret', blob)).toThrow(UnknownKekError);
    // Copied to another endpoint, or to the previous secret's column: refused, not opened.
    expect(() => openSecret([newer, older], 'we_b', 'secret', blob)).toThrow(UnknownKekError);
    expect(() => openSecret([newer, older], 'we_a', 'previous_secret', blob)).toThrow(UnknownKekError);
  });

  it('an unknown KEK names the endpoint, the column and the setting', () => {
    const blob = sealSecret([older], 'we_a', 'secret', s1);
    expect(() => openSecret([newer], 'we_a', 'secret', blob)).toThrow(
      /^the signing secret of webhook endpoint we_a \(secret\) in the database is sealed with a key-encryption key this process does not have \(AUTH_KEY_ENCRYPTION_KEY lists 1 key, none opens it\)/,
    );
  });

  it('a column with nothing sealed has no secret', () => {
    expect(openSecret([newer], 'we_a', 'previous_secret', null)).toBeNull();
  });

  it('sign a delivery with the current secret, then the previous one while it signs', () => {
    const row = { endpoint_id: 'we_a' };
    const current = sealSecret([newer], 'we_a', 'secret', s1);
    const previous = sealSecret([older], 'we_a', 'previous_secret', s2);
    expect(signingSecrets([newer, older], { ...row, secret_sealed: current, previous_secret_sealed: previous })).toEqual([s1, s2]);
    expect(signingSecrets([newer, older], { ...row, secret_sealed: current, previous_secret_sealed: null })).toEqual([s1]);
    expect(() => signingSecrets([newer], { ...row, secret_sealed: null, previous_secret_sealed: null })).toThrow(/has no signing secret/);
    // Either one not opening: none at all for the dispatcher (it refuses the delivery unsent), the error otherwise.
    const foreign = { ...row, endpoint_id: 'we_b', secret_sealed: current, previous_secret_sealed: null };
    const why: string[] = [];
    expect(signingSecretsOrNone([newer, older], foreign, (err) => why.push(err.message))).toEqual([]);
    expect(why, 'the reason reaches the operator').toHaveLength(1);
    expect(signingSecretsOrNone([newer], { ...row, secret_sealed: current, previous_secret_sealed: previous })).toEqual([]);
    expect(() => signingSecrets([newer, older], foreign)).toThrow(UnknownKekError);
  });
});
