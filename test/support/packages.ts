// The SDK and CLI packed as a partner gets them (`npm pack` of sdk/client and sdk/cli), for tests that
// install them into an empty directory offline. The SDK's one outside dependency, jose, is packed
// beside them from this checkout's node_modules: a partner's install fetches it from the registry,
// an offline install here must not depend on what the machine's npm cache happens to hold.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './stack.js';

const run = promisify(execFile);
export const NPM_ENV = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

export interface PartnerTarballs {
  sdk: string;
  cli: string;
  /** jose, the SDK's dependency (the CLI bundles its own copy). */
  jose: string;
}

/** Packs the SDK, the CLI (its prepack bundles the SDK and jose) and jose into `dest`. */
export async function packPartnerPackages(dest: string): Promise<PartnerTarballs> {
  const { stdout } = await run('npm', ['pack', '--json', '-w', 'sdk/client', '-w', 'sdk/cli', '--pack-destination', dest], { cwd: ROOT, env: NPM_ENV });
  const packed = JSON.parse(stdout) as { name: string; filename: string }[];
  const file = (name: string) => join(dest, packed.find((p) => p.name === name)!.filename);
  const jose = JSON.parse((await run('npm', ['pack', '--json', '--pack-destination', dest, join(ROOT, 'node_modules/jose')], { cwd: dest, env: NPM_ENV })).stdout) as { filename: string }[];
  return { sdk: file('@partner/sdk'), cli: file('@partner/cli'), jose: join(dest, jose[0]!.filename) };
}
