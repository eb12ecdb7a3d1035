#!/usr/bin/env node
// The admin CLI: `npm run -s admin -- <group> <command> [flags]`. Each group belongs to the service
// that owns its data (client/principal/key → auth; product/policy → policy; clearance → submission; `key rotate --receipts`
// → the submission service's receipt keys, services/submission/dist/receipts/admin.js). Reads .local/dev.env
// (written by `npm start`) for local defaults; variables already set in the environment win.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readDevEnv } from './lib/dev-env.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
for (const [name, value] of Object.entries(readDevEnv())) if (process.env[name] === undefined) process.env[name] = value;

const GROUPS = {
  client: 'auth',
  principal: 'auth',
  key: 'auth',
  product: 'policy',
  policy: 'policy',
  clearance: 'submission',
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
// Receipt keys are the submission service's: `key rotate --receipts` goes to its receipts module.
const receiptKeys = group === 'key' && rest.includes('--receipts');
const modulePath = receiptKeys ? `${root}services/submission/dist/receipts/admin.js` : `${root}services/${service}/dist/admin.js`;
if (!existsSync(modulePath)) {
  process.stderr.write(`error: ${modulePath} is not built; run \`npm run build\` first\n`);
  process.exit(1);
}
const { groups } = await import(modulePath);
const { runGroup } = await import(`${root}services/shared/dist/process/admin-cli.js`);
process.exitCode = await runGroup(group, groups[group], rest);
