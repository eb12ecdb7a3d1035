// services/processes.json, the one list of processes, against what else states the same facts: the
// chart's values (services.<name>: ports, dials, database, migrate, script, webhookEgress, nats) and
// the manifests it renders, each service's own config defaults (ports, the addresses it dials; taken
// from the registry, never written again in a config.ts), the
// built entry points, the NATS names, and the test stack's in-process starters (whose config readers
// it calls with an empty environment).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { EnvReader } from '@partner/shared/config/env';
import { natsNames } from '@partner/shared/nats/client';
import {
  PROCESSES,
  entryOf,
  grpcAddrVar,
  grpcServers,
  processNames,
  schemaOwners,
  startWaves,
  type ProcessEntry,
} from '../scripts/lib/processes.mjs';
import { byKind, CHART, named, render, RELEASE, ROOT, spec, type K8sObject } from './chart/helm.js';
import { IN_PROCESS } from './support/stack.js';

/** One entry of the chart's `services` (values.yaml), as far as the registry states the same. */
interface ChartService {
  http?: { port: number; portEnv: string };
  grpc?: { port: number };
  opsPort: number;
  database?: { poolMax: number; writerLockConnections?: number };
  migrate?: boolean;
  nats?: boolean;
  dials?: string[];
  dialsHttp?: string[];
  script?: string;
  webhookEgress?: boolean;
}

const values = parse(readFileSync(`${ROOT}${CHART}/values.yaml`, 'utf8')) as { services: Record<string, ChartService> };
const names = processNames();
const entries = Object.entries(PROCESSES) as [string, ProcessEntry][];

type Env = { name: string; value?: string; valueFrom?: unknown }[];
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are checked field by field
const containerOf = (o: K8sObject): any => spec(o).template.spec.containers[0];
const envOf = (o: K8sObject) => Object.fromEntries((containerOf(o).env as Env).map((e) => [e.name, e]));

let objects: K8sObject[];
beforeAll(async () => {
  objects = await render([]);
});

describe('the registry', () => {
  it('starts every process after those it calls and after the owner of a schema it shares', () => {
    for (const [name, p] of entries) {
      const before = names.slice(0, names.indexOf(name));
      for (const callee of [...p.calls, ...p.callsHttp]) expect(before, `${name} calls ${callee}`).toContain(callee);
      if (p.migrates === false) expect(before, `${name} uses ${p.schema}`).toContain(schemaOwners().find((o) => PROCESSES[o]!.schema === p.schema));
    }
    expect(startWaves().flat().sort()).toEqual([...names].sort());
  });

  it('calls only gRPC servers, and has one owner per schema', () => {
    for (const [name, p] of entries) for (const callee of p.calls) expect(grpcServers(), `${name} calls ${callee}`).toContain(callee);
    const schemas = schemaOwners().map((n) => PROCESSES[n]!.schema);
    expect(new Set(schemas).size).toBe(schemas.length);
    for (const [name, p] of entries) if (p.schema !== null) expect(schemas, name).toContain(p.schema);
  });

  it('names built entry points of packages that exist, and ports and their variables in pairs', () => {
    for (const [name, p] of entries) {
      expect(existsSync(`${ROOT}${p.package}/package.json`), p.package).toBe(true);
      expect(existsSync(`${ROOT}${entryOf(name)}`), entryOf(name)).toBe(true);
      expect(Object.keys(p.portEnv).sort(), name).toEqual(Object.keys(p.ports).sort());
      if (p.portEnv.grpc) expect(p.portEnv.grpc).toBe(`${name.toUpperCase()}_GRPC_PORT`);
      expect(p.portEnv.ops).toBe('OPS_PORT');
    }
    const ports = entries.flatMap(([, p]) => Object.values(p.ports));
    expect(new Set(ports).size, 'no two listeners share a port').toBe(ports.length);
  });

  it('names only the NATS subjects and streams of natsNames()', () => {
    const known = Object.keys(natsNames('x'));
    for (const [name, p] of entries) {
      for (const subject of [...p.nats.publishes, ...p.nats.subscribes, ...p.nats.consumes]) expect(known, `${name}: ${subject}`).toContain(subject);
    }
  });

  it('is what the test stack starts in-process', () => {
    expect(Object.keys(IN_PROCESS).sort()).toEqual([...names].sort());
  });
});

