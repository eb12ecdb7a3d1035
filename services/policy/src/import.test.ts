import { describe, expect, it } from 'vitest';
import { ImportRejected, parsePolicyLine } from './import.js';

const good = {
  policyNumber: 'POL-0001',
  status: 'active',
  productId: '6F1C2B4E-8A3D-4F5E-9B7A-1C2D3E4F5A6B',
  insured: { legalName: '  Acme Widgets Ltd ' },
  effectiveDate: '2025-01-01',
  expirationDate: '2026-01-01',
  premium: { amount: '1234.50', currency: 'EUR' },
};

const issues = (doc: unknown) => {
  const r = parsePolicyLine(typeof doc === 'string' ? doc : JSON.stringify(doc));
  return r.ok ? [] : r.errors.map((e) => `${e.field} ${e.issue}`);
};

describe('parsePolicyLine', () => {
  it('accepts a valid policy and normalises ids and the name', () => {
    const r = parsePolicyLine(JSON.stringify(good));
    expect(r).toEqual({
      ok: true,
      value: { ...good, productId: '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b', insured: { legalName: 'Acme Widgets Ltd' }, submissionId: null },
    });
    const withSubmission = parsePolicyLine(JSON.stringify({ ...good, submissionId: '0192f1a4-7c3e-7b2a-9d4e-1f2a3b4c5d6e' }));
    expect(withSubmission.ok && withSubmission.value.submissionId).toBe('0192f1a4-7c3e-7b2a-9d4e-1f2a3b4c5d6e');
  });

  it('reports every problem of a line by field', () => {
    expect(
      issues({
        policyId: 'x',
        policyNumber: ' ',
        status: 'lapsed',
        productId: 'nope',
        insured: { legalName: '', age: 3 },
        effectiveDate: '2025-02-30',
        expirationDate: '2025-01-01',
        premium: { amount: 12.5, currency: 'eur' },
        extra: true,
      }),
    ).toEqual([
      'policyId is assigned by the service and cannot be imported',
      'extra is not a policy field',
      'policyNumber must be 1-64 characters without control characters or surrounding spaces',
      'status must be one of active, cancelled, expired, pending',
      'productId must be a UUID',
      'insured.age is not a field of insured',
      'insured.legalName must not be blank',
      'effectiveDate must be a calendar date YYYY-MM-DD',
      'premium.amount must be a decimal string such as "1234.50", not a JSON number',
      'premium.currency must be an ISO 4217 code such as EUR',
    ]);
  });

  it('requires every field but submissionId', () => {
    expect(issues({})).toEqual([
      'policyNumber is required',
      'status is required',
      'productId is required',
      'insured is required',
      'effectiveDate is required',
      'expirationDate is required',
      'premium is required',
    ]);
    expect(issues({ ...good, insured: {}, premium: {} })).toEqual([
      'insured.legalName is required',
      'premium.amount is required',
      'premium.currency is required',
    ]);
  });

  it('checks the dates against each other and the amount format', () => {
    expect(issues({ ...good, expirationDate: '2025-01-01' })).toEqual(['expirationDate must be after effectiveDate']);
    expect(issues({ ...good, premium: { amount: '-5', currency: 'EUR' } })).toHaveLength(1);
    expect(issues({ ...good, submissionId: 42 })).toEqual(['submissionId must be a UUID (or absent)']);
  });

  it('rejects lines that are not JSON objects', () => {
    expect(issues('{"policyNumber": ')).toEqual(['(line) is not valid JSON']);
    expect(issues('[1,2]')).toEqual(['(line) must be a JSON object']);
    expect(issues('null')).toEqual(['(line) must be a JSON object']);
  });
});

describe('ImportRejected', () => {
  it('reports one `line N: field issue` per problem, and how many were left out', () => {
    const e = new ImportRejected([{ line: 3, field: 'status', issue: 'is required' }, { line: 9, field: 'premium', issue: 'is required' }], 5, 4);
    expect(e.message).toBe('4 invalid lines; nothing was imported\nline 3: status is required\nline 9: premium is required\n... and 3 more');
  });
});
