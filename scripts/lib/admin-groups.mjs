// The admin CLI's groups, from each service's built admin module (services/<service>/dist/admin.js),
// in the order the overview lists them; and the submission service's receipt-key group, which
// `key rotate --receipts` goes to. scripts/admin.mjs runs them; test/admin-cli.test.ts walks them to
// check that every command answers --help.
import { existsSync } from 'node:fs';

const SERVICES = ['auth', 'policy', 'submission'];

/** Imports the built modules; throws naming the first one not built. */
export async function loadAdminGroups(root) {
  const path = (p) => {
    const file = `${root}${p}`;
    if (!existsSync(file)) throw new Error(`${file} is not built; run \`npm run build\` first`);
    return file;
  };
  const groups = {};
  for (const service of SERVICES) Object.assign(groups, (await import(path(`services/${service}/dist/admin.js`))).groups);
  const receiptKeys = (await import(path('services/submission/dist/receipts/admin.js'))).groups.key;
  const { runAdmin } = await import(path('services/shared/dist/process/admin-cli.js'));
  return { groups, receiptKeys, runAdmin };
}
