import { describe, expect, it } from 'vitest';
import { riskKeyOf } from '@partner/shared/domain/clearance';
import { decide } from './clearance.js';

const T = 't1';
const P = '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a70';
const key = (legalName: string, taxId?: string, postalCode?: string) =>
  riskKeyOf(T, P, '2027-01-01', {
    legalName,
    ...(taxId ? { taxId } : {}),
    ...(postalCode ? { address: { line1: '1 Main', city: 'X', region: 'IL', postalCode, country: 'US' } } : {}),
  });
const held = (submissionId: string, partnerId: string, k: ReturnType<typeof key>) => ({ submissionId, partnerId, clearanceStatus: 'cleared' as const, key: k });

describe('decide', () => {
  it('is cleared with nothing earlier, and never names another partner', () => {
    expect(decide(key('Acme', '123456789'), 'p1', [])).toEqual({ clearanceStatus: 'cleared', clearanceBasis: null, clearanceDuplicateOf: null });
    expect(decide(key('Acme', '123456789'), 'p2', [held('s1', 'p1', key('Other', '123456789'))])).toEqual({
      clearanceStatus: 'blocked',
      clearanceBasis: 'tax_id',
      clearanceDuplicateOf: null,
    });
  });

  it('prefers the own earliest match (duplicate), then tax_id, then name_address over another partner, then review', () => {
    const earlier = [held('s1', 'p1', key('Acme', undefined, '62701')), held('s2', 'p2', key('Acme')), held('s3', 'p3', key('Acme LLC', '123456789'))];
    expect(decide(key('ACME, Inc.', '123456789', '62701'), 'p2', earlier)).toEqual({ clearanceStatus: 'duplicate', clearanceBasis: 'name_only', clearanceDuplicateOf: 's2' });
    expect(decide(key('ACME, Inc.', '123456789', '62701'), 'p4', earlier)).toMatchObject({ clearanceStatus: 'blocked', clearanceBasis: 'tax_id' });
    expect(decide(key('ACME, Inc.', undefined, '62701'), 'p4', earlier)).toMatchObject({ clearanceStatus: 'blocked', clearanceBasis: 'name_address' });
    expect(decide(key('ACME, Inc.', undefined, '99999'), 'p4', earlier)).toMatchObject({ clearanceStatus: 'review', clearanceBasis: 'name_only' });
    expect(decide(key('Acme Holding'), 'p4', earlier)).toMatchObject({ clearanceStatus: 'cleared' });
  });
});
