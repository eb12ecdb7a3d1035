// Runs a program to its end with no input and collects what it printed: the way the system tests
// run the CLIs, the admin script and the docs' shell blocks.
import { spawn } from 'node:child_process';

export interface ProcessRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runProcess(command: string, args: string[], opts: { cwd?: string; env: NodeJS.ProcessEnv }): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
