#!/usr/bin/env node
// The admin CLI: `npm run -s admin -- <group> <command> [flags]`. Each group belongs to the service
// that owns its data (client/principal/key → auth; product/policy → policy). Reads .local/dev.env
// (written by `npm start`) for local defaults; variables already set in the environment win.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const devEnv = `${root}.local/dev.env`;
if (existsSync(devEnv)) {
  for (const line of readFileSync(devEnv, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m && process.env[m[1]] === undefined) process.env[m[1]] = m[2];
  }
}

const GROUPS = {
  client: 'auth',
  principal: 'auth',
  key: 'auth',
  product: 'policy',
  policy: 'policy',
};

const [group, ...rest] = process.argv.slice(2);
const service = GROUPS[group];
if (!service) {
  process.stderr.write(
    `usage: npm run -s admin -- <group> <command> [flags]\ngroups: ${Object.keys(GROUPS).join(', ')}\n` +
      (group ? `unknown group: ${group}\n` : ''),
  );
  process.exit(2);
}
const modulePath = `${root}services/${service}/dist/admin.js`;
if (!existsSync(modulePath)) {
  process.stderr.write(`error: ${modulePath} is not built; run \`npm run build\` first\n`);
  process.exit(1);
}
const { groups } = await import(modulePath);
const { runGroup } = await import(`${root}services/shared/dist/cli.js`);
process.exitCode = await runGroup(group, groups[group], rest);
