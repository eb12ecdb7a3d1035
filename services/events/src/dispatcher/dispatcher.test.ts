import { describe, expect, it } from 'vitest';
import { retryTime } from './dispatcher.js';

const s = { retryScheduleMs: [5_000, 300_000, 1_800_000], retryJitter: 0.2 };

describe('retryTime', () => {
  it('waits the schedule step for the failures so far, within the jitter', () => {
    expect(retryTime(0, {}, s, 0, () => 0.5)!.getTime()).toBe(5_000);
    expect(retryTime(1, {}, s, 0, () => 0)!.getTime()).toBe(240_000);
    expect(retryTime(1, {}, s, 0, () => 0.999999)!.getTime()).toBeCloseTo(360_000, -1);
  });

  it('gives up after the last step', () => {
    expect(retryTime(3, {}, s)).toBeUndefined();
  });

  it('stretches to Retry-After, but never beyond the longest wait of the schedule', () => {
    expect(retryTime(0, { retryAfterS: 60 }, s, 0, () => 0.5)!.getTime()).toBe(60_000);
    expect(retryTime(0, { retryAfterS: 1 }, s, 0, () => 0.5)!.getTime()).toBe(5_000);
    expect(retryTime(0, { retryAfterS: 86_400 }, s, 0, () => 0.5)!.getTime()).toBe(1_800_000);
  });
});