describe('the registry against the chart', () => {
  it('has one chart service per process', () => {
    expect(Object.keys(values.services).sort()).toEqual([...names].sort());
  });

  it.each(names)('%s: ports, calls, schema, migrations, entry point, NATS and webhook egress match its values', (name) => {
    const p = PROCESSES[name]!;
    const v = values.services[name]!;
    expect(v.http?.port, 'http').toBe(p.ports.http);
    expect(v.http?.portEnv, 'http portEnv').toBe(p.portEnv.http);
    expect(v.grpc?.port, 'grpc').toBe(p.ports.grpc);
    expect(v.opsPort, 'ops').toBe(p.ports.ops);
    expect(v.dials ?? [], 'calls = dials').toEqual(p.calls);
    expect(v.dialsHttp ?? [], 'callsHttp = dialsHttp').toEqual(p.callsHttp);
    expect(v.database !== undefined, 'schema = database (a pool)').toBe(p.schema !== null);
    expect(v.migrate ?? false, 'migrates = migrate').toBe(schemaOwners().includes(name));
    expect(v.script ?? `services/${name}/dist/main.js`, 'entry = script').toBe(entryOf(name));
    expect(v.webhookEgress ?? false, 'webhookEgress').toBe(p.webhookEgress ?? false);
    const usesNats = [...p.nats.publishes, ...p.nats.subscribes, ...p.nats.consumes].length > 0;
    expect(v.nats ?? false, 'nats').toBe(usesNats);
  });

  it.each(names)('%s: its rendered Deployment runs the entry point on the ports, with the addresses of what it calls', (name) => {
    const p = PROCESSES[name]!;
    const d = named(objects, 'Deployment', `${RELEASE}-${name}`);
    expect(d, 'a Deployment').toBeDefined();
    const c = containerOf(d!);
    expect(c.args.at(-1)).toBe(entryOf(name));
    const containerPorts = Object.fromEntries((c.ports as { name: string; containerPort: number }[]).map((x) => [x.name, x.containerPort]));
    expect(containerPorts).toEqual(p.ports);
    const env = envOf(d!);
    for (const [role, variable] of Object.entries(p.portEnv)) expect(env[variable]?.value, variable).toBe(String(p.ports[role as keyof typeof p.ports]));
    expect(Object.keys(env).filter((k) => k.endsWith('_GRPC_ADDR')).sort()).toEqual(p.calls.map(grpcAddrVar).sort());
    expect('DATABASE_URL' in env, 'DATABASE_URL').toBe(p.schema !== null);
    const egress = (spec(named(objects, 'NetworkPolicy', `${RELEASE}-${name}`)!).egress ?? []) as { to?: { ipBlock?: { cidr: string } }[] }[];
    expect(egress.some((r) => r.to?.some((t) => t.ipBlock?.cidr === '0.0.0.0/0')), 'egress to the internet').toBe(p.webhookEgress ?? false);
  });

  it('renders a migration Job for each schema owner and none for the others', () => {
    expect(byKind(objects, 'Job').map((j) => j.metadata.name).sort()).toEqual(schemaOwners().map((n) => `${RELEASE}-${n}-migrate`).sort());
  });
});

describe("the registry against the services' own config defaults", () => {
  // The variables without a default; everything else is left to the config readers.
  const env = () =>
    new EnvReader({ DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', AUTH_KEY_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') });
  it.each(names)("%s: listens by default on the registry's ports and dials the registry's callees there", (name) => {
    const p = PROCESSES[name]!;
    // The config reader the test stack starts it with (test/support/stack.ts IN_PROCESS).
    const config = IN_PROCESS[name]!.readConfig(env()) as { opsPort: number; grpcPort?: number; httpPort?: number; port?: number; grpc?: Record<string, string> };
    expect(config.opsPort, 'ops').toBe(p.ports.ops);
    expect(config.grpcPort, 'grpc').toBe(p.ports.grpc);
    expect(config.httpPort ?? config.port, 'http').toBe(p.ports.http);
    // The gRPC addresses it reads (<NAME>_GRPC_ADDR) default to the callees' local ports.
    const dials = config.grpc ?? {};
    expect(Object.keys(dials).sort()).toEqual([...p.calls].sort());
    for (const callee of p.calls) expect(dials[callee], callee).toBe(`127.0.0.1:${PROCESSES[callee]!.ports.grpc}`);
  });

  it('is where the defaults come from: no config.ts of a service writes a port of the registry or a local address', () => {
    const configs = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? (['node_modules', 'dist', 'generated'].includes(e.name) ? [] : configs(join(dir, e.name))) : e.name === 'config.ts' ? [join(dir, e.name)] : [],
      );
    const files = configs(`${ROOT}services`).filter((f) => !f.includes(join('services', 'shared', 'src')));
    expect(files.length, 'the config.ts of every process').toBeGreaterThanOrEqual(names.length);
    const ports = new Set(entries.flatMap(([, p]) => Object.values(p.ports)));
    const literals = files.flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/\b127\.0\.0\.1\b|\b\d{4,5}\b/g)]
        .filter((m) => m[0].includes('.') || ports.has(Number(m[0])))
        .map((m) => `${f.slice(ROOT.length)}: ${m[0]}`),
    );
    expect(literals).toEqual([]);
  });
});
