// The partner console's sign-in (API.md "Partner console"): links and sessions in the auth schema
// (migration 0004). A link is minted for a client (10 minutes, single use); opening it creates a
// session (CONSOLE_SESSION_TTL_SECONDS, 8 h by default) that acts as that client. Tokens and session
// ids are 256-bit random values stored only as their SHA-256. "now" comes from the clock
// (shared/domain/clock.ts), never from the database's own.
import { randomBytes } from 'node:crypto';
import type { Pool } from '@partner/shared/db/pg';
import { wallClock, type Clock } from '@partner/shared/domain/clock';
import { hashSecret } from './secrets.js';

export const CONSOLE_LINK_TTL_S = 600;

export type ExchangeOutcome = 'ok' | 'unknown' | 'used' | 'expired' | 'revoked';

/** A link token and a session id have a recognisable prefix (a log or a secret scanner can tell them). */
const newToken = (prefix: string): string => `${prefix}${randomBytes(32).toString('base64url')}`;
const WELL_FORMED = /^(cst|css)_[A-Za-z0-9_-]{43}$/;

export async function createConsoleLink(
  pool: Pool,
  clientId: string,
  readOnly: boolean,
  clock: Clock = wallClock,
): Promise<{ token: string; expiresAt: Date } | undefined> {
  const now = clock.now();
  const expiresAt = new Date(now.getTime() + CONSOLE_LINK_TTL_S * 1000);
  const token = newToken('cst_');
  const r = await pool.query(
    `INSERT INTO console_links (token_hash, client_id, read_only, token_version, created_at, expires_at)
     SELECT $1, client_id, $3, token_version, $4, $5 FROM clients WHERE client_id = $2 AND disabled_at IS NULL`,
    [hashSecret(token), clientId, readOnly, now, expiresAt],
  );
  return r.rowCount === 1 ? { token, expiresAt } : undefined;
}

/**
 * Exchanges a link for a session, once: the UPDATE that marks the link used is the race's one winner
 * (a second opening, concurrent or later, finds used_at set).
 */
export async function exchangeConsoleLink(
  pool: Pool,
  token: string,
  sessionTtlS: number,
  clock: Clock = wallClock,
): Promise<{ outcome: ExchangeOutcome; sessionId?: string; expiresAt?: Date }> {
  if (!WELL_FORMED.test(token) || !token.startsWith('cst_')) return { outcome: 'unknown' };
  const now = clock.now();
  const hash = hashSecret(token);
  const claimed = await pool.query<{ client_id: string; read_only: boolean; token_version: string; live: boolean }>(
    `UPDATE console_links l SET used_at = $2
       FROM clients c
      WHERE l.token_hash = $1 AND l.used_at IS NULL AND l.expires_at > $2 AND c.client_id = l.client_id
      RETURNING l.client_id, l.read_only, l.token_version,
                (c.disabled_at IS NULL AND c.token_version <= l.token_version) AS live`,
    [hash, now],
  );
  const link = claimed.rows[0];
  if (!link) {
    const seen = await pool.query<{ used: boolean }>('SELECT used_at IS NOT NULL AS used FROM console_links WHERE token_hash = $1', [hash]);
    const row = seen.rows[0];
    return { outcome: !row ? 'unknown' : row.used ? 'used' : 'expired' };
  }
  if (!link.live) return { outcome: 'revoked' };
  const sessionId = newToken('css_');
  const expiresAt = new Date(now.getTime() + sessionTtlS * 1000);
  await pool.query(
    `INSERT INTO console_sessions (session_hash, client_id, read_only, token_version, csrf_token, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [hashSecret(sessionId), link.client_id, link.read_only, link.token_version, randomBytes(24).toString('base64url'), now, expiresAt],
  );
  return { outcome: 'ok', sessionId, expiresAt };
}

export interface ConsoleSessionRow {
  client_id: string;
  tenant_id: string;
  partner_id: string;
  read_only: boolean;
  token_version: string;
  csrf_token: string;
  expires_at: Date;
}

/** A live session (not expired, not ended, its client enabled and not revoked since), or undefined. */
export async function consoleSession(pool: Pool, sessionId: string, clock: Clock = wallClock): Promise<ConsoleSessionRow | undefined> {
  if (!WELL_FORMED.test(sessionId) || !sessionId.startsWith('css_')) return undefined;
  const r = await pool.query<ConsoleSessionRow>(
    `SELECT s.client_id, c.tenant_id, c.partner_id, s.read_only, s.token_version, s.csrf_token, s.expires_at
       FROM console_sessions s JOIN clients c ON c.client_id = s.client_id
      WHERE s.session_hash = $1 AND s.ended_at IS NULL AND s.expires_at > $2
        AND c.disabled_at IS NULL AND c.token_version <= s.token_version`,
    [hashSecret(sessionId), clock.now()],
  );
  return r.rows[0];
}

export async function endConsoleSession(pool: Pool, sessionId: string, clock: Clock = wallClock): Promise<boolean> {
  if (!WELL_FORMED.test(sessionId)) return false;
  const r = await pool.query('UPDATE console_sessions SET ended_at = $2 WHERE session_hash = $1 AND ended_at IS NULL', [hashSecret(sessionId), clock.now()]);
  return r.rowCount === 1;
}

/** Drops links and sessions that ended more than a day ago (run now and then by the service). */
export async function pruneConsole(pool: Pool, clock: Clock = wallClock): Promise<void> {
  const before = new Date(clock.now().getTime() - 86_400_000);
  await pool.query('DELETE FROM console_links WHERE expires_at < $1', [before]);
  await pool.query('DELETE FROM console_sessions WHERE expires_at < $1 OR ended_at < $1', [before]);
}
