// A second checkout on the same machine (issue 35): each checkout's .local/dev.env holds its own
// key-encryption key, so a database whose signing keys another checkout sealed cannot start this one's
// auth service. `npm start` asks before it builds: does the database hold signing keys, and does a
// key of AUTH_KEY_ENCRYPTION_KEY open the one that signs? (The seal is the auth service's:
// services/auth/src/keys.ts, AES-256-GCM, iv(12) · tag(16) · ciphertext.) The advice never says to
// delete keys: they are the other checkout's.
import { createDecipheriv, createHash } from 'node:crypto';

/** The database and NATS prefix of this checkout when the defaults belong to another: `partner_<8 hex of its path>`. */
export function checkoutNames(root) {
  const suffix = createHash('sha256').update(root).digest('hex').slice(0, 8);
  return { database: `partner_${suffix}`, natsPrefix: `partner_${suffix}` };
}

/** DATABASE_URL with another database name. */
export function withDatabase(url, database) {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

function opens(kek, sealed) {
  try {
    const d = createDecipheriv('aes-256-gcm', kek, sealed.subarray(0, 12));
    d.setAuthTag(sealed.subarray(12, 28));
    d.update(sealed.subarray(28));
    d.final();
    return true;
  } catch {
    return false;
  }
}

/**
 * What the database's signing keys say about this checkout's KEK list (comma list of base64 keys):
 * 'empty' (no auth schema or no signing key yet: this checkout may set it up), 'ours' (a listed key
 * opens the signing key), or 'foreign' (sealed under a key this checkout does not have).
 */
export async function signingKeysOwner(client, kekList) {
  const table = await client.query("SELECT to_regclass('auth.signing_keys') AS t");
  if (!table.rows[0].t) return 'empty';
  const r = await client.query('SELECT private_jwk_sealed FROM auth.signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1');
  if (r.rowCount === 0) return 'empty';
  const keks = String(kekList ?? '').split(',').map((k) => Buffer.from(k.trim(), 'base64')).filter((k) => k.length === 32);
  return keks.some((k) => opens(k, r.rows[0].private_jwk_sealed)) ? 'ours' : 'foreign';
}

/**
 * What `npm start` does about a database whose signing keys are another's: on the defaults, switch to
 * this checkout's own names (and say so); when DATABASE_URL or NATS_PREFIX was set, stop with the exact
 * settings to use. Never: delete the keys (they are the other checkout's).
 */
export function foreignDatabasePlan({ dbName, explicit, chosen }) {
  const why = `database ${dbName} holds signing keys sealed under a key-encryption key this checkout does not have (another checkout set it up, or this one lost its .local/dev.env)`;
  if (explicit.length > 0) {
    return {
      fail:
        `${why}.\n` +
        '  Give this checkout its own database and NATS prefix (npm start saves them in .local/dev.env):\n' +
        `    DATABASE_URL=${chosen.DATABASE_URL} NATS_PREFIX=${chosen.NATS_PREFIX} npm start\n` +
        `  or set AUTH_KEY_ENCRYPTION_KEY to the key ${dbName} was set up with. Nothing was changed in ${dbName}.`,
    };
  }
  const database = new URL(chosen.DATABASE_URL).pathname.slice(1);
  return {
    switchTo: chosen,
    note: `${why}: this checkout uses database ${database} and NATS prefix ${chosen.NATS_PREFIX} instead (saved in .local/dev.env; ${dbName} is left as it is)`,
  };
}
