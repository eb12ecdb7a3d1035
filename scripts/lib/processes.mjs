// The reader of services/processes.json, the one list of what runs (docs/architecture.md, "The
// registry"): the start scripts, the test stack, the bench, the image smoke test, the chart tests and
// the lint configuration ask it which processes exist, in which order they start, what they run,
// which ports and variables they take and whom they call. Plain ESM so that .mjs scripts and .ts
// tests import the same file (types in processes.d.mts; an entry's type, ProcessEntry, is the one the
// services read the registry with). Names in, plain data out; nothing cached beyond the parsed file.
import { readFileSync } from 'node:fs';

/** The registry's path relative to the repository. */
export const REGISTRY_PATH = 'services/processes.json';

/**
 * The one type of an entry, shared with the services (services/shared/src/process/registry.ts).
 * @typedef {import('@partner/shared/process/registry').PortRole} PortRole
 * @typedef {import('@partner/shared/process/registry').ProcessEntry} ProcessEntry
 */

/** @type {Readonly<Record<string, ProcessEntry>>} */
export const PROCESSES = Object.freeze(JSON.parse(readFileSync(new URL(`../../${REGISTRY_PATH}`, import.meta.url), 'utf8')).processes);

/** Every process, in start order (a process starts after those it calls). */
export const processNames = () => Object.keys(PROCESSES);

/**
 * A process's entry, or an error naming the registry (a typo must not start nothing quietly).
 * @param {string} name
 * @returns {ProcessEntry}
 */
export function processOf(name) {
  const p = PROCESSES[name];
  if (!p) throw new Error(`${name} is not a process of ${REGISTRY_PATH} (${processNames().join(', ')})`);
  return p;
}

/**
 * Its entry point relative to the repository (and the image's workdir): services/<name>/dist/main.js,
 * or e.g. services/events/dist/dispatcher.js.
 * @param {string} name
 */
export const entryOf = (name) => `${processOf(name).package}/${processOf(name).entry}`;

/** The gRPC servers: the processes with a grpc port. */
export const grpcServers = () => processNames().filter((n) => PROCESSES[n].ports.grpc !== undefined);

/**
 * The variable a caller reads a gRPC server's address from: <NAME>_GRPC_ADDR.
 * @param {string} name
 */
export const grpcAddrVar = (name) => `${name.toUpperCase()}_GRPC_ADDR`;

/**
 * The address variables a process's announced (or chosen) ports give its callers:
 * { <NAME>_GRPC_ADDR: host:port } for a gRPC server, {} otherwise.
 * @param {string} name
 * @param {Partial<Record<PortRole, number>>} ports
 * @param {string} [host]
 * @returns {Record<string, string>}
 */
export function addressEnv(name, ports, host = '127.0.0.1') {
  return processOf(name).ports.grpc !== undefined && ports.grpc !== undefined ? { [grpcAddrVar(name)]: `${host}:${ports.grpc}` } : {};
}

/** The processes that use a database schema (their own or, like the dispatcher, one they share). */
export const withSchema = () => processNames().filter((n) => PROCESSES[n].schema !== null);

/** The processes that own and migrate a schema: one per schema. */
export const schemaOwners = () => withSchema().filter((n) => PROCESSES[n].migrates !== false);

/**
 * The processes that call this one, over gRPC (`calls`) or, with http: true, over HTTP (`callsHttp`).
 * @param {string} name
 * @param {{ http?: boolean }} [opts]
 */
export const callersOf = (name, { http = false } = {}) =>
  processNames().filter((n) => (http ? PROCESSES[n].callsHttp : PROCESSES[n].calls).includes(name));

/**
 * What must be up before this process starts: those it calls, and the owner of a schema it uses
 * without migrating it.
 * @param {string} name
 */
export function dependenciesOf(name) {
  const p = processOf(name);
  const owner = p.schema !== null && p.migrates === false ? schemaOwners().filter((n) => PROCESSES[n].schema === p.schema) : [];
  return [...new Set([...p.calls, ...p.callsHttp, ...owner])];
}

/**
 * The processes in waves that may start in parallel: each wave's processes depend only on earlier
 * waves' (a process listed in names whose dependencies are left out starts in the first wave it can).
 * @param {string[]} [names]
 * @returns {string[][]}
 */
export function startWaves(names = processNames()) {
  const waves = [];
  const started = new Set();
  let left = [...names];
  while (left.length > 0) {
    const wave = left.filter((n) => dependenciesOf(n).every((d) => started.has(d) || !names.includes(d)));
    if (wave.length === 0) throw new Error(`${REGISTRY_PATH}: a cycle among ${left.join(', ')}`);
    waves.push(wave);
    for (const n of wave) started.add(n);
    left = left.filter((n) => !started.has(n));
  }
  return waves;
}

/**
 * The port variables of every process (PORT, AUTH_GRPC_PORT, …, OPS_PORT), each once.
 * @returns {string[]}
 */
export const portVariables = () => [...new Set(processNames().flatMap((n) => Object.values(PROCESSES[n].portEnv)))];

/** The packages under services/ that hold processes (services/events holds two), by folder name. */
export const servicePackages = () => [...new Set(processNames().map((n) => PROCESSES[n].package.replace(/^services\//, '')))];

/**
 * The settings that switch a hot path to its second version (README "Tests"; .ci/run runs the
 * system tests once more with them), as this environment sets them: the test stack and the chaos
 * script pass them through to every service they start.
 * @param {Record<string, string | undefined>} env
 * @returns {Record<string, string>}
 */
export function hotPathSwitches(env = process.env) {
  return Object.fromEntries(['GRPC_CALL_STREAMS', 'DB_BATCH_MAX_SIZE'].flatMap((name) => (env[name] ? [[name, env[name]]] : [])));
}
