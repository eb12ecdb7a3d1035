// Policy statuses, shared by the policy service (import, storage) and the gateway (the status filter).
import type { PolicyStatus__Output } from '../generated/partner/policy/v1/PolicyStatus.js';
import type { Policy__Output } from '../generated/partner/policy/v1/Policy.js';
import { protoEnum } from './proto-enums.js';

export const POLICY_STATUSES = ['active', 'cancelled', 'expired', 'pending'] as const;
export type PolicyStatusName = (typeof POLICY_STATUSES)[number];

/** The API's names and the proto's POLICY_STATUS_* values. */
export const POLICY_STATUS = protoEnum<PolicyStatusName, PolicyStatus__Output>('POLICY_STATUS_', POLICY_STATUSES);
export const isPolicyStatus = POLICY_STATUS.is;

/**
 * The API's policy record (GET /v1/policies/{id}, a bind's result) from the gRPC message. Amounts stay
 * decimal strings; submissionId, quoteId, option and testClockId are absent when there are none
 * (an imported policy).
 */
export function policyRecordOf(p: Policy__Output): Record<string, unknown> {
  return {
    policyId: p.policyId,
    policyNumber: p.policyNumber,
    status: POLICY_STATUS.fromProto(p.status),
    productId: p.productId,
    insured: { legalName: p.insured?.legalName ?? '' },
    effectiveDate: p.effectiveDate,
    expirationDate: p.expirationDate,
    premium: { amount: p.premium?.amount ?? '', currency: p.premium?.currency ?? '' },
    ...(p.submissionId ? { submissionId: p.submissionId } : {}),
    ...(p.quoteId ? { quoteId: p.quoteId } : {}),
    ...(p.option ? { option: { limit: p.option.limit, retention: p.option.retention } } : {}),
    ...(p.testClockId ? { testClockId: p.testClockId } : {}),
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}
