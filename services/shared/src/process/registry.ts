// The registry of processes (services/processes.json) as the processes read it: which gRPC services a
// process calls (process/clients.ts), and the local defaults of every config.ts: each process's own
// ports and the address of each gRPC server it dials (<NAME>_GRPC_ADDR), so a port is written once, in
// the registry. Read once, at run time, relative to this package (the image copies the file beside the
// services). ProcessEntry is the one type of an entry: scripts/lib/processes.mjs (the scripts' and
// tests' reader) takes it from here. Imports nothing of the project.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The listeners a process may have: a public HTTP port, a gRPC port, the ops port (/livez, /metrics). */
export type PortRole = 'http' | 'grpc' | 'ops';

/** One process of services/processes.json (its `$comment` says what each field is for). */
export interface ProcessEntry {
  /** Its workspace package, e.g. services/events. */
  package: string;
  /** Its entry point in the package, e.g. dist/main.js. */
  entry: string;
  /** The database schema it uses, or null. */
  schema: string | null;
  /** false: it uses a schema another process owns and migrates. */
  migrates?: boolean;
  /** Its listeners' local default ports. */
  ports: Partial<Record<PortRole, number>>;
  /** The variable that sets each port. */
  portEnv: Partial<Record<PortRole, string>>;
  /** gRPC services it dials (each at <NAME>_GRPC_ADDR). */
  calls: string[];
  /** HTTP listeners of other processes it reaches. */
  callsHttp: string[];
  /** It sends webhooks to partners' endpoints (egress to the internet). */
  webhookEgress?: boolean;
  /** The natsNames() subjects and streams it publishes to, subscribes to or consumes. */
  nats: { publishes: string[]; subscribes: string[]; consumes: string[] };
  /** ANSI colour of its lines in npm start's log. */
  logColor: number;
}

export const REGISTRY_PATH = fileURLToPath(new URL('../../../processes.json', import.meta.url));

/** The host of the local defaults: every process on one machine (npm start, the tests). */
export const LOCAL_HOST = '127.0.0.1';

let entries: Record<string, ProcessEntry> | undefined;

/** A process's entry in the registry; an unknown name fails the start. */
export function processEntry(name: string): ProcessEntry {
  entries ??= (JSON.parse(readFileSync(REGISTRY_PATH, 'utf8')) as { processes: Record<string, ProcessEntry> }).processes;
  const entry = entries[name];
  if (!entry) throw new Error(`${name} is not a process of ${REGISTRY_PATH}`);
  return entry;
}

/** A process's default port for a role (the registry's `ports`); a process without that listener fails. */
export function defaultPort(name: string, role: PortRole): number {
  const port = processEntry(name).ports[role];
  if (port === undefined) throw new Error(`${name} has no ${role} port in ${REGISTRY_PATH}`);
  return port;
}

/** Where a process's listener is reached by default (host:port): e.g. a gRPC server's <NAME>_GRPC_ADDR. */
export const defaultAddress = (name: string, role: PortRole = 'grpc'): string => `${LOCAL_HOST}:${defaultPort(name, role)}`;

/** A process's HTTP listener as a URL, by default: e.g. the gateway's {base_url}, the token server's {auth_url}. */
export const defaultUrl = (name: string): string => `http://${defaultAddress(name, 'http')}`;
