// Formats of policy fields, shared by `policy import` (every line) and the list filters: one rule
// per field, so what can be imported is exactly what can be looked up.
import { isUuid } from '@partner/shared/ids';

export { isPolicyStatus, POLICY_STATUSES, type PolicyStatusName } from '@partner/shared/policies';

export const POLICY_NUMBER_MAX = 64;
// No control/format characters anywhere, no whitespace at either end.
const POLICY_NUMBER = /^(?![\s])[^\p{C}]*(?<![\s])$/u;

/** The issue with a policy number, or undefined when it is acceptable. */
export function policyNumberIssue(s: string): string | undefined {
  const length = [...s].length;
  if (length === 0 || length > POLICY_NUMBER_MAX || !POLICY_NUMBER.test(s)) {
    return `must be 1-${POLICY_NUMBER_MAX} characters without control characters or surrounding spaces`;
  }
  return undefined;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date written YYYY-MM-DD (no 2025-02-30). */
export function isCalendarDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1) return false;
  const t = new Date(Date.UTC(y, mo - 1, d));
  t.setUTCFullYear(y);
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/** Non-negative decimal with at most 15 integer digits and 4 decimals, as a string ("1234.50"). */
export const AMOUNT = /^(0|[1-9][0-9]{0,14})(\.[0-9]{1,4})?$/;
export const CURRENCY = /^[A-Z]{3}$/;
export const LEGAL_NAME_MAX = 200;

export function legalNameIssue(s: string): string | undefined {
  if (s.trim() === '') return 'must not be blank';
  if ([...s].length > LEGAL_NAME_MAX) return `must be at most ${LEGAL_NAME_MAX} characters`;
  if (/\p{Cc}/u.test(s)) return 'must not contain control characters';
  return undefined;
}

export { isUuid };

/**
 * The instant an RFC 3339 timestamp (with a time zone: Z or ±HH:MM) names, rounded UP to the
 * millisecond (stored timestamps have millisecond precision, so `updated_at >= t` is unchanged), as
 * epoch ms; undefined when the text is not one.
 */
export function parseTimestamp(s: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/.exec(s);
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
  return Number.isFinite(t) ? t : undefined;
}
