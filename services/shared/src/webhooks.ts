// Webhooks (docs/api.md, "Webhooks"): what endpoints subscribe to, their secrets, the Standard Webhooks
// signature (https://www.standardwebhooks.com), and the target rules against SSRF. The gateway checks
// a URL at registration; the dispatcher checks the address it connects to at every delivery.
import { createHmac, randomBytes } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { v7 as uuidv7 } from 'uuid';
import { EVENT_TYPES } from './events.js';
import type { WebhookEndpoint__Output } from './generated/partner/events/v1/WebhookEndpoint.js';

/** What an endpoint can subscribe to: every feed event type (or "*" for all). */
export const WEBHOOK_EVENT_TYPES = EVENT_TYPES;
/** Sent by POST …/ping to one endpoint alone; not in the feed, not subscribable. */
export const PING_EVENT_TYPE = 'webhook_endpoint.ping';
export const ALL_EVENTS = '*';

export const MAX_URL_LENGTH = 2048;
export const MAX_DESCRIPTION_LENGTH = 500;
/** Response bodies are read up to this many bytes, and logged truncated. */
export const RESPONSE_BODY_LIMIT = 64 * 1024;
export const USER_AGENT = 'PartnerSubmissionService-Webhooks/1.0';

const hexId = (prefix: string) => `${prefix}_${uuidv7().replace(/-/g, '')}`;
export const newEndpointId = (): string => hexId('we');
export const newDeliveryId = (): string => hexId('whd');
export const isEndpointId = (s: string): boolean => /^we_[0-9a-f]{32}$/.test(s);
export const isDeliveryId = (s: string): boolean => /^whd_[0-9a-f]{32}$/.test(s);

/** An endpoint as the API shows it (never with its secret). */
export interface WebhookEndpointView {
  endpointId: string;
  url: string;
  eventTypes: string[];
  description: string;
  status: 'enabled' | 'disabled';
  disabledReason?: string;
  createdAt: string;
  updatedAt: string;
}

/** An endpoint as the API shows it, from the events service's answer (gateway reads and job results alike). */
export function endpointRecord(e: WebhookEndpoint__Output): WebhookEndpointView {
  return {
    endpointId: e.endpointId,
    url: e.url,
    eventTypes: e.eventTypes,
    description: e.description,
    status: e.status === 'disabled' ? 'disabled' : 'enabled',
    ...(e.disabledReason ? { disabledReason: e.disabledReason } : {}),
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}

/** `whsec_` + base64 of 32 random bytes (Standard Webhooks' secret format). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** The key bytes of a `whsec_…` secret. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/**
 * The `webhook-signature` header: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` for each
 * secret that signs (two during a rotation), separated by spaces.
 */
export function webhookSignature(secrets: readonly string[], id: string, timestampS: number, body: string): string {
  const content = `${id}.${timestampS}.${body}`;
  return secrets.map((s) => `v1,${createHmac('sha256', secretKey(s)).update(content).digest('base64')}`).join(' ');
}

// ---------------------------------------------------------------------------------------------
// Targets (SSRF). Only globally routable unicast addresses may be sent to, unless the deployment
// allows private targets (local development and tests).

/** Why an address may not be a webhook target, or undefined when it may. */
export function refusedAddress(address: string): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process() turns an IPv4-mapped IPv6 address (::ffff:127.0.0.1) into the IPv4 address it is.
    ip = ipaddr.process(address);
  } catch {
    return 'is not an IP address';
  }
  const range = ip.range();
  return range === 'unicast' ? undefined : `is a ${range} address`;
}

export interface TargetRules {
  /** http:// allowed too (uat); production allows https only. */
  allowHttp: boolean;
  /** Loopback, private and link-local targets allowed (local development and tests only). */
  allowPrivate: boolean;
}

/** Problems with a URL as written (no DNS): scheme, length, credentials, an IP literal's class. */
export function urlProblems(raw: string, rules: TargetRules): string[] {
  if (raw.length > MAX_URL_LENGTH) return [`must be at most ${MAX_URL_LENGTH} characters`];
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return ['must be an absolute URL'];
  }
  const problems: string[] = [];
  if (url.protocol !== 'https:' && !(rules.allowHttp && url.protocol === 'http:')) {
    problems.push(rules.allowHttp ? 'must use https or http' : 'must use https');
  }
  if (url.username || url.password) problems.push('must not contain credentials');
  if (url.hash) problems.push('must not contain a fragment');
  // The URL parser has already normalised 0x7f000001, 017700000001 and 2130706433 to 127.0.0.1.
  const host = hostOf(url);
  if (!rules.allowPrivate && ipaddr.isValid(host)) {
    const why = refusedAddress(host);
    if (why) problems.push(`must not point at a private address: ${host} ${why}`);
  }
  return problems;
}

/** The hostname of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Resolves a host and checks every address it has: the refusal reason when one is private (a name
 * that resolves to a mix is refused as a whole), or undefined. For the registration check.
 */
export async function hostProblem(host: string, rules: TargetRules): Promise<string | undefined> {
  if (rules.allowPrivate) return undefined;
  if (ipaddr.isValid(host)) {
    const why = refusedAddress(host);
    return why ? `${host} ${why}` : undefined;
  }
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))),
  ).catch((err: NodeJS.ErrnoException) => err);
  if (addresses instanceof Error) return `${host} does not resolve (${addresses.code ?? addresses.message})`;
  for (const a of addresses) {
    const why = refusedAddress(a.address);
    if (why) return `${host} resolves to ${a.address}, which ${why}`;
  }
  return undefined;
}

export class RefusedTargetError extends Error {
  readonly code = 'ERR_WEBHOOK_TARGET_REFUSED';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls connect (and so for undici's connector): resolves the host once, refuses
 * the connection when any address is private, and hands the connector exactly the addresses it
 * checked, so the socket goes where the check looked (no second resolution, no DNS rebinding).
 */
export function checkedLookup(rules: TargetRules) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, []);
      if (!rules.allowPrivate) {
        for (const a of addresses) {
          const why = refusedAddress(a.address);
          if (why) return callback(new RefusedTargetError(`${hostname} resolves to ${a.address}, which ${why}`), []);
        }
      }
      if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  };
}
