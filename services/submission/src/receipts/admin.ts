// `npm run -s admin -- key rotate --receipts`: makes a new receipt key current and retires the one
// before (scripts/admin.mjs routes the --receipts form of the auth service's `key` group here). The
// retired key's public half stays in /.well-known/receipt-keys.json with the time range it signed.
import { fileURLToPath } from 'node:url';
import { parseKekList } from '@partner/shared/crypto/sealed-keys';
import { command, UsageError, withAdminPool, type CommandGroup } from '@partner/shared/process/admin-cli';
import { EnvReader } from '@partner/shared/config/env';
import { rotateReceiptKey } from './keys.js';

const SERVICE = { name: 'submission', schema: 'submission', migrationsDir: fileURLToPath(new URL('../../migrations/', import.meta.url)) };

export const key: CommandGroup = {
  summary: 'the receipt-signing key: rotate it',
  commands: {
    rotate: command({
      usage: 'key rotate --receipts',
      summary:
        'make a new receipt-signing key current and retire the one before; both stay in /.well-known/receipt-keys.json with the time range each signed (needs AUTH_KEY_ENCRYPTION_KEY)',
      options: { receipts: { type: 'boolean', help: 'the receipt-signing key (required: this module rotates nothing else)' } },
      examples: ['key rotate --receipts'],
      run: async ({ values }) => {
        if (!values.receipts) throw new UsageError('this module rotates receipt keys only: key rotate --receipts');
        const env = new EnvReader();
        const kekList = env.str('AUTH_KEY_ENCRYPTION_KEY', { doc: 'the key-encryption key the submission service uses' });
        env.done({});
        // While the KEK rotates the variable lists several, newest first: new keys are sealed under the first.
        const keks = parseKekList(kekList, (message) => {
          throw new UsageError(`AUTH_KEY_ENCRYPTION_KEY: ${message}`);
        });
        return withAdminPool(SERVICE, async (pool) => ({ receipts: true, ...(await rotateReceiptKey(pool, keks[0]!)) }));
      },
    }),
  },
};

export const groups = { key };
