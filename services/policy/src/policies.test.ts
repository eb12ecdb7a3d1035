import { describe, expect, it } from 'vitest';
import { DomainError } from '@partner/shared/domain/errors';
import type { ListPoliciesRequest__Output } from '@partner/shared/generated/partner/policy/v1/ListPoliciesRequest';
import { bindingOf, CursorCodec, newCursorSecret } from '@partner/shared/domain/list-cursor';
import { listQuery, parseListRequest } from './policies.js';

const owner = { tenantId: 'tenant-a', partnerId: 'partner-a' };
const codec = new CursorCodec([newCursorSecret()], 'partner.policy.v1/list-cursor');
const request = (over: Partial<ListPoliciesRequest__Output> = {}): ListPoliciesRequest__Output => ({
  owner,
  pageSize: 0,
  pageToken: '',
  status: 'POLICY_STATUS_UNSPECIFIED',
  productId: '',
  policyNumber: '',
  updatedSince: '',
  ...over,
});
const detailsOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('validation_error');
    return (err as DomainError).details?.map((d) => d.field);
  }
  throw new Error('no error thrown');
};

describe('parseListRequest', () => {
  it('defaults: 50 per page, no filters, first page', () => {
    expect(parseListRequest(request(), owner, codec)).toEqual({ limit: 50 });
  });

  it('normalises filters', () => {
    expect(
      parseListRequest(
        request({
          pageSize: 200,
          status: 'POLICY_STATUS_PENDING',
          productId: '6F1C2B4E-8A3D-4F5E-9B7A-1C2D3E4F5A6B',
          policyNumber: 'P-1',
          updatedSince: '2025-01-31T12:00:00.0001+02:00',
        }),
        owner,
        codec,
      ),
    ).toEqual({
      limit: 200,
      status: 'pending',
      productId: '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b',
      policyNumber: 'P-1',
      updatedSince: '2025-01-31T10:00:00.001Z',
    });
  });

  it('reports every bad field at once', () => {
    expect(detailsOf(() => parseListRequest(request({ pageSize: 201, productId: 'x', policyNumber: ' x', updatedSince: 'yesterday' }), owner, codec))).toEqual([
      'limit',
      'productId',
      'policyNumber',
      'updatedSince',
    ]);
    expect(detailsOf(() => parseListRequest(request({ pageSize: -1 }), owner, codec))).toEqual(['limit']);
  });

  it('accepts a cursor only with the owner and filters it was issued for (same instant, any spelling)', () => {
    const after = { createdAtMs: Date.parse('2025-03-01T00:00:00.5Z'), id: '0192f1a4-7c3e-7b2a-9d4e-1f2a3b4c5d6e' };
    const filters = ['active', undefined, undefined, '2025-01-31T10:00:00.000Z'];
    const token = codec.encode(after, bindingOf(owner, filters));
    const ok = request({ pageToken: token, status: 'POLICY_STATUS_ACTIVE', updatedSince: '2025-01-31T12:00:00+02:00' });
    expect(parseListRequest(ok, owner, codec).after).toEqual(after);
    expect(parseListRequest({ ...ok, pageSize: 7 }, owner, codec).after).toEqual(after);
    expect(detailsOf(() => parseListRequest({ ...ok, status: 'POLICY_STATUS_PENDING' }, owner, codec))).toEqual(['cursor']);
    expect(detailsOf(() => parseListRequest({ ...ok, updatedSince: '' }, owner, codec))).toEqual(['cursor']);
    expect(detailsOf(() => parseListRequest(ok, { ...owner, partnerId: 'partner-b' }, codec))).toEqual(['cursor']);
    expect(detailsOf(() => parseListRequest({ ...ok, pageSize: 500 }, owner, codec))).toEqual(['limit']);
    expect(detailsOf(() => parseListRequest({ ...ok, pageSize: 500, pageToken: 'junk' }, owner, codec))).toEqual(['limit', 'cursor']);
  });
});

describe('listQuery', () => {
  it('is parameterised, owner-scoped, keyset-ordered and fetches one extra row', () => {
    const q = listQuery(owner, {
      limit: 50,
      status: 'active',
      policyNumber: "x' OR '1'='1",
      after: { createdAtMs: 0, id: '0192f1a4-7c3e-7b2a-9d4e-1f2a3b4c5d6e' },
    });
    expect(q.text).toContain('WHERE tenant_id = $1 AND partner_id = $2 AND status = $3 AND policy_number = $4');
    expect(q.text).toContain('(created_at, policy_id) < ($5::timestamptz, $6::uuid)');
    expect(q.text).toMatch(/ORDER BY created_at DESC, policy_id DESC LIMIT \$7$/);
    expect(q.text).not.toContain("'1'='1");
    expect(q.values).toEqual(['tenant-a', 'partner-a', 'active', "x' OR '1'='1", '1970-01-01T00:00:00.000Z', '0192f1a4-7c3e-7b2a-9d4e-1f2a3b4c5d6e', 51]);
  });
});
