// Webhook signing secrets sealed at rest (docs/webhooks.md "Signing secrets at rest"): AES-256-GCM
// under the key-encryption key list AUTH_KEY_ENCRYPTION_KEY, the same list and the same rules as the
// auth service's signing keys and the submission service's receipt keys (shared/crypto/sealed-keys.ts):
// the newest KEK seals, older ones only open, and at start everything sealed under an older one is
// sealed again under the newest. Each blob's associated data names its endpoint and column, so a
// blob copied to another endpoint (or from `previous_secret_sealed` to `secret_sealed`) does not open.
//
// The plaintext columns `secret` and `previous_secret` of a database from before sealing (migration
// 0006) are named by no query of this version (issue 48, 9): sealAtRest finds what is left in them
// through the row as JSON, which works with or without them, seals it and empties them, at every
// start and before migration 0008 drops them (which refuses while any plaintext is left).
import { seal, unsealAny, UnknownKekError, type KeyTable } from '@partner/shared/crypto/sealed-keys';
import type { MigrationSteps, Pool, PoolClient } from '@partner/shared/db/pg';

export type SecretColumn = 'secret' | 'previous_secret';

/** The secret columns of a webhook_endpoints row: sealed. */
export interface SecretColumns {
  endpoint_id: string;
  secret_sealed: Buffer | null;
  previous_secret_sealed: Buffer | null;
}

/** The columns SecretColumns names, for SELECT lists (prefix: a table alias and dot, e.g. "w."). */
export const secretColumns = (prefix = ''): string => ['secret_sealed', 'previous_secret_sealed'].map((c) => `${prefix}${c}`).join(', ');

/**
 * A row's plaintext secrets left from before sealing, read through the row as JSON: NULL when the
 * columns are empty and when they no longer exist (after migration 0008), so the same statement
 * works on both schemas. `alias` is the table's alias in the statement.
 */
export const plaintextLeft = (alias: string): string =>
  `to_jsonb(${alias}) ->> 'secret' AS plain_secret, to_jsonb(${alias}) ->> 'previous_secret' AS plain_previous_secret`;

/** Endpoints with a plaintext secret left (migration 0008 refuses to drop the columns while there are any). */
export const PLAINTEXT_LEFT = `SELECT count(*)::int AS n FROM webhook_endpoints w
  WHERE to_jsonb(w) ->> 'secret' IS NOT NULL OR to_jsonb(w) ->> 'previous_secret' IS NOT NULL`;

/** For UnknownKekError: what is sealed, under which setting, and what to do if its KEK is lost. */
export const WEBHOOK_SECRETS: Pick<KeyTable, 'what' | 'kekSetting' | 'lossAdvice'> = {
  what: 'the signing secret of webhook endpoint',
  kekSetting: 'AUTH_KEY_ENCRYPTION_KEY',
  lossAdvice:
    'the secrets sealed under it are lost; give each such endpoint a new one (POST /v1/webhook-endpoints/{id}/rotate-secret cannot open the old one: ' +
    'delete the endpoint and create it again, or seal a new secret with the current KEK into secret_sealed and set previous_secret_sealed = NULL) and hand it to its partner.',
};

/** The associated data of a sealed secret: its endpoint and column. */
export const secretAad = (endpointId: string, column: SecretColumn): string => `partner.events/webhook_endpoints/${endpointId}/${column}`;

/** Seals a secret for one endpoint's column under the newest KEK. */
export function sealSecret(keks: readonly Buffer[], endpointId: string, column: SecretColumn, secret: string): Buffer {
  return seal(keks[0]!, secret, secretAad(endpointId, column));
}

/** Opens one column's sealed secret; null when there is none. */
export function openSecret(keks: readonly Buffer[], endpointId: string, column: SecretColumn, sealed: Buffer | null): string | null {
  return openColumn(keks, endpointId, column, sealed, null)?.plaintext ?? null;
}

/**
 * The secrets that sign a delivery: the current one, then the previous one while it still signs (the
 * caller's query gives previous_* only before previous_secret_expires_at, as null otherwise). None
 * (an empty list) when they do not open — a KEK this process lacks, or a blob moved from another row:
 * that delivery is refused unsent (dispatcher/sender.ts), and no other endpoint's waits for it.
 * onError hears why, for the operator's log (the partner sees only that it was not sent).
 */
export function signingSecretsOrNone(keks: readonly Buffer[], row: SecretColumns, onError?: (err: Error) => void): string[] {
  try {
    return signingSecrets(keks, row);
  } catch (err) {
    onError?.(err as Error);
    return [];
  }
}

/** The secrets that sign a delivery (as above), failing with UnknownKekError (naming the endpoint and column) when one does not open. */
export function signingSecrets(keks: readonly Buffer[], row: SecretColumns): string[] {
  const current = openSecret(keks, row.endpoint_id, 'secret', row.secret_sealed);
  if (current === null) throw new Error(`webhook endpoint ${row.endpoint_id} has no signing secret`);
  const previous = openSecret(keks, row.endpoint_id, 'previous_secret', row.previous_secret_sealed);
  return previous === null ? [current] : [current, previous];
}

/** Rows examined per query by sealAtRest. */
const SEAL_PAGE = 500;

export interface SealReport {
  /** Endpoints whose plaintext secrets were sealed and emptied. */
  sealed: number;
  /** Endpoints whose secrets were sealed again under the newest KEK. */
  resealed: number;
  /** Endpoints whose expired previous secret was dropped (it never signs again). */
  dropped: number;
}

