// Types of processes.mjs for the TypeScript that uses it (the test stack, the chart and registry tests).
// An entry's type is the one the services read the registry with.
import type { PortRole, ProcessEntry } from '@partner/shared/process/registry';
export type { PortRole, ProcessEntry };

export declare const REGISTRY_PATH: string;
export declare const PROCESSES: Readonly<Record<string, ProcessEntry>>;
export declare function processNames(): string[];
export declare function processOf(name: string): ProcessEntry;
export declare function entryOf(name: string): string;
export declare function grpcServers(): string[];
export declare function grpcAddrVar(name: string): string;
export declare function addressEnv(name: string, ports: Partial<Record<PortRole, number>>, host?: string): Record<string, string>;
export declare function withSchema(): string[];
export declare function schemaOwners(): string[];
export declare function callersOf(name: string, opts?: { http?: boolean }): string[];
export declare function dependenciesOf(name: string): string[];
export declare function startWaves(names?: string[]): string[][];
export declare function portVariables(): string[];
export declare function servicePackages(): string[];
/** GRPC_CALL_STREAMS and DB_BATCH_MAX_SIZE as `env` sets them (the hot paths' off-switches). */
export declare function hotPathSwitches(env?: Record<string, string | undefined>): Record<string, string>;
