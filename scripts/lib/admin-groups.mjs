// The admin CLI's groups, from each service's built admin module (services/<service>/dist/admin.js),
// in the order the overview lists them; and the submission service's receipt-key group, which
// `key rotate --receipts` goes to. scripts/admin.mjs runs them; test/admin-cli.test.ts walks them to
// check that every command answers --help.
import { existsSync } from 'node:fs';

/**
 * The service whose admin module declares each group: a command loads that module alone (each one
 * loads its service's database and NATS code, about half a second of a CLI's start), the overview
 * and an unknown group all of them. test/admin-cli.test.ts checks it against the modules.
 */
export const GROUP_SERVICES = { client: 'auth', principal: 'auth', key: 'auth', product: 'policy', policy: 'policy', quote: 'policy', clearance: 'submission' };
/** The services with an admin module, in the overview's order. */
const SERVICES = [...new Set(Object.values(GROUP_SERVICES))];

/**
 * Imports the built modules that `argv` needs (all of them without argv); throws naming the first
 * one not built. `byService` keeps each module's groups apart.
 */
export async function loadAdminGroups(root, argv) {
  const path = (p) => {
    const file = `${root}${p}`;
    if (!existsSync(file)) throw new Error(`${file} is not built; run \`npm run build\` first`);
    return file;
  };
  const [group, ...rest] = argv ?? [];
  const receipts = group === 'key' && rest.includes('--receipts');
  const owner = argv ? GROUP_SERVICES[group] : undefined;
  const services = receipts ? [] : owner ? [owner] : SERVICES;
  const groups = {};
  const byService = {};
  for (const service of services) {
    byService[service] = (await import(path(`services/${service}/dist/admin.js`))).groups;
    Object.assign(groups, byService[service]);
  }
  const receiptKeys = !argv || receipts ? (await import(path('services/submission/dist/receipts/admin.js'))).groups.key : undefined;
  const { runAdmin } = await import(path('services/shared/dist/process/admin-cli.js'));
  return { groups, byService, receiptKeys, runAdmin };
}
