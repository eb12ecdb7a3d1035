import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, refusedAddress, urlProblems, webhookSignature } from './webhooks.js';

describe('webhook targets', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['100.64.0.1', 'carrierGradeNat'],
  ])('refuses %s (%s)', (address, range) => {
    expect(refusedAddress(address)).toBe(`is a ${range} address`);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:4700::1111'])('allows the public address %s', (address) => {
    expect(refusedAddress(address)).toBeUndefined();
  });

  const strict = { allowHttp: false, allowPrivate: false };
  it('reads decimal, hex and octal IPv4 forms as the address they are', () => {
    for (const host of ['2130706433', '0x7f000001', '0177.0.0.1', '0x7f.1', '127.1']) {
      expect(urlProblems(`https://${host}/x`, strict), host).toEqual([expect.stringContaining('127.0.0.1 is a loopback address')]);
    }
  });

  it('refuses other schemes, credentials, fragments and long URLs; http only where allowed', () => {
    expect(urlProblems('http://hooks.example.com/x', strict)).toEqual(['must use https']);
    expect(urlProblems('http://hooks.example.com/x', { ...strict, allowHttp: true })).toEqual([]);
    expect(urlProblems('https://u:p@hooks.example.com/x', strict)).toEqual(['must not contain credentials']);
    expect(urlProblems('https://hooks.example.com/x#y', strict)).toEqual(['must not contain a fragment']);
    expect(urlProblems(`https://hooks.example.com/${'a'.repeat(2100)}`, strict)).toEqual(['must be at most 2048 characters']);
    expect(urlProblems('not a url', strict)).toEqual(['must be an absolute URL']);
    expect(urlProblems('https://[::ffff:10.0.0.1]/x', strict)).toEqual([expect.stringContaining('is a private address')]);
    expect(urlProblems('https://127.0.0.1/x', { ...strict, allowPrivate: true })).toEqual([]);
  });
});

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
