// The one reading of "now" for every rule that time moves: the requirements' effective-date window,
// a quote's validUntil and expiry, a referral's dueBy, the bind's day and a policy's activation and
// expiration. Those rules are pure functions that take `now`; their callers get it from a Clock —
// the wall clock, or (issue 44) the frozen time of the submission's test clock — never from
// Date.now() of their own.
import { DomainError } from './errors.js';
import { parseTimestamp } from './time.js';

export interface Clock {
  /** The current instant on this clock. */
  now(): Date;
}

/** Real time. */
export const wallClock: Clock = { now: () => new Date() };

/** A clock stopped at `frozenTime` (a test clock's time); the wall clock when there is none. */
export function clockAt(frozenTime: Date | null | undefined): Clock {
  if (!frozenTime) return wallClock;
  const at = new Date(frozenTime.getTime());
  return { now: () => new Date(at.getTime()) };
}

/**
 * The clock a call names by its `clock_time` (a test clock's frozen time, RFC 3339, as the worker
 * passes it between services): stopped there, or the wall clock when empty. A value that is no
 * timestamp is the caller's bug: validation_error.
 */
export function clockOfTime(clockTime: string): Clock {
  if (clockTime === '') return wallClock;
  const t = parseTimestamp(clockTime);
  if (t === undefined) throw new DomainError('validation_error', 'clock_time must be an RFC 3339 timestamp');
  return clockAt(new Date(t));
}
