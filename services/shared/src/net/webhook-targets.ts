// Webhook targets against SSRF (docs/webhooks-design.md). Only globally routable unicast addresses may
// be sent to; a deployment for local development and tests may allow loopback too, and nothing else.
// refusedAddress() owns the verdict: the gateway asks it about a URL's IP literal and the addresses
// its host resolves to at registration and PATCH, the dispatcher about the address it is about to
// connect to at every delivery (checkedLookup). Rules of the network layer that resolve names (DNS),
// so they live in net/, not in domain/.
import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { EnvReader } from '../config/env.js';
import { MAX_URL_LENGTH } from '../domain/webhooks.js';

/** Why an address is not public: what kind of address it is (after "is a…"). */
type AddressKind =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unique-local'
  | 'site-local'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'carrier-grade NAT'
  | 'benchmarking'
  | 'documentation'
  | 'reserved'
  | 'discard-only'
  | 'IETF protocol assignment'
  | 'Teredo'
  | 'local-use NAT64';

/** How an IPv6 address embeds an IPv4 one, when it does (judged as that IPv4 address). */
type Embedding = 'IPv4-compatible' | 'IPv4-mapped' | 'IPv4-translated' | 'NAT64' | '6to4' | 'ISATAP';

export interface AddressClass {
  /** The address's kind, or 'public' (globally routable unicast). */
  kind: AddressKind | 'public';
  /** The IPv4 address an IPv6 one embeds, and how; kind is then that IPv4 address's. */
  embeds?: { ipv4: string; as: Embedding };
}

const cidrs = <K extends string>(table: [string, K][]): [[ipaddr.IPv4 | ipaddr.IPv6, number], K][] =>
  table.map(([cidr, kind]) => [ipaddr.parseCIDR(cidr), kind]);

// IANA's IPv4 special-purpose registry (RFC 6890 and later), the blocks not globally reachable.
// Checked in order: the first match decides.
const IPV4_SPECIAL = cidrs<AddressKind>([
  ['0.0.0.0/32', 'unspecified'],
  ['0.0.0.0/8', 'reserved'], // "this network"
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'], // also Alibaba Cloud's metadata, 100.100.100.200
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'], // cloud metadata: 169.254.169.254, 169.254.170.2, …
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignment'], // Oracle Cloud's metadata, 192.0.0.192
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'], // the deprecated 6to4 relay anycast
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
]);

// IPv6: global unicast is 2000::/3; everything outside it is refused (as 'reserved' unless named
// here), and so are these blocks inside it. The IPv4-embedding blocks are handled before this table.
const IPV6_SPECIAL = cidrs<AddressKind>([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'local-use NAT64'], // RFC 8215: the IPv4 address's place is the operator's choice
  ['100::/64', 'discard-only'],
  ['2001::/32', 'Teredo'], // the client's IPv4 address is obfuscated; refused outright
  ['2001:2::/48', 'benchmarking'],
  ['2001:db8::/32', 'documentation'],
  ['2001::/23', 'IETF protocol assignment'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'reserved'], // SRv6 SIDs
  ['fc00::/7', 'unique-local'], // AWS's IPv6 metadata, fd00:ec2::254
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
]);
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

const v4 = (hi: number, lo: number): ipaddr.IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/** The IPv4 address an IPv6 address embeds by a well-known convention, and which one. */
function embeddedIpv4(ip: ipaddr.IPv6): { ipv4: ipaddr.IPv4; as: Embedding } | undefined {
  const p = ip.parts;
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return { ipv4: v4(p[6]!, p[7]!), as: 'IPv4-mapped' }; // ::ffff:0:0/96
  if (zeros(0, 6) && (p[6] !== 0 || p[7]! > 1)) return { ipv4: v4(p[6]!, p[7]!), as: 'IPv4-compatible' }; // ::/96 but :: and ::1
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return { ipv4: v4(p[6]!, p[7]!), as: 'IPv4-translated' }; // ::ffff:0:0:0/96
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return { ipv4: v4(p[6]!, p[7]!), as: 'NAT64' }; // 64:ff9b::/96
  if (p[0] === 0x2002) return { ipv4: v4(p[1]!, p[2]!), as: '6to4' }; // 2002::/16, the IPv4 address in bits 16-47
  // ISATAP (RFC 5214): any prefix, interface id 0000:5efe or 0200:5efe followed by the IPv4 address.
  if ((p[4]! & 0xfdff) === 0 && p[5] === 0x5efe) return { ipv4: v4(p[6]!, p[7]!), as: 'ISATAP' };
  return undefined;
}

