import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, secretProblem, webhookSignature } from './webhooks.js';

describe('webhook signatures', () => {
  it('are what the reference implementation (standardwebhooks) verifies, one or two secrets', () => {
    const [a, b] = [newWebhookSecret(), newWebhookSecret()];
    const body = JSON.stringify({ id: 'evt_1', type: 'job.succeeded', data: { x: 'é' } });
    const ts = Math.floor(Date.now() / 1000);
    const headers = (secrets: string[]) => ({ 'webhook-id': 'evt_1', 'webhook-timestamp': String(ts), 'webhook-signature': webhookSignature(secrets, 'evt_1', ts, body) });
    expect(new Webhook(a).verify(body, headers([a]))).toEqual(JSON.parse(body));
    expect(new Webhook(a).verify(body, headers([b, a]))).toEqual(JSON.parse(body));
    expect(new Webhook(b).verify(body, headers([b, a]))).toEqual(JSON.parse(body));
    expect(() => new Webhook(b).verify(body, headers([a]))).toThrow();
    // And the reference's own signature equals ours.
    expect(new Webhook(a).sign('evt_1', new Date(ts * 1000), body)).toBe(webhookSignature([a], 'evt_1', ts, body));
  });
});

describe('a secret the partner brings', () => {
  const of = (n: number) => `whsec_${Buffer.alloc(n, 7).toString('base64')}`;
  it('is whsec_ and canonical base64 of 24 to 64 bytes', () => {
    for (const n of [24, 32, 50, 64]) expect(secretProblem(of(n))).toBeUndefined();
    expect(secretProblem(newWebhookSecret())).toBeUndefined();
    expect(secretProblem(of(23))).toMatch(/24 to 64 random bytes \(it has 23\)/);
    expect(secretProblem(of(65))).toMatch(/it has 65/);
    for (const bad of ['', 'whsec_', 'secret', of(32).slice('whsec_'.length), `whsec_${'A'.repeat(43)}`, `${of(32)} `, of(32).replace('whsec_', 'whsec-'), `whsec_${Buffer.alloc(32).toString('base64url')}_-`]) {
      expect(secretProblem(bad), bad).toMatch(/must be whsec_ followed by the standard base64/);
    }
  });
});
