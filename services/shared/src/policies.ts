// Policy statuses, shared by the policy service (import, storage) and the gateway (the status filter).
export const POLICY_STATUSES = ['active', 'cancelled', 'expired', 'pending'] as const;
export type PolicyStatusName = (typeof POLICY_STATUSES)[number];

export const isPolicyStatus = (s: string): s is PolicyStatusName => (POLICY_STATUSES as readonly string[]).includes(s);
