import { describe, expect, it } from 'vitest';
import { ConfigError, EnvReader } from '../config/env.js';
import {
  checkedLookup,
  classifyAddress,
  portProblem,
  readAllowedPorts,
  targetPort,
  targetProblems,
  hostProblem,
  literalProblem,
  privateAddressProblem,
  readAllowLoopbackTargets,
  RefusedTargetError,
  refusedAddress,
  urlProblems,
} from './webhook-targets.js';

// Every port allowed: these tests are about addresses (the port list has its own, below).
const anyPort = Array.from({ length: 65_535 }, (_, i) => i + 1);

describe('webhook targets', () => {
  const strict = { allowHttp: false, allowLoopback: false, allowedPorts: anyPort };
  const local = { allowHttp: true, allowLoopback: true, allowedPorts: anyPort };

  // [address, its kind, the IPv4 address it embeds]. Public is allowed everywhere; loopback in local
  // mode only, and only as itself or IPv4-mapped (127/8 embedded any other way is routed off this
  // host); everything else nowhere.
  const table: [string, string, string?][] = [
    // The attack's inputs (issue 36): IPv4-compatible ::/96, which ipaddr.js alone calls unicast.
    ['::127.0.0.1', 'loopback', '127.0.0.1'],
    ['::7f00:1', 'loopback', '127.0.0.1'],
    ['::a9fe:a9fe', 'link-local', '169.254.169.254'],
    ['::10.0.0.1', 'private', '10.0.0.1'],
    ['::8.8.8.8', 'public', '8.8.8.8'],
    ['::2', 'reserved', '0.0.0.2'],
    // IPv4-mapped ::ffff:0:0/96, and IPv4-translated ::ffff:0:0:0/96.
    ['::ffff:127.0.0.1', 'loopback', '127.0.0.1'],
    ['::ffff:7f00:1', 'loopback', '127.0.0.1'],
    ['::ffff:169.254.169.254', 'link-local', '169.254.169.254'],
    ['::ffff:10.0.0.1', 'private', '10.0.0.1'],
    ['::ffff:0.0.0.0', 'unspecified', '0.0.0.0'],
    ['::ffff:8.8.8.8', 'public', '8.8.8.8'],
    ['::ffff:0:127.0.0.1', 'loopback', '127.0.0.1'],
    ['::ffff:0:a9fe:a9fe', 'link-local', '169.254.169.254'],
    ['::ffff:0:8.8.8.8', 'public', '8.8.8.8'],
    // NAT64: the well-known prefix judged by its IPv4 address, the local-use one refused outright.
    ['64:ff9b::7f00:1', 'loopback', '127.0.0.1'],
    ['64:ff9b::127.0.0.1', 'loopback', '127.0.0.1'],
    ['64:ff9b::a9fe:a9fe', 'link-local', '169.254.169.254'],
    ['64:ff9b::c0a8:1', 'private', '192.168.0.1'],
    ['64:ff9b::808:808', 'public', '8.8.8.8'],
    ['64:ff9b::', 'unspecified', '0.0.0.0'],
    ['64:ff9b::a00:1', 'private', '10.0.0.1'],
    ['64:ff9b::6440:1', 'carrier-grade NAT', '100.64.0.1'],
    ['64:ff9b::ffff:ffff', 'broadcast', '255.255.255.255'],
    // 64:ff9b::/96 only: the rest of 64:ff9b::/32 outside 64:ff9b:1::/48 is not global unicast.
    ['64:ff9b:2::808:808', 'reserved'],
    ['64:ff9b:1::808:808', 'local-use NAT64'],
    ['64:ff9b:1:ffff::1', 'local-use NAT64'],
    ['64:ff9b:1::7f00:1', 'local-use NAT64'],
    // 6to4 2002::/16: the IPv4 address is bits 16-47.
    ['2002:7f00:1::', 'loopback', '127.0.0.1'],
    ['2002:a9fe:a9fe::1', 'link-local', '169.254.169.254'],
    ['2002:a00:1:1::1', 'private', '10.0.0.1'],
    ['2002:808:808::1', 'public', '8.8.8.8'],
    ['2002::', 'unspecified', '0.0.0.0'],
    ['2002:c0a8:101::1', 'private', '192.168.1.1'],
    ['2002:6464:64c8::1', 'carrier-grade NAT', '100.100.100.200'],
    ['2002:c000:c0::1', 'IETF protocol assignment', '192.0.0.192'], // Oracle Cloud's metadata through a 6to4 relay
    // Teredo 2001::/32 (the client's address obfuscated): refused outright, whatever it hides.
    ['2001::1', 'Teredo'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo'], // client 127.0.0.1
    ['2001:0:4136:e378:8000:63bf:f7f6:fefe', 'Teredo'], // client 8.9.1.1
    // ISATAP: the IPv4 address in the interface id, behind a public prefix; a non-public prefix stays itself.
    ['2a00:1450::5efe:7f00:1', 'loopback', '127.0.0.1'],
    ['2a00:1450::200:5efe:a9fe:a9fe', 'link-local', '169.254.169.254'],
    ['2a00:1450::5efe:808:808', 'public', '8.8.8.8'],
    ['fe80::5efe:808:808', 'link-local'],
    // Plain IPv4.
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'link-local'], // AWS, GCP, Azure metadata
    ['169.254.170.2', 'link-local'], // ECS task metadata
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.100.100.200', 'carrier-grade NAT'], // Alibaba Cloud metadata
    ['192.0.0.192', 'IETF protocol assignment'], // Oracle Cloud metadata
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['192.88.99.1', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['8.8.8.8', 'public'],
    ['93.184.215.14', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    // Plain IPv6.
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['fd00::1', 'unique-local'],
    ['fd00:ec2::254', 'unique-local'], // AWS metadata over IPv6
    ['fc00::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['100::1', 'discard-only'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'IETF protocol assignment'],
    ['5f00::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['1::1', 'reserved'],
    ['2606:4700::1111', 'public'],
    ['2a00:1450:4001:80b::200e', 'public'],
    // Brackets and zone ids: a zoned address is scoped to one of this host's links.
    ['[::1]', 'loopback'],
    ['[::7f00:1]', 'loopback', '127.0.0.1'],
    ['fe80::1%eth0', 'link-local'],
    ['::1%lo', 'link-local'],
    ['[2606:4700::1111%eth0]', 'link-local'],
  ];

  it.each(table)('classifies %s as %s', (address, kind, ipv4) => {
    const c = classifyAddress(address);
    expect(c?.kind).toBe(kind);
    expect(c?.embeds?.ipv4).toBe(ipv4);
  });

  it.each(table)('judges %s (%s): in strict and in local mode', (address, kind, ipv4) => {
    const strictWhy = refusedAddress(address, strict);
    const localWhy = refusedAddress(address, local);
    if (kind === 'public') {
      expect([strictWhy, localWhy]).toEqual([undefined, undefined]);
      return;
    }
    const article = kind === 'unspecified' || kind === 'IETF protocol assignment' ? 'an' : 'a';
    const as = classifyAddress(address)!.embeds?.as;
    const hostLoopback = kind === 'loopback' && (!as || as === 'IPv4-mapped');
    const offHost = kind === 'loopback' && !hostLoopback ? " (not this host's loopback that way)" : '';
    const why = ipv4 ? `embeds ${ipv4} (${as}), which is ${article} ${kind} address${offHost}` : `is ${article} ${kind} address`;
    expect(strictWhy).toBe(why);
    expect(localWhy).toBe(hostLoopback ? undefined : why);
  });

  it("refuses the attack's IPv4-compatible addresses (issue 36) in both modes, at registration as at delivery", () => {
    for (const rules of [{ ...strict, allowHttp: true }, local]) {
      expect(urlProblems('http://[::127.0.0.1]/', rules)).toEqual(["must not point at a private address: ::7f00:1 embeds 127.0.0.1 (IPv4-compatible), which is a loopback address (not this host's loopback that way)"]);
      expect(urlProblems('http://[::7f00:1]/', rules)).toEqual(["must not point at a private address: ::7f00:1 embeds 127.0.0.1 (IPv4-compatible), which is a loopback address (not this host's loopback that way)"]);
      expect(urlProblems('http://[::a9fe:a9fe]/', rules)).toEqual(['must not point at a private address: ::a9fe:a9fe embeds 169.254.169.254 (IPv4-compatible), which is a link-local address']);
      expect(urlProblems('http://[::10.0.0.1]/', rules)).toEqual(['must not point at a private address: ::a00:1 embeds 10.0.0.1 (IPv4-compatible), which is a private address']);
      // The sender's check of an IP literal, and its lookup's check of what a name resolves to.
      expect(literalProblem(new URL('http://[::a9fe:a9fe]:8080/x'), rules)).toBe('::a9fe:a9fe embeds 169.254.169.254 (IPv4-compatible), which is a link-local address');
      expect(refusedAddress('::a9fe:a9fe', rules)).toBe('embeds 169.254.169.254 (IPv4-compatible), which is a link-local address');
    }
    expect(literalProblem(new URL('http://[::ffff:127.0.0.1]:8080/x'), local)).toBeUndefined();
    expect(literalProblem(new URL('http://hooks.example.com/x'), strict)).toBeUndefined();
  });

  it.each(['127.1', '0x7f.1', '2130706433', '0177.0.0.1', 'localhost', '', '1.2.3.4%eth0', '::ffff:1.2.3', '[::1'])('%j is no IP address', (address) => {
    expect(classifyAddress(address)).toBeUndefined();
    expect(refusedAddress(address, local)).toBe('is not an IP address');
  });

  // URLs as partners write them: WHATWG URL normalises IPv4 spellings and IPv6 forms, refuses zone ids.
  it.each<[string, string | undefined, string]>([
    ['http://[::127.0.0.1]/', '::7f00:1', 'loopback'],
    ['http://[::7f00:1]/', '::7f00:1', 'loopback'],
    ['http://[::a9fe:a9fe]/', '::a9fe:a9fe', 'link-local'],
    ['http://[::10.0.0.1]/', '::a00:1', 'private'],
    ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe', 'link-local'],
    ['http://[64:ff9b::7f00:1]/', '64:ff9b::7f00:1', 'loopback'],
    ['http://[2002:7f00:1::1]/', '2002:7f00:1::1', 'loopback'],
    ['http://[64:ff9b::a9fe:a9fe]/', '64:ff9b::a9fe:a9fe', 'link-local'],
    ['http://[64:ff9b:1::a9fe:a9fe]/', '64:ff9b:1::a9fe:a9fe', 'local-use NAT64'],
    ['http://[2002:a9fe:a9fe::]/', '2002:a9fe:a9fe::', 'link-local'],
    ['http://[64:ff9b::808:808]/', undefined, 'public'],
    ['http://[2002:808:808::]/', undefined, 'public'],
    ['http://[2001::1]/', '2001::1', 'Teredo'],
    ['http://[0:0:0:0:0:ffff:7f00:1]/', '::ffff:7f00:1', 'loopback'],
    ['http://[fd00:ec2::254]/', 'fd00:ec2::254', 'unique-local'],
    ['http://169.254.169.254/latest/meta-data', '169.254.169.254', 'link-local'],
    ['http://10.0.0.1/', '10.0.0.1', 'private'],
    ['http://2130706433/', '127.0.0.1', 'loopback'],
    ['http://0x7f000001/', '127.0.0.1', 'loopback'],
    ['http://0x7f.1/', '127.0.0.1', 'loopback'],
    ['http://0177.0.0.1/', '127.0.0.1', 'loopback'],
    ['http://127.1/', '127.0.0.1', 'loopback'],
    ['http://127.0.0.1./', '127.0.0.1', 'loopback'],
    ['http://%31%32%37.0.0.1/', '127.0.0.1', 'loopback'],
    ['http://0xa9.0xfe.0xa9.0xfe/', '169.254.169.254', 'link-local'],
    ['http://2852039166/', '169.254.169.254', 'link-local'],
    ['http://0/', '0.0.0.0', 'unspecified'],
    ['http://[::]/', '::', 'unspecified'],
    ['http://[::1]:8080/', '::1', 'loopback'],
    ['http://127.0.0.1:9/', '127.0.0.1', 'loopback'],
    ['http://8.8.8.8/', undefined, 'public'],
    ['http://[2606:4700::1111]/', undefined, 'public'],
    ['http://[::ffff:8.8.8.8]/', undefined, 'public'],
    ['http://hooks.example.com/', undefined, 'a name (judged once resolved)'],
  ])('%s: host %s, %s', (url, host, kind) => {
    const strictProblems = urlProblems(url, { ...strict, allowHttp: true });
    const localProblems = urlProblems(url, local);
    if (host === undefined) {
      expect([strictProblems, localProblems]).toEqual([[], []]);
      return;
    }
    const refused = [expect.stringMatching(new RegExp(`^must not point at a private address: ${host.replace(/\./g, '\\.')} (is|embeds .*which is) an? ${kind} address`))];
    expect(strictProblems).toEqual(refused);
    // Loopback in local mode: as itself or IPv4-mapped only.
    const hostLoopback = kind === 'loopback' && (/^[\d.]+$/.test(host) || host === '::1' || host.startsWith('::ffff:7f'));
    expect(localProblems).toEqual(hostLoopback ? [] : refused);
  });

  it('refuses URLs with an IPv6 zone id: WHATWG URL has no syntax for one', () => {
    expect(urlProblems('http://[fe80::1%25eth0]/', local)).toEqual(['must be an absolute URL']);
    expect(urlProblems('http://[::1%25lo]/', local)).toEqual(['must be an absolute URL']);
  });

  it('refuses other schemes, credentials, fragments and long URLs; http only where allowed', () => {
    expect(urlProblems('http://hooks.example.com/x', strict)).toEqual(['must use https']);
    expect(urlProblems('http://hooks.example.com/x', { ...strict, allowHttp: true })).toEqual([]);
    expect(urlProblems('https://u:p@hooks.example.com/x', strict)).toEqual(['must not contain credentials']);
    expect(urlProblems('https://hooks.example.com/x#y', strict)).toEqual(['must not contain a fragment']);
    expect(urlProblems(`https://hooks.example.com/${'a'.repeat(2100)}`, strict)).toEqual(['must be at most 2048 characters']);
    expect(urlProblems('not a url', strict)).toEqual(['must be an absolute URL']);
  });

  it('judges the addresses a name resolves to: localhost is loopback, allowed in local mode only', async () => {
    expect(await hostProblem('localhost', strict)).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), which is a loopback address$/);
    expect(await hostProblem('localhost', local)).toBeUndefined();
    expect(await hostProblem('::ffff:169.254.169.254', local)).toBe('::ffff:169.254.169.254 embeds 169.254.169.254 (IPv4-mapped), which is a link-local address');
    expect(await hostProblem('127.0.0.1', local)).toBeUndefined();
  });

  it('refuses a connection in the lookup, before any socket, when a name resolves to an address not allowed', async () => {
    const lookup = (rules: typeof strict, host: string) =>
      new Promise<{ err: Error | null; addresses: unknown }>((resolve) => checkedLookup(rules)(host, { all: true }, (err, addresses) => resolve({ err, addresses })));
    const refused = await lookup(strict, 'localhost');
    expect(refused.err).toBeInstanceOf(RefusedTargetError);
    expect(refused.err!.message).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), which is a loopback address$/);
    expect(refused.addresses).toEqual([]);
    const allowed = await lookup(local, 'localhost');
    expect(allowed.err).toBeNull();
    expect(allowed.addresses).toEqual(expect.arrayContaining([expect.objectContaining({ address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/) })]));
  });

  it('reads WEBHOOK_ALLOW_LOOPBACK_TARGETS (default off); the old WEBHOOK_ALLOW_PRIVATE_TARGETS fails the start naming the new one', () => {
    expect(new EnvReader({}).done({ v: readAllowLoopbackTargets(new EnvReader({})) }).v).toBe(false);
    const on = new EnvReader({ WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'true' });
    expect(on.done({ v: readAllowLoopbackTargets(on) }).v).toBe(true);
    for (const value of ['true', 'false']) {
      const old = new EnvReader({ WEBHOOK_ALLOW_PRIVATE_TARGETS: value, WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'true' });
      readAllowLoopbackTargets(old);
      expect(() => old.done({})).toThrow(ConfigError);
      expect(() => old.done({})).toThrow(/WEBHOOK_ALLOW_PRIVATE_TARGETS is no longer read: set WEBHOOK_ALLOW_LOOPBACK_TARGETS instead/);
    }
  });
});

