// The registry of processes (services/processes.json) as the process bootstrap reads it: which gRPC
// services a process calls. Read once, at run time, relative to this package (the image copies the
// file beside the services), so adding a call is one edit of the registry.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface ProcessEntry {
  package: string;
  entry: string;
  schema: string | null;
  migrates?: boolean;
  ports: Record<string, number>;
  portEnv: Record<string, string>;
  /** gRPC services it dials (each at <NAME>_GRPC_ADDR). */
  calls: string[];
  callsHttp: string[];
  nats: { publishes: string[]; subscribes: string[]; consumes: string[] };
}

export const REGISTRY_PATH = fileURLToPath(new URL('../../../processes.json', import.meta.url));

let entries: Record<string, ProcessEntry> | undefined;

/** A process's entry in the registry; an unknown name fails the start. */
export function processEntry(name: string): ProcessEntry {
  entries ??= (JSON.parse(readFileSync(REGISTRY_PATH, 'utf8')) as { processes: Record<string, ProcessEntry> }).processes;
  const entry = entries[name];
  if (!entry) throw new Error(`${name} is not a process of ${REGISTRY_PATH}`);
  return entry;
}
