// The per-operation permissions a client can be provisioned with (docs/api.md, "Authentication").
export const PERMISSIONS = [
  'health/read',
  'policies/read',
  'products/read',
  'submissions/read',
  'submissions/write',
  'jobs/read',
  'events/read',
  'webhooks/read',
  'webhooks/write',
  'requests/read',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const isPermission = (p: string): p is Permission => (PERMISSIONS as readonly string[]).includes(p);