function kindOf(ip: ipaddr.IPv4 | ipaddr.IPv6): AddressKind | 'public' {
  for (const [cidr, kind] of ip.kind() === 'ipv4' ? IPV4_SPECIAL : IPV6_SPECIAL) {
    if (cidr[0].kind() === ip.kind() && ip.match(cidr)) return kind;
  }
  if (ip.kind() === 'ipv6' && !ip.match(GLOBAL_UNICAST_V6)) return 'reserved';
  return 'public';
}

/**
 * Parses an address as the URL parser and the socket layer read it. Only the canonical forms URLs
 * and DNS answers have (so not 127.1 or 0x7f.1); brackets and a zone id allowed. ipaddr.js alone
 * would read ::127.0.0.1 as ::ffff:127.0.0.1: IPv6 goes through WHATWG URL's parser first.
 */
function parseAddress(address: string): { ip: ipaddr.IPv4 | ipaddr.IPv6; zoned: boolean } | undefined {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  const zone = bare.indexOf('%');
  const addr = zone >= 0 ? bare.slice(0, zone) : bare;
  const family = isIP(addr);
  if (family === 0 || (family === 4 && zone >= 0)) return undefined;
  try {
    return { ip: ipaddr.parse(family === 6 ? new URL(`http://[${addr}]/`).hostname.slice(1, -1) : addr), zoned: zone >= 0 };
  } catch {
    return undefined;
  }
}

/**
 * What an IP address is, as a webhook target: an IPv6 address that embeds an IPv4 one is that IPv4
 * address. Undefined when `address` is not one (see parseAddress). An address with a zone id is
 * scoped to one of this host's links: link-local, whatever it reads.
 */
export function classifyAddress(address: string): AddressClass | undefined {
  const parsed = parseAddress(address);
  if (!parsed) return undefined;
  if (parsed.zoned) return { kind: 'link-local' };
  const { ip } = parsed;
  const kind = kindOf(ip);
  if (ip.kind() === 'ipv6') {
    const embedded = embeddedIpv4(ip as ipaddr.IPv6);
    // ISATAP's prefix is any prefix: a link-local or unique-local one stays what it is.
    if (embedded && (embedded.as !== 'ISATAP' || kind === 'public')) {
      return { kind: kindOf(embedded.ipv4), embeds: { ipv4: embedded.ipv4.toString(), as: embedded.as } };
    }
  }
  return { kind };
}

export interface TargetRules {
  /** http:// allowed too (uat); production allows https only. */
  allowHttp: boolean;
  /** Loopback targets allowed (local development and tests only); nothing else that is not public ever is. */
  allowLoopback: boolean;
  /**
   * The TCP ports a target may use (WEBHOOK_ALLOWED_PORTS: the ports the deployment's egress allows).
   * A loopback target, where loopback is allowed, may use any port: it never leaves the host.
   */
  allowedPorts: readonly number[];
}

/** This host's loopback as the socket layer reaches it: 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104. */
function isHostLoopback(c: AddressClass): boolean {
  return c.kind === 'loopback' && (!c.embeds || c.embeds.as === 'IPv4-mapped');
}

/** Whether an IP address is this host's loopback (isHostLoopback); false for anything else, names included. */
export function isThisHostLoopback(address: string): boolean {
  const c = classifyAddress(address);
  return c !== undefined && isHostLoopback(c);
}

