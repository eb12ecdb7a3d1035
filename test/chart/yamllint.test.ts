// yamllint over the plain YAML of charts/ and deploy/ (values files, Chart.yaml, kind and infra
// configs); the chart's templates are Go templates and are checked by rendering them instead.
// CI installs yamllint (apt-get install -y yamllint); without it this check fails rather than skip.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ROOT } from './helm.js';

const run = promisify(execFile);

function yamllintVersion(): string | undefined {
  try {
    return execFileSync('yamllint', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

it('yamllint finds nothing in charts/ and deploy/', async () => {
  const version = yamllintVersion();
  if (!version) {
    throw new Error('yamllint is not installed. Install it (Debian/Ubuntu: apt-get install -y yamllint; or pip install yamllint) and rerun.');
  }
  try {
    await run('yamllint', ['-c', 'deploy/.yamllint.yaml', '-f', 'parsable', '--strict', 'charts', 'deploy'], { cwd: ROOT });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    expect.fail(`yamllint (${version}) reported:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
});