/**
 * At the events service's start, under an advisory lock (replicas take turns; the second finds
 * nothing to do): seals every plaintext secret left from before sealing and empties its column,
 * seals again under the newest KEK every secret sealed under an older one, and drops previous secrets
 * past their overlap. Every change is a compare-and-set on the columns it read, so a rotation that
 * ran meanwhile wins. Fails with UnknownKekError when a secret that still signs opens under none of
 * the KEKs (the dispatchers could not sign with it either).
 */
export async function sealAtRest(pool: Pool, keks: readonly Buffer[]): Promise<SealReport> {
  const c = await pool.connect();
  try {
    return await sealWith(c, keks);
  } finally {
    c.release();
  }
}

/** A row as sealAtRest reads it: the sealed columns and the plaintext left (plaintextLeft). */
type SealRow = SecretColumns & { plain_secret: string | null; plain_previous_secret: string | null; previous_live: boolean };

/**
 * sealAtRest on a connection of the caller's: the events service's start, and the migration step
 * before 0008 (on the migrating connection, so plaintext left is sealed before the drop).
 */
export async function sealWith(c: Pick<PoolClient, 'query'>, keks: readonly Buffer[]): Promise<SealReport> {
  const report: SealReport = { sealed: 0, resealed: 0, dropped: 0 };
  await c.query('SELECT pg_advisory_lock(hashtext($1))', ['events:webhook-secrets-at-rest']);
  try {
    let after = '';
    for (;;) {
      const page = await c.query<SealRow>(
        `SELECT endpoint_id, ${secretColumns()}, ${plaintextLeft('w')}, coalesce(previous_secret_expires_at > now(), false) AS previous_live
           FROM webhook_endpoints w WHERE endpoint_id > $1 ORDER BY endpoint_id LIMIT $2`,
        [after, SEAL_PAGE],
      );
      for (const row of page.rows) {
        const next = plan(keks, row);
        if (!next) continue;
        // The plaintext columns are named only when this row had plaintext (so they exist); the
        // compare-and-set reads them through the row as JSON either way.
        const r = await c.query(
          `UPDATE webhook_endpoints w SET ${next.kind === 'sealed' ? 'secret = NULL, previous_secret = NULL, ' : ''}secret_sealed = $6, previous_secret_sealed = $7
            WHERE endpoint_id = $1 AND to_jsonb(w) ->> 'secret' IS NOT DISTINCT FROM $2 AND secret_sealed IS NOT DISTINCT FROM $3
              AND to_jsonb(w) ->> 'previous_secret' IS NOT DISTINCT FROM $4 AND previous_secret_sealed IS NOT DISTINCT FROM $5`,
          [row.endpoint_id, row.plain_secret, row.secret_sealed, row.plain_previous_secret, row.previous_secret_sealed, next.secret, next.previous],
        );
        if (r.rowCount) report[next.kind]++;
      }
      if (page.rows.length < SEAL_PAGE) break;
      after = page.rows.at(-1)!.endpoint_id;
    }
  } finally {
    await c.query('SELECT pg_advisory_unlock(hashtext($1))', ['events:webhook-secrets-at-rest']);
  }
  return report;
}

/** What one row's secret columns become (both sealed under the newest KEK), or undefined when they are as they should be. */
function plan(keks: readonly Buffer[], row: SealRow): { secret: Buffer; previous: Buffer | null; kind: keyof SealReport } | undefined {
  const id = row.endpoint_id;
  // Plaintext left is read first: only a version from before sealing writes it, so it is the newer value.
  const current = openColumn(keks, id, 'secret', row.secret_sealed, row.plain_secret);
  if (!current) throw new Error(`webhook endpoint ${id} has no signing secret`);
  const hasPrevious = row.previous_secret_sealed !== null || row.plain_previous_secret !== null;
  // A previous secret past its overlap never signs again: it is dropped, whatever sealed it.
  const previous = hasPrevious && row.previous_live ? openColumn(keks, id, 'previous_secret', row.previous_secret_sealed, row.plain_previous_secret) : undefined;
  const plaintext = row.plain_secret !== null || row.plain_previous_secret !== null;
  const stale = current.index > 0 || (previous !== undefined && previous.index > 0);
  const drop = hasPrevious && !row.previous_live;
  if (!plaintext && !stale && !drop) return undefined;
  return {
    secret: current.index === 0 ? row.secret_sealed! : sealSecret(keks, id, 'secret', current.plaintext),
    previous: previous === undefined ? null : previous.index === 0 ? row.previous_secret_sealed! : sealSecret(keks, id, 'previous_secret', previous.plaintext),
    kind: plaintext ? 'sealed' : stale ? 'resealed' : 'dropped',
  };
}

/** A column's secret and the index of the KEK that opened it (-1: plaintext, to be sealed). */
function openColumn(keks: readonly Buffer[], endpointId: string, column: SecretColumn, sealed: Buffer | null, plaintext: string | null): { plaintext: string; index: number } | undefined {
  if (plaintext !== null) return { plaintext, index: -1 };
  if (sealed === null) return undefined;
  const opened = unsealAny(keks, sealed, secretAad(endpointId, column));
  if (!opened) throw new UnknownKekError(WEBHOOK_SECRETS, `${endpointId} (${column})`, keks.length);
  return opened;
}

/** The migration that drops the plaintext columns; sealWith runs on the migrating connection before it. */
export const DROP_PLAINTEXT_MIGRATION = '0008_drop_plaintext_webhook_secrets';

/** The events schema's migration steps: plaintext left is sealed before the columns are dropped. */
export const secretMigrationSteps = (keks: readonly Buffer[]): MigrationSteps => ({
  [DROP_PLAINTEXT_MIGRATION]: async (c) => {
    await sealWith(c, keks);
  },
});
