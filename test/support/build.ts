// Vitest globalSetup: builds the workspace (proto types + tsc -b, incremental) before any test runs,
// so a system test that starts a service from dist/ (spawnService, the admin CLI, the partner CLI)
// always runs the source as it is now, whichever way vitest was started: `npm test`, one file
// (`npx vitest run test/cli.test.ts`), or one test (`-t`).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const started = Date.now();
  execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '-s', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  process.stderr.write(`build for the tests: ${Date.now() - started} ms\n`);
}
