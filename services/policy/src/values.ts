// Formats of policy fields, shared by `policy import` (every line) and the list filters: one rule
// per field, so what can be imported is exactly what can be looked up.
import { isUuid } from '@partner/shared/domain/ids';

export { isPolicyStatus, POLICY_STATUSES, type PolicyStatusName } from '@partner/shared/domain/policies';

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

export { isCalendarDate, parseTimestamp } from '@partner/shared/domain/time';

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
