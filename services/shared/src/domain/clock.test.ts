import { describe, expect, it } from 'vitest';
import { clockOfTime } from './clock.js';

describe('clockOfTime', () => {
  it('stops at a test clock\'s time, is the wall clock when none, and refuses what is no timestamp', () => {
    expect(clockOfTime('2027-03-01T12:00:00.000Z').now().toISOString()).toBe('2027-03-01T12:00:00.000Z');
    expect(Math.abs(clockOfTime('').now().getTime() - Date.now())).toBeLessThan(5_000);
    expect(() => clockOfTime('next tuesday')).toThrow(expect.objectContaining({ code: 'validation_error' }));
  });
});
