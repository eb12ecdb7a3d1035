// The one reading of the dates and timestamps the API accepts (request bodies, every timestamp query
// parameter, policy import), limited to what every layer can represent: years 0001 to 9999, the range
// of a PostgreSQL date and of an ISO 8601 string without an expanded year. Anything outside is refused
// where it enters (400 validation_error), never passed on to fail later in a service or a job.

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z, in epoch ms. */
const min = new Date(0);
min.setUTCFullYear(1, 0, 1);
min.setUTCHours(0, 0, 0, 0);
export const EARLIEST_MS = min.getTime();
export const LATEST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A real calendar date written YYYY-MM-DD, years 0001–9999 (no 2025-02-30, no 0000-01-01). */
export function isCalendarDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1) return false;
  const t = new Date(Date.UTC(2000, mo - 1, d));
  t.setUTCFullYear(y);
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/**
 * The instant an RFC 3339 timestamp (with a time zone: Z or ±HH:MM) names, rounded UP to the
 * millisecond (stored timestamps have millisecond precision, so `updated_at >= t` is unchanged), as
 * epoch ms; undefined when the text is not one, or when the instant, once its offset is applied,
 * falls outside years 0001–9999 UTC (`9999-12-31T23:59:59-23:59` is past the end).
 */
export function parseTimestamp(s: string): number | undefined {
  const m = TIMESTAMP.exec(s);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, sec, frac, z, sign, oh, om] = m;
  if (!isCalendarDate(`${y}-${mo}-${d}`)) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) return undefined;
  if (!z && (Number(oh) > 23 || Number(om) > 59)) return undefined;
  const digits = (frac ?? '').padEnd(9, '0');
  const ms = Number(digits.slice(0, 3)) + (/[1-9]/.test(digits.slice(3)) ? 1 : 0);
  const offsetMin = z ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  const base = new Date(0);
  base.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  base.setUTCHours(Number(h), Number(mi), Number(sec), 0);
  const t = base.getTime() + ms - offsetMin * 60_000;
  return Number.isFinite(t) && t >= EARLIEST_MS && t <= LATEST_MS ? t : undefined;
}

/** The issue to report for a timestamp parameter that parseTimestamp refuses. */
export const TIMESTAMP_ISSUE =
  'must be an RFC 3339 timestamp from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z such as 2025-01-31T00:00:00Z (write + in an offset as %2B)';
