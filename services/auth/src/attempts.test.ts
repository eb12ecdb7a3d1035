import { describe, expect, it } from 'vitest';
import { AttemptGuard, refusalDescription } from './attempts.js';

const guard = () => new AttemptGuard({ windowMs: 60_000, maxFailuresPerSource: 3, slowAfter: 2, maxDelayMs: 1000 });

describe('AttemptGuard', () => {
  it('refuses a source after too many failures until its window passes', () => {
    const g = guard();
    for (let i = 0; i < 3; i++) g.recordFailure('10.0.0.1', `cli_${i}`, 1000 + i);
    expect(g.sourceBlockedFor('10.0.0.1', 2000)).toBe(59);
    expect(g.sourceBlockedFor('10.0.0.2', 2000)).toBe(0);
    expect(g.sourceBlockedFor('10.0.0.1', 1000 + 60_001)).toBe(0);
  });

  it('slows failed attempts for a client id more and more, up to a ceiling, whatever the source', () => {
    const g = guard();
    const delays = Array.from({ length: 8 }, (_, i) => g.recordFailure(`10.0.1.${i}`, 'cli_victim', 1000 + i));
    expect(delays).toEqual([0, 0, 100, 200, 400, 800, 1000, 1000]);
    // Sources are distinct, so none of them is refused: the victim client keeps working from its own.
    expect(g.sourceBlockedFor('10.9.9.9', 2000)).toBe(0);
  });

  it('counts an attempt when it begins: of 200 concurrent attempts, at most the limit are evaluated', () => {
    const g = guard();
    const begun = Array.from({ length: 200 }, () => g.begin('10.0.2.1', 1000));
    expect(begun.filter((w) => w === undefined)).toHaveLength(3);
    expect(begun.filter((w) => w?.limit === 'concurrent_attempts' && w.retryAfterS === 1)).toHaveLength(197);
    // The three fail: the source stays refused for the window.
    for (let i = 0; i < 3; i++) g.finish('10.0.2.1', { clientId: 'cli_x' }, 1001);
    expect(g.begin('10.0.2.1', 2001)).toMatchObject({ limit: 'failed_attempts', retryAfterS: 59, failed: 3 });
    expect(g.begin('10.0.2.1', 1001 + 60_000)).toBeUndefined();
  });

  it('frees the place of an attempt that did not fail', () => {
    const g = guard();
    for (let round = 0; round < 10; round++) {
      expect(g.begin('10.0.3.1', 1000)).toBeUndefined();
      g.finish('10.0.3.1', undefined, 1000);
    }
    expect(g.sourceBlockedFor('10.0.3.1', 1000)).toBe(0);
  });

  it('says which limit a refusal hit: one earlier failure and correct requests in flight are not "too many failed attempts"', () => {
    const g = guard();
    g.recordFailure('10.0.4.1', undefined, 1000);
    expect(g.begin('10.0.4.1', 1001)).toBeUndefined();
    expect(g.begin('10.0.4.1', 1001)).toBeUndefined();
    const busy = g.begin('10.0.4.1', 1001)!;
    expect(busy).toEqual({ limit: 'concurrent_attempts', retryAfterS: 1, failed: 1, running: 2, max: 3 });
    expect(refusalDescription(busy, 60_000)).toBe(
      'too many token requests from this address at once (2 in progress and 1 failed in the last 60 s, at most 3 together); retry after 1 s',
    );
    g.finish('10.0.4.1', undefined, 1002);
    g.finish('10.0.4.1', undefined, 1002);
    expect(g.begin('10.0.4.1', 1003)).toBeUndefined();

    for (let i = 0; i < 3; i++) g.recordFailure('10.0.5.1', undefined, 1000);
    const locked = g.begin('10.0.5.1', 31_000)!;
    expect(locked.limit).toBe('failed_attempts');
    expect(refusalDescription(locked, 60_000)).toBe('too many failed client authentications from this address (3 in the last 60 s, at most 3); retry after 30 s');
  });
});