/**
 * Why an address may not be a webhook target under the rules, or undefined when it may. Loopback,
 * where allowed, is 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104 (the socket layer's own spelling of
 * 127/8): the other forms that embed 127/8 are routed off this host (to a NAT64 translator, a 6to4
 * relay, an ISATAP router or the IPv6 default route), so they are refused in every mode.
 */
export function refusedAddress(address: string, rules: Pick<TargetRules, 'allowLoopback'>): string | undefined {
  const c = classifyAddress(address);
  if (!c) return 'is not an IP address';
  if (c.kind === 'public') return undefined;
  const hostLoopback = isHostLoopback(c);
  if (hostLoopback && rules.allowLoopback) return undefined;
  const what = `${c.kind === 'unspecified' || c.kind === 'IETF protocol assignment' ? 'an' : 'a'} ${c.kind} address`;
  if (!c.embeds) return `is ${what}`;
  return `embeds ${c.embeds.ipv4} (${c.embeds.as}), which is ${what}${c.kind === 'loopback' && !hostLoopback ? ' (not this host\'s loopback that way)' : ''}`;
}

/** WEBHOOK_ALLOW_LOOPBACK_TARGETS (gateway and dispatcher); the old WEBHOOK_ALLOW_PRIVATE_TARGETS fails the start. */
export function readAllowLoopbackTargets(env: EnvReader): boolean {
  env.renamed('WEBHOOK_ALLOW_PRIVATE_TARGETS', 'WEBHOOK_ALLOW_LOOPBACK_TARGETS', 'it allows loopback targets only');
  return env.bool('WEBHOOK_ALLOW_LOOPBACK_TARGETS', { default: false, doc: 'webhook URLs may point at loopback addresses (local development and tests only); never at other non-public ones' });
}

export const DEFAULT_ALLOWED_PORTS = [443, 8443] as const;

/** WEBHOOK_ALLOWED_PORTS (gateway and dispatcher): the TCP ports webhook targets may use. */
export function readAllowedPorts(env: EnvReader): number[] {
  const raw = env.list('WEBHOOK_ALLOWED_PORTS', {
    default: DEFAULT_ALLOWED_PORTS.map(String),
    doc: "comma list of the TCP ports webhook URLs may use (a URL without a port uses its scheme's: 443, or 80 for http): checked at registration and update (400 naming url) and before every delivery; the egress NetworkPolicy must allow the same ports. Loopback targets, where allowed, may use any port",
    range: 'ports 1-65535',
  });
  const ports = raw.map((p) => (/^\d{1,5}$/.test(p) ? Number(p) : NaN));
  if (ports.length === 0 || ports.some((p) => !(p >= 1 && p <= 65535))) {
    env.problem('WEBHOOK_ALLOWED_PORTS', `must be a comma-separated list of TCP ports (1-65535), e.g. 443,8443; got "${raw.join(',')}"`);
  }
  return [...new Set(ports)].sort((a, b) => a - b);
}

/** The TCP port a URL connects to: its own, or its scheme's default. */
export function targetPort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'http:' ? 80 : 443;
}

/** The refusal of a URL's port when it is not an allowed one (whatever the host), or undefined. */
export function portProblem(url: URL, rules: Pick<TargetRules, 'allowedPorts'>): string | undefined {
  const port = targetPort(url);
  if (rules.allowedPorts.includes(port)) return undefined;
  const list = rules.allowedPorts.join(', ');
  return `must use ${rules.allowedPorts.length === 1 ? `port ${list}` : `one of the ports ${list}`} (${url.port ? `port ${port} is not allowed` : `${url.protocol.slice(0, -1)} without a port uses ${port}`})`;
}

/** Problems with a URL as written (no DNS): scheme, length, credentials, an IP literal's class, its port. */
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
  const why = literalProblem(url, rules);
  if (why) problems.push(privateAddressProblem(why, rules));
  // Where loopback is allowed, a loopback target may use any port: an IP literal is judged here, a
  // name once resolved (targetProblems).
  const portWhy = portProblem(url, rules);
  if (portWhy && !(rules.allowLoopback && (isIP(hostOf(url)) === 0 || isThisHostLoopback(hostOf(url))))) problems.push(portWhy);
  return problems;
}

