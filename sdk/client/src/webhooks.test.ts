import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { webhooks, WebhookVerificationError } from './webhooks.js';

const secret = webhooks.newSecret();
const body = JSON.stringify({ id: 'evt_0123456789abcdef0123456789abcdef', type: 'submission.created', timestamp: '2026-11-24T10:00:00.000Z', data: { name: 'Zoë' } });
const id = 'evt_0123456789abcdef0123456789abcdef';

describe('webhooks.verify and webhooks.sign (against the reference standardwebhooks library)', () => {
  it('verifies what the reference library signs, and the reference verifies what we sign', () => {
    const at = new Date();
    const theirs = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, body) };
    expect(webhooks.verify(body, theirs, secret)).toEqual(JSON.parse(body));
    expect(webhooks.verify(Buffer.from(body), new Headers(theirs), secret).id).toBe(id);
    const ours = webhooks.sign(body, secret, { id, timestamp: at });
    expect(ours['webhook-signature']).toBe(theirs['webhook-signature']);
    expect(new Webhook(secret).verify(body, ours)).toEqual(JSON.parse(body));
  });

  it('accepts any of several signatures (a rotation), and only the right secret', () => {
    const other = webhooks.newSecret();
    const both = webhooks.sign(body, [other, secret], { id });
    expect(both['webhook-signature'].split(' ')).toHaveLength(2);
    expect(webhooks.verify(body, both, secret).id).toBe(id);
    expect(webhooks.verify(body, both, other).id).toBe(id);
    expect(new Webhook(secret).verify(body, both)).toBeTruthy();
    expect(() => webhooks.verify(body, webhooks.sign(body, other, { id }), secret)).toThrow(WebhookVerificationError);
  });

  it('refuses a changed body, a missing header and a stale timestamp', () => {
    const h = webhooks.sign(body, secret, { id });
    expect(() => webhooks.verify(body.replace('Zoë', 'Zoe'), h, secret)).toThrow('no signature matches');
    expect(() => webhooks.verify(body, { ...h, 'webhook-signature': undefined }, secret)).toThrow('missing');
    const old = webhooks.sign(body, secret, { id, timestamp: new Date(Date.now() - 600_000) });
    expect(() => webhooks.verify(body, old, secret)).toThrow('too far from now');
    expect(webhooks.verify(body, old, secret, { toleranceSeconds: 900 }).id).toBe(id);
    // The reference agrees on all three.
    expect(() => new Webhook(secret).verify(body.replace('Zoë', 'Zoe'), h)).toThrow();
    expect(() => new Webhook(secret).verify(body, old)).toThrow();
  });
});
