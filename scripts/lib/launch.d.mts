// Types of launch.mjs for the TypeScript that uses it (the test stack).
import type { ChildProcess } from 'node:child_process';

export declare const ROOT: string;
export declare function serviceEntry(name: string): string;
export declare function serviceScript(name: string): string;

export declare class ServiceProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly tail: string[];
  readonly errors: string[];
  readonly stderr: string;
  readonly exited: Promise<number | string | null>;
  /** The ports of its {"ready":true} line; rejects when it exits first. */
  readonly announced: Promise<Record<string, number>>;
  readonly pid: number | undefined;
  readonly alive: boolean;
  kill(signal?: NodeJS.Signals): void;
  stop(graceMs?: number): Promise<{ killed: boolean }>;
}

export declare function launch(opts: {
  name: string;
  env: Record<string, string | undefined>;
  command?: string;
  args?: string[];
  nodeArgs?: string[];
  stdout?: 'pipe' | 'inherit';
  cwd?: string;
  detached?: boolean;
  onLine?: (line: string) => void;
  onStderr?: (text: string) => void;
}): ServiceProcess;