/**
 * Every problem of a URL as a webhook target, at registration and update: its form (urlProblems),
 * then, when that passes, where its host resolves (hostProblem), and the port of a name where
 * loopback is allowed (any port only when every address it resolves to is this host's loopback).
 */
export async function targetProblems(raw: string, rules: TargetRules): Promise<string[]> {
  const problems = urlProblems(raw, rules);
  if (problems.length > 0) return problems;
  const url = new URL(raw);
  const host = hostOf(url);
  const why = await hostProblem(host, rules);
  if (why) return [privateAddressProblem(why, rules)];
  const portWhy = portProblem(url, rules);
  if (portWhy && isIP(host) === 0 && !(await resolvesToLoopbackOnly(host))) return [portWhy];
  return [];
}

async function resolvesToLoopbackOnly(host: string): Promise<boolean> {
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))),
  ).catch(() => []);
  return addresses.length > 0 && addresses.every((a) => isThisHostLoopback(a.address));
}

/**
 * The issue of a URL whose host is (or resolves to) an address refused under the rules; a loopback
 * target refused where loopback is not allowed points at `partner listen`, which forwards events to a
 * receiver on the partner's own machine.
 */
export function privateAddressProblem(why: string, rules: Pick<TargetRules, 'allowLoopback'>): string {
  const hint = !rules.allowLoopback && / is a loopback address$/.test(why) ? '; to receive events on your own machine, use `partner listen --forward-to <url>`' : '';
  return `must not point at a private address: ${why}${hint}`;
}

/**
 * The refusal of a URL whose host is an IP literal, or undefined (a name, or an allowed address).
 * The WHATWG URL parser has already turned 2130706433, 0x7f.1, 0177.0.0.1 and 127.1 into 127.0.0.1,
 * and refuses IPv6 zone ids, so the host is an address in its canonical form or a name.
 */
export function literalProblem(url: URL, rules: Pick<TargetRules, 'allowLoopback'>): string | undefined {
  const host = hostOf(url);
  if (isIP(host) === 0) return undefined;
  const why = refusedAddress(host, rules);
  return why ? `${host} ${why}` : undefined;
}

/** The hostname of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Resolves a host and checks every address it has: the refusal reason when one is not allowed (a
 * name that resolves to a mix is refused as a whole), or undefined. For the registration check.
 */
export async function hostProblem(host: string, rules: Pick<TargetRules, 'allowLoopback'>): Promise<string | undefined> {
  if (isIP(host) !== 0) {
    const why = refusedAddress(host, rules);
    return why ? `${host} ${why}` : undefined;
  }
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))),
  ).catch((err: NodeJS.ErrnoException) => err);
  if (addresses instanceof Error) return `${host} does not resolve (${addresses.code ?? addresses.message})`;
  for (const a of addresses) {
    const why = refusedAddress(a.address, rules);
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
 * the connection when any address is not allowed, and hands the connector exactly the addresses it
 * checked, so the socket goes where the check looked (no second resolution, no DNS rebinding).
 * `portRefusal` (the origin's port is not an allowed one, loopback allowed): only this host's
 * loopback addresses are.
 */
export function checkedLookup(rules: Pick<TargetRules, 'allowLoopback'>, opts: { portRefusal?: string } = {}) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, []);
      for (const a of addresses) {
        const why = refusedAddress(a.address, rules);
        if (why) return callback(new RefusedTargetError(`${hostname} resolves to ${a.address}, which ${why}`), []);
        // A port not allowed is allowed to this host's loopback only (where loopback is).
        if (opts.portRefusal !== undefined && !isThisHostLoopback(a.address)) {
          return callback(new RefusedTargetError(`${hostname} resolves to ${a.address}, not this host's loopback: the URL ${opts.portRefusal}`), []);
        }
      }
      if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  };
}
