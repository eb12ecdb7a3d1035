// Webhooks: verifying a delivery (Standard Webhooks, https://www.standardwebhooks.com) with
// node:crypto alone, byte-compatible with the reference `standardwebhooks` libraries (tested against
// them). Use `webhooks.verify` in your receiver on the raw body, before parsing it. The endpoints and
// their deliveries are client.webhookEndpoints (webhook-endpoints.ts, with their types).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { PartnerError } from './errors.js';
import type { PartnerEvent } from './events.js';

/** A delivery that does not verify: missing headers, no matching signature, or a timestamp out of tolerance. */
export class WebhookVerificationError extends PartnerError {
  override readonly name: string = 'WebhookVerificationError';
  constructor(message: string) {
    super(message, false);
  }
}

/** Header values, from a plain object (any case) or a Fetch `Headers`. */
type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const rec = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(rec).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : rec[key];
  return Array.isArray(v) ? v[0] : v;
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

const text = (body: string | Uint8Array): string => (typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` for one secret. */
function signature(secret: string, id: string, timestampS: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampS}.${body}`).digest('base64')}`;
}

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from now (default 300 s), against replays. */
  toleranceSeconds?: number;
  /** The current time (for tests). */
  now?: Date;
}

/**
 * Verifies a delivery and returns its event. `rawBody` is the request body exactly as received (do
 * not parse and re-serialise it first); `headers` the request's headers; `secret` the endpoint's
 * `whsec_…` secret. Throws WebhookVerificationError when it does not verify.
 */
function verify(rawBody: string | Uint8Array, headers: HeaderSource, secret: string, opts: VerifyOptions = {}): PartnerEvent {
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const sigs = header(headers, 'webhook-signature');
  if (!id || !ts || !sigs) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  const timestampS = Number(ts);
  if (!/^\d+$/.test(ts) || !Number.isSafeInteger(timestampS)) throw new WebhookVerificationError('webhook-timestamp is not a number of seconds');
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  const tolerance = opts.toleranceSeconds ?? 300;
  if (Math.abs(now - timestampS) > tolerance) throw new WebhookVerificationError('webhook-timestamp is too far from now (a replay, or a wrong clock)');
  const body = text(rawBody);
  const expected = Buffer.from(signature(secret, id, timestampS, body).slice('v1,'.length), 'base64');
  const ok = sigs.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!ok) throw new WebhookVerificationError('no signature matches this secret');
  try {
    return JSON.parse(body) as PartnerEvent;
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
}

/**
 * The headers a delivery of `body` carries, signed with each secret (for local testing, as
 * `partner listen` forwards events; the service signs real deliveries the same way).
 */
function sign(body: string, secrets: string | readonly string[], opts: { id: string; timestamp?: Date }): Record<string, string> {
  const timestampS = Math.floor((opts.timestamp ?? new Date()).getTime() / 1000);
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  return {
    'webhook-id': opts.id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': list.map((s) => signature(s, opts.id, timestampS, body)).join(' '),
  };
}

/** A new `whsec_` secret (32 random bytes), e.g. for `partner listen`. */
function newSecret(): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;
}

export const webhooks = { verify, sign, newSecret };
