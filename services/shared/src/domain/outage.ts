// Which errors mean "a shared dependency is unreachable right now" (PostgreSQL or NATS) rather than a
// bad request or a bug. A process never goes unready for them (readiness is "not draining and
// listening", process/start.ts): each call they break answers UNAVAILABLE (gRPC) / 503 `unavailable`
// (HTTP) with a retry hint instead, and the next call after the dependency is back succeeds.
// No imports of pg or nats: errors.ts (toGrpcError) classifies with this too.

/** Seconds a caller is told to wait (Retry-After, gRPC `retry-after`) after a dependency outage. */
export const OUTAGE_RETRY_AFTER_S = 1;

/** Socket errors of a connection that could not be made or was lost. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);

/**
 * SQLSTATEs of a server that cannot serve this session: the whole class 08 (connection exception),
 * 57P01 admin_shutdown (a fast shutdown, a failover), 57P02 crash_shutdown, 57P03 cannot_connect_now
 * (starting up, in recovery), 57P05 idle_session_timeout, 53300 too_many_connections, and 25006
 * read_only_sql_transaction (the host is a standby now: a failover moved the primary).
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '57P05', '53300', '25006']);

/** What node-postgres says when the connection went away or could not be had from the pool in time. */
const PG_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout|Connection ended unexpectedly|Client was closed and is not queryable/i;

/** True for errors that mean "the database is not reachable right now" rather than a bad query. */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; errors?: unknown } | null | undefined;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.code === 'string') {
    if (SOCKET_CODES.has(e.code) || SQLSTATES.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code)) return true;
  }
  // Several addresses tried (Node's happy eyeballs): an AggregateError of socket errors.
  if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((x) => isConnectionError(x))) return true;
  return PG_MESSAGES.test(typeof e.message === 'string' ? e.message : '');
}

/**
 * nats.js error codes of a connection that is down or a JetStream that does not answer: closed,
 * draining or disconnected, refused, timed out, and `503` (no responders: JetStream not there, a
 * server restarting).
 */
const NATS_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_DRAINING', 'CONNECTION_REFUSED', 'CONNECTION_TIMEOUT', 'DISCONNECT', 'TIMEOUT', '503']);

/** True for a nats.js error that means "NATS (or JetStream) is not reachable right now". */
export function isNatsOutage(err: unknown): boolean {
  const e = err as { name?: unknown; code?: unknown } | null | undefined;
  return !!e && typeof e === 'object' && e.name === 'NatsError' && typeof e.code === 'string' && NATS_CODES.has(e.code);
}

/** PostgreSQL or NATS unreachable: the call is answered UNAVAILABLE / 503 `unavailable`, retryable. */
export function isDependencyOutage(err: unknown): boolean {
  return isConnectionError(err) || isNatsOutage(err);
}
