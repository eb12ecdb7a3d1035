import { describe, expect, it } from 'vitest';
import { parsePreferWait } from './prefer.js';

describe('Prefer: wait', () => {
  it.each([
    ['wait=10', 10],
    ['WAIT = 5', 5],
    ['wait="7"', 7],
    ['respond-async, wait=12', 12],
    ['wait=0', 0],
    ['wait=31', 30],
    ['wait=999999', 30],
    ['wait=10; foo=bar', 10],
  ])('reads %j as %d', (header, expected) => {
    expect(parsePreferWait(header)).toBe(expected);
  });

  it.each([undefined, '', 'wait', 'wait=', 'wait=-1', 'wait=1.5', 'wait=soon', 'handling=lenient'])('ignores %j', (header) => {
    expect(parsePreferWait(header)).toBeUndefined();
  });
});
