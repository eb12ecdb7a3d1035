// The server-side limits of every statement: what readDb (process/config.ts) reads from the
// environment and what createPool and withTx (db/pg.ts) apply. Imports nothing of the project.

/** Server-side limits of every statement (DB_STATEMENT_TIMEOUT_MS, DB_LOCK_TIMEOUT_MS). */
export interface DbTimeouts {
  /** A statement running longer is cancelled by PostgreSQL (SQLSTATE 57014). */
  statementMs: number;
  /** A statement waiting longer for a lock (a row, a table, an advisory lock) is cancelled (55P03). */
  lockMs: number;
}

export const DEFAULT_DB_TIMEOUTS: Readonly<DbTimeouts> = { statementMs: 15_000, lockMs: 5_000 };
