import { describe, expect, it } from 'vitest';
import { JobStatus } from '../generated/partner/job/v1/JobStatus.js';
import { JobStatusFilter } from '../generated/partner/job/v1/JobStatusFilter.js';
import { PolicyStatus } from '../generated/partner/policy/v1/PolicyStatus.js';
import { WebhookDeliveryStatus } from '../generated/partner/events/v1/WebhookDeliveryStatus.js';
import { WebhookEndpointDisabledReason } from '../generated/partner/events/v1/WebhookEndpointDisabledReason.js';
import { WebhookEndpointStatus } from '../generated/partner/events/v1/WebhookEndpointStatus.js';
import { JOB_STATUS, JOB_STATUS_FILTER } from './jobs.js';
import { POLICY_STATUS } from './policies.js';
import { WEBHOOK_DELIVERY_STATUS, WEBHOOK_DISABLED_REASON, WEBHOOK_ENDPOINT_STATUS } from './webhooks.js';

describe('proto enum converters', () => {
  it.each([
    ['job status', JOB_STATUS, JobStatus],
    ['job status filter', JOB_STATUS_FILTER, JobStatusFilter],
    ['policy status', POLICY_STATUS, PolicyStatus],
    ['webhook endpoint status', WEBHOOK_ENDPOINT_STATUS, WebhookEndpointStatus],
    ['webhook endpoint disabled reason', WEBHOOK_DISABLED_REASON, WebhookEndpointDisabledReason],
    ['webhook delivery status', WEBHOOK_DELIVERY_STATUS, WebhookDeliveryStatus],
  ] as const)('%s: every API name has its proto value and back, and the proto has no value without a name', (_what, e, proto) => {
    const values = Object.keys(proto).filter((v) => !v.endsWith('_UNSPECIFIED'));
    expect(e.names.map((n) => e.toProto(n as never)).sort()).toEqual(values.sort());
    for (const v of values) expect(e.toProto(e.fromProto(v)! as never)).toBe(v);
    expect(e.fromProto(Object.keys(proto).find((v) => v.endsWith('_UNSPECIFIED'))!)).toBeUndefined();
    expect(e.fromProto('SOMETHING_ELSE')).toBeUndefined();
    expect(e.fromProto(3)).toBeUndefined();
  });
});