describe('a loopback target refused', () => {
  it('points at partner listen where loopback is not allowed (and only there, only for loopback)', () => {
    const strict = { allowHttp: true, allowLoopback: false, allowedPorts: anyPort };
    expect(urlProblems('http://127.0.0.1:3000/hooks', strict)).toEqual([
      'must not point at a private address: 127.0.0.1 is a loopback address; to receive events on your own machine, use `partner listen --forward-to <url>`',
    ]);
    expect(privateAddressProblem('10.0.0.1 is a private address', { allowLoopback: false })).toBe('must not point at a private address: 10.0.0.1 is a private address');
  });
});

describe('allowed target ports (WEBHOOK_ALLOWED_PORTS)', () => {
  const ports = [443, 8443];
  const strict = { allowHttp: true, allowLoopback: false, allowedPorts: ports };
  const local = { allowHttp: true, allowLoopback: true, allowedPorts: ports };
  const refused = (port: number) => `must use one of the ports 443, 8443 (port ${port} is not allowed)`;

  it('reads a list of TCP ports, 443 and 8443 by default; anything else fails the start naming the setting', () => {
    const read = (v?: string) => {
      const env = new EnvReader(v === undefined ? {} : { WEBHOOK_ALLOWED_PORTS: v });
      return env.done({ v: readAllowedPorts(env) }).v;
    };
    expect(read()).toEqual([443, 8443]);
    expect(read('8443, 443,80,443')).toEqual([80, 443, 8443]);
    for (const bad of ['0', '65536', 'https', '443;8443', '4.43', ',']) {
      expect(() => read(bad), bad).toThrow(/WEBHOOK_ALLOWED_PORTS must be a comma-separated list of TCP ports \(1-65535\)/);
    }
  });

  it("judges the URL's port: written, or its scheme's (443; 80 for http)", () => {
    expect(targetPort(new URL('https://hooks.example.com/'))).toBe(443);
    expect(targetPort(new URL('http://hooks.example.com/'))).toBe(80);
    expect(targetPort(new URL('https://hooks.example.com:443/'))).toBe(443);
    expect(targetPort(new URL('http://hooks.example.com:8443/'))).toBe(8443);
    expect(portProblem(new URL('https://hooks.example.com/x'), strict)).toBeUndefined();
    expect(portProblem(new URL('https://hooks.example.com:8443/x'), strict)).toBeUndefined();
    expect(portProblem(new URL('https://hooks.example.com:8080/x'), strict)).toBe(refused(8080));
    expect(portProblem(new URL('http://hooks.example.com/x'), strict)).toBe('must use one of the ports 443, 8443 (http without a port uses 80)');
    expect(portProblem(new URL('https://hooks.example.com:80/x'), { allowedPorts: [443] })).toBe('must use port 443 (port 80 is not allowed)');
    expect(portProblem(new URL('http://hooks.example.com/x'), { allowedPorts: [80, 443] })).toBeUndefined();
  });

  it('refuses a port not allowed at registration, beside the other problems; a loopback target where loopback is allowed may use any', () => {
    expect(urlProblems('https://hooks.example.com:8080/x', strict)).toEqual([refused(8080)]);
    expect(urlProblems('https://8.8.8.8:5432/x', local)).toEqual([refused(5432)]);
    expect(urlProblems('https://[2606:4700::1111]:4222/x', local)).toEqual([refused(4222)]);
    expect(urlProblems('https://u:p@hooks.example.com:8080/x', strict)).toEqual(['must not contain credentials', refused(8080)]);
    expect(urlProblems('http://127.0.0.1:3000/x', strict)).toEqual([expect.stringMatching(/^must not point at a private address: 127\.0\.0\.1 is a loopback address/), refused(3000)]);
    expect(urlProblems('http://127.0.0.1:3000/x', local)).toEqual([]);
    expect(urlProblems('http://[::1]:3000/x', local)).toEqual([]);
    expect(urlProblems('http://[::ffff:127.0.0.1]:3000/x', local)).toEqual([]);
    // 127/8 embedded otherwise is not this host's loopback: refused as before, and its port too.
    expect(urlProblems('http://[64:ff9b::7f00:1]:3000/x', local)).toEqual([expect.stringMatching(/^must not point at a private address: 64:ff9b::7f00:1 embeds 127\.0\.0\.1 \(NAT64\)/), refused(3000)]);
  });

  it('judges a name where loopback is allowed once resolved: any port only for this host\'s loopback', async () => {
    expect(await targetProblems('http://localhost:3000/x', local)).toEqual([]);
    // The form first (the port of a name is part of it where loopback is not allowed), then the resolution.
    expect(await targetProblems('http://localhost:3000/x', strict)).toEqual([refused(3000)]);
    expect(await targetProblems('https://localhost:8443/x', strict)).toEqual([expect.stringMatching(/^must not point at a private address: localhost resolves to/)]);
    expect(await targetProblems('https://8.8.8.8:8443/x', strict)).toEqual([]);
    expect(await targetProblems('https://8.8.8.8:8080/x', local)).toEqual([refused(8080)]);
  });

  it('at delivery, a lookup for a port not allowed connects to this host\'s loopback only', async () => {
    const lookup = (host: string) =>
      new Promise<{ err: Error | null; addresses: unknown }>((resolve) =>
        checkedLookup(local, { portRefusal: refused(3000) })(host, { all: true }, (err, addresses) => resolve({ err, addresses })),
      );
    const ok = await lookup('localhost');
    expect(ok.err).toBeNull();
    expect(ok.addresses).toEqual(expect.arrayContaining([expect.objectContaining({ address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/) })]));
  });
});
