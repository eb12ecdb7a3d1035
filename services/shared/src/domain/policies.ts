// Policy statuses, shared by the policy service (import, storage) and the gateway (the status filter).
import type { PolicyStatus__Output } from '../generated/partner/policy/v1/PolicyStatus.js';
import { protoEnum } from './proto-enums.js';

export const POLICY_STATUSES = ['active', 'cancelled', 'expired', 'pending'] as const;
export type PolicyStatusName = (typeof POLICY_STATUSES)[number];

/** The API's names and the proto's POLICY_STATUS_* values. */
export const POLICY_STATUS = protoEnum<PolicyStatusName, PolicyStatus__Output>('POLICY_STATUS_', POLICY_STATUSES);
export const isPolicyStatus = POLICY_STATUS.is;
