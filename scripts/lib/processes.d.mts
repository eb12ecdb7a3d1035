// Types of processes.mjs for the TypeScript that uses it (the test stack, the chart and registry tests).
export type PortRole = 'http' | 'grpc' | 'ops';
export interface ProcessEntry {
  package: string;
  entry: string;
  schema: string | null;
  migrates?: boolean;
  ports: Partial<Record<PortRole, number>>;
  portEnv: Partial<Record<PortRole, string>>;
  calls: string[];
  callsHttp: string[];
  webhookEgress?: boolean;
  nats: { publishes: string[]; subscribes: string[]; consumes: string[] };
  logColor: number;
}

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
