#!/usr/bin/env node
// The CLI's tarball carries the SDK it was built with (bundleDependencies in sdk/cli/package.json), so
// `npm install partner-cli-<v>.tgz` needs nothing else and never asks a registry for @partner/sdk (a
// scope no one we control holds on the public registry: README, "Packages"). npm bundles only a real
// directory under the package's own node_modules, and a workspace's SDK is a hoisted symlink, so the
// CLI's prepack copies the SDK's shipped files there (dist, src without tests, package.json,
// CHANGELOG.md) and the SDK's dependencies (jose) and its postpack (`--clean`) removes them again, leaving the workspace as it was.
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const sdk = `${root}sdk/client/`;
const target = `${root}sdk/cli/node_modules/@partner/sdk/`;

rmSync(`${root}sdk/cli/node_modules`, { recursive: true, force: true });
if (!process.argv.includes('--clean')) {
  if (!existsSync(`${sdk}dist/index.js`)) {
    process.stderr.write('bundle-sdk: sdk/client is not built; run npm run build first\n');
    process.exit(1);
  }
  for (const f of ['package.json', 'CHANGELOG.md', 'README.md', 'dist']) if (existsSync(sdk + f)) cpSync(sdk + f, target + f, { recursive: true });
  cpSync(`${sdk}src`, `${target}src`, { recursive: true, filter: (src) => !src.endsWith('.test.ts') });
  // And the SDK's one dependency (jose, itself without dependencies), so the tarball needs no registry at all.
  for (const dep of Object.keys(JSON.parse(readFileSync(`${sdk}package.json`, 'utf8')).dependencies ?? {})) {
    cpSync(`${root}node_modules/${dep}`, `${root}sdk/cli/node_modules/${dep}`, { recursive: true });
  }
  process.stderr.write(`bundle-sdk: ${readdirSync(`${target}dist`).length} files of dist/ bundled into the CLI's package\n`);
}
