import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from './errors.js';
import { JOB_FAILURE_CODES, parseSandbox, SANDBOX_DIRECTIVES, SANDBOX_GRAMMAR, SANDBOX_SECONDS, sandboxHoldS } from './sandbox.js';

describe('UAT sandbox directives', () => {
  it.each([
    ['sandbox:delay=1', { delayS: 1 }],
    ['sandbox:delay=60', { delayS: 60 }],
    ['sandbox:fail=unknown_product', { fail: { code: 'unknown_product', retryable: false } }],
    ['sandbox:fail=unavailable', { fail: { code: 'unavailable', retryable: true } }],
    ['sandbox:fail=internal', { fail: { code: 'internal', retryable: true } }],
    ['sandbox:delay=3;fail=conflict', { delayS: 3, fail: { code: 'conflict', retryable: false } }],
    ['sandbox:fail=conflict;delay=2', { delayS: 2, fail: { code: 'conflict', retryable: false } }],
    ['sandbox:hold=1', { holdS: 1 }],
    ['sandbox:hold=60', { holdS: 60 }],
    ['sandbox:hold=5;delay=2;fail=conflict', { holdS: 5, delayS: 2, fail: { code: 'conflict', retryable: false } }],
    ['sandbox:fail=unavailable;hold=3', { holdS: 3, fail: { code: 'unavailable', retryable: true } }],
  ])('reads %s', (ref, expected) => {
    expect(parseSandbox(ref)).toEqual(expected);
  });

  it.each([
    'sandbox:delay=0',
    'sandbox:delay=61',
    'sandbox:delay=05',
    'sandbox:delay=5s',
    'sandbox:delay=',
    'sandbox:',
    'SANDBOX:fail=unknown_product',
    'Sandbox:delay=5',
    'sandbox:delay=5 ',
    ' sandbox:delay=5',
    'sandbox:fail=',
    'sandbox:fail=bogus_code',
    'sandbox:fail=rate_limited',
    'sandbox:fail=unauthenticated',
    'sandbox:fail=Unknown_Product',
    'sandbox:hold=0',
    'sandbox:hold=61',
    'sandbox:hold=1;hold=2',
    'sandbox:delay=1;delay=1',
    'sandbox:hold=2;;delay=1',
    'sandbox:wait=2',
    'sandbox:delay=2;fail=bogus',
    'sandbox:delay=2;',
  ])('refuses %j as a malformed directive', (ref) => {
    expect(parseSandbox(ref)).toBeNull();
  });

  it.each(['PO-123', 'my sandbox:delay=5', 'sandbox-delay=5', ''])('treats %j as an ordinary reference', (ref) => {
    expect(parseSandbox(ref)).toBeUndefined();
  });

  it('reads the hold of a job payload', () => {
    expect(sandboxHoldS({ externalRef: 'sandbox:hold=7;delay=1' })).toBe(7);
    expect(sandboxHoldS({ externalRef: 'sandbox:delay=1' })).toBe(0);
    expect(sandboxHoldS({ externalRef: 'sandbox:hold=99' })).toBe(0);
    expect(sandboxHoldS({})).toBe(0);
    expect(sandboxHoldS(null)).toBe(0);
  });

  it('forces only codes of the error table, with its retryable', () => {
    for (const code of JOB_FAILURE_CODES) {
      expect(parseSandbox(`sandbox:fail=${code}`)).toEqual({ fail: { code, retryable: ERROR_CODES[code].retryable } });
    }
  });

  it('accepts exactly the directives it lists (the README table is written from the list) and names them in its grammar', () => {
    expect(SANDBOX_DIRECTIVES.map((d) => d.key)).toEqual(['delay', 'hold', 'fail']);
    for (const d of SANDBOX_DIRECTIVES) {
      const sample = d.key === 'fail' ? 'conflict' : String(SANDBOX_SECONDS.max);
      expect(parseSandbox(`sandbox:${d.key}=${sample}`), d.key).not.toBeNull();
      expect(SANDBOX_GRAMMAR).toContain(`sandbox:${d.key}=${d.value}`);
    }
    expect(parseSandbox(`sandbox:delay=${SANDBOX_SECONDS.max + 1}`)).toBeNull();
    expect(parseSandbox(`sandbox:hold=${SANDBOX_SECONDS.min - 1}`)).toBeNull();
    expect(parseSandbox('sandbox:pause=5')).toBeNull();
    expect(SANDBOX_GRAMMAR).toMatch(/^sandbox:delay=<1\.\.60>, sandbox:hold=<1\.\.60> or sandbox:fail=<code>, or several of them joined by ;/);
  });
});
