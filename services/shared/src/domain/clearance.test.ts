import { describe, expect, it } from 'vitest';
import { normalizeLegalName, riskKeyOf, riskLocks, sameRisk, sortedRiskLocks } from './clearance.js';

describe('normalizeLegalName', () => {
  // Each row: names that are one normalized name, and what it is.
  const same: [string[], string][] = [
    [['Acme, LLC', 'ACME llc.', ' acme  L.L.C ', 'Acme LLC', 'acme', 'Acme L.L.C.', 'ＡＣＭＥ　ＬＬＣ'], 'acme'],
    [['Acme Holdings Inc.', 'ACME HOLDINGS, INC', 'Acme Holdings Incorporated', 'Acme Holdings Co. Ltd.', 'Acme Holdings'], 'acme holdings'],
    [['Smith & Jones Corp', 'Smith/Jones Corporation', 'smith - jones', 'Smith (Jones)'], 'smith jones'],
    [["O'Brien Plumbing LP", 'OBrien Plumbing L.P.', 'O’Brien plumbing llp'], 'obrien plumbing'],
    [['Straße GmbH Limited', 'STRASSE GMBH LTD'], 'strasse gmbh'],
    [['Company', 'COMPANY.', 'company co'], 'company'],
    [['Acme Company Holdings', 'ACME COMPANY HOLDINGS PLC'], 'acme company holdings'],
  ];
  it.each(same)('%j normalize to %j', (names, expected) => {
    for (const n of names) expect(normalizeLegalName(n), n).toBe(expected);
  });

  const different: [string, string][] = [
    ['Acme Holdings', 'Acme Holding'],
    ['Acme', 'Acme Co Holdings'],
    ['Acme LLC', 'Acme Group LLC'],
    ['A B C Corp', 'ABC Corp'], // spaces separate words; only full stops and apostrophes join
  ];
  it.each(different)('%j and %j stay apart', (a, b) => {
    expect(normalizeLegalName(a)).not.toBe(normalizeLegalName(b));
  });
});

describe('sameRisk', () => {
  const T = 't1';
  const P = '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a70';
  const address = (postalCode: string, country = 'US') => ({ line1: '1 Main St', city: 'Springfield', region: 'IL', postalCode, country });
  const key = (legalName: string, extra: { taxId?: string; postalCode?: string; country?: string; date?: string; tenant?: string; product?: string } = {}) =>
    riskKeyOf(extra.tenant ?? T, extra.product ?? P, extra.date ?? '2027-01-01', {
      legalName,
      ...(extra.taxId ? { taxId: extra.taxId } : {}),
      ...(extra.postalCode ? { address: address(extra.postalCode, extra.country) } : {}),
    });

  it('decides the basis: tax_id, else name_address, else name_only', () => {
    expect(sameRisk(key('Acme', { taxId: '123456789' }), key('Other Name', { taxId: '123456789' }))).toBe('tax_id');
    expect(sameRisk(key('Acme, LLC', { postalCode: '62701' }), key('ACME llc.', { postalCode: '62701' }))).toBe('name_address');
    expect(sameRisk(key('Acme', { postalCode: 'sw1a 1aa', country: 'GB' }), key('Acme', { postalCode: 'SW1A1AA', country: 'GB' }))).toBe('name_address');
    // Another postal code (or country, or no address) is not name_address: the name alone.
    expect(sameRisk(key('Acme', { postalCode: '62701' }), key('Acme', { postalCode: '62702' }))).toBe('name_only');
    expect(sameRisk(key('Acme', { postalCode: '62701', country: 'US' }), key('Acme', { postalCode: '62701', country: 'CA' }))).toBe('name_only');
    expect(sameRisk(key('Acme', { postalCode: '62701' }), key('Acme'))).toBe('name_only');
    expect(sameRisk(key('Acme Holdings'), key('Acme Holding'))).toBeUndefined();
  });

  it('is one tenant, one product, effective dates within 60 days', () => {
    const a = key('Acme', { taxId: '123456789', date: '2027-01-01' });
    expect(sameRisk(a, key('Acme', { taxId: '123456789', date: '2027-03-02' }))).toBe('tax_id'); // 60 days
    expect(sameRisk(a, key('Acme', { taxId: '123456789', date: '2027-03-03' }))).toBeUndefined(); // 61 days
    expect(sameRisk(a, key('Acme', { taxId: '123456789', date: '2026-11-02' }))).toBe('tax_id');
    expect(sameRisk(a, key('Acme', { taxId: '123456789', tenant: 't2' }))).toBeUndefined();
    expect(sameRisk(a, key('Acme', { taxId: '123456789', product: '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a79' }))).toBeUndefined();
  });

  it('gives every pair that can match a shared lock, and sorts a batch of locks', () => {
    const a = key('Acme', { taxId: '123456789' });
    const b = key('Other', { taxId: '123456789' });
    const c = key('ACME, Inc.');
    expect(riskLocks(a).filter((l) => riskLocks(b).includes(l))).toHaveLength(1);
    expect(riskLocks(a).filter((l) => riskLocks(c).includes(l))).toHaveLength(1);
    expect(riskLocks(b).filter((l) => riskLocks(c).includes(l))).toHaveLength(0);
    const sorted = sortedRiskLocks([c, b, a]).map(BigInt);
    expect(sorted).toHaveLength(3);
    expect([...sorted].sort((x, y) => (x < y ? -1 : 1))).toEqual(sorted);
  });
});
