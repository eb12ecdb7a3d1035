#!/usr/bin/env node
// The admin CLI: `npm run -s admin -- <group> <command> [flags]`; `--help` (or `help`, or no
// arguments) at any level prints what there is, from the commands' own declarations. Each group
// belongs to the service that owns its data (client/principal/key → auth; product/policy → policy;
// clearance → submission; `key rotate --receipts` → the submission service's receipt keys,
// services/submission/dist/receipts/admin.js). Reads .local/dev.env (written by `npm start`) for local
// defaults; variables already set in the environment win.
import { fileURLToPath } from 'node:url';
import { readDevEnv } from './lib/dev-env.mjs';
import { loadAdminGroups } from './lib/admin-groups.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
for (const [name, value] of Object.entries(readDevEnv())) if (process.env[name] === undefined) process.env[name] = value;

const argv = process.argv.slice(2);
let loaded;
try {
  loaded = await loadAdminGroups(root, argv);
} catch (err) {
  process.stderr.write(`error: ${err.message}\n`);
  process.exit(1);
}
const { groups, receiptKeys, runAdmin } = loaded;
// Receipt keys are the submission service's: `key rotate --receipts` goes to its receipts module.
process.exitCode = await runAdmin(receiptKeys ? { ...groups, key: receiptKeys } : groups, argv);
