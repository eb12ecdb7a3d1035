// The SDK and CLI are standalone packages (they import no server code), so they keep their own copies
// of the API's vocabularies: the SDK's are generated from the OpenAPI document (wire-types.ts,
// event-types.ts), the CLI's and the error codes are written out. This reads those copies from their
// sources and holds them to the server's one definition of each, so a new error code, event type or
// status cannot be missed there.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES } from '@partner/shared/domain/errors';
import { EVENT_TYPES } from '@partner/shared/domain/events';
import { DOCUMENT_TYPES } from '@partner/shared/domain/attachments';
import { JOB_STATUS, JOB_STATUS_FILTER } from '@partner/shared/domain/jobs';
import { POLICY_STATUSES } from '@partner/shared/domain/policies';
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_DISABLED_REASONS, WEBHOOK_ENDPOINT_STATUSES } from '@partner/shared/domain/webhooks';
import { ROOT } from './support/stack.js';

/** The SDK's wire types, generated from the OpenAPI document (scripts/gen-sdk-types.mjs): one file per resource in wire/. */
const WIRE = 'sdk/client/src/wire/';
/** A source file, or every file of a folder (ending in /) one after another. */
const source = (path: string): string =>
  path.endsWith('/')
    ? readdirSync(join(ROOT, path)).map((f) => readFileSync(join(ROOT, path, f), 'utf8')).join('\n')
    : readFileSync(join(ROOT, path), 'utf8');

/** The string literals of `type NAME = 'a' | 'b' …;` in a source file. */
function union(path: string, name: string): string[] {
  const m = new RegExp(`type ${name} =([^;]+);`).exec(source(path));
  if (!m) throw new Error(`no type ${name} in ${path}`);
  return [...m[1]!.matchAll(/'([^']+)'/g)].map((x) => x[1]!);
}

/** The string literals of `const NAME … = [ … ]` in a source file. */
function list(path: string, name: string): string[] {
  const m = new RegExp(`const ${name}\\b[^=]*= \\[([^\\]]+)\\]`).exec(source(path));
  if (!m) throw new Error(`no const ${name} in ${path}`);
  return [...m[1]!.matchAll(/'([^']+)'/g)].map((x) => x[1]!);
}

/** The string literals of a property's type, `prop?: 'a' | 'b';`, in `interface NAME … { … }` of a source file. */
function field(path: string, iface: string, prop: string): string[] {
  const body = new RegExp(`interface ${iface}\\b[^{]*\\{([^}]*)\\}`).exec(source(path));
  if (!body) throw new Error(`no interface ${iface} in ${path}`);
  const m = new RegExp(`^\\s*${prop}\\??: ([^;]+);`, 'm').exec(body[1]!);
  if (!m) throw new Error(`no ${prop} in interface ${iface} of ${path}`);
  return [...m[1]!.matchAll(/'([^']+)'/g)].map((x) => x[1]!);
}

const sorted = (xs: readonly string[]) => [...xs].sort();

describe("the SDK's and CLI's copies of the API's vocabularies", () => {
  it('error codes', () => {
    expect(sorted(union('sdk/client/src/errors.ts', 'ApiErrorCode'))).toEqual(sorted(Object.keys(ERROR_CODES)));
  });

  it('event types', () => {
    // Generated from the OpenAPI document (test/sdk-events.test.ts holds it to the document).
    expect(sorted(list('sdk/client/src/event-types.ts', 'FEED_EVENT_TYPES'))).toEqual(sorted(EVENT_TYPES));
  });

  it('policy statuses and document types, in the SDK types and the CLI checks', () => {
    expect(sorted(union(WIRE, 'PolicyStatus'))).toEqual(sorted(POLICY_STATUSES));
    expect(sorted(list('sdk/cli/src/command.ts', 'POLICY_STATUSES'))).toEqual(sorted(POLICY_STATUSES));
    expect(sorted(union(WIRE, 'DocumentType'))).toEqual(sorted(DOCUMENT_TYPES));
    expect(sorted(list('sdk/cli/src/command.ts', 'DOCUMENT_TYPES'))).toEqual(sorted(DOCUMENT_TYPES));
  });

  it("job statuses in the SDK's JobStatus: what GET /v1/jobs/{id} shows (accepted and running as processing), canceled included", () => {
    const shown = JOB_STATUS.names.filter((s) => s !== 'accepted' && s !== 'running');
    // JobStatus is Job['status'] (jobs.ts): the statuses of the job types, one each.
    expect(source('sdk/client/src/jobs.ts')).toMatch(/^export type JobStatus = Job\['status'\];$/m);
    const statuses = ['JobSucceeded', 'JobFailed', 'JobCanceled', 'JobProcessing'].flatMap((t) => field(WIRE, t, 'status'));
    expect(sorted(statuses)).toEqual(sorted(['processing', ...shown]));
    expect(shown).toContain('canceled');
  });

  it('a cancelled job and a lost cancel have their typed errors, with the status of the server\'s table', () => {
    const errors = source('sdk/client/src/errors.ts');
    for (const [code, cls] of [['canceled', 'JobCanceledError'], ['job_not_cancelable', 'JobNotCancelableError']] as const) {
      expect(Object.keys(ERROR_CODES), code).toContain(code);
      expect(ERROR_CODES[code as keyof typeof ERROR_CODES].http, code).toBe(409);
      expect(errors, code).toMatch(new RegExp(`case '${code}':\\s*return ${cls};`));
      expect(errors, cls).toMatch(new RegExp(`export class ${cls} extends PartnerApiError`));
    }
  });

  it("the job list's status filter in the SDK types and the CLI", () => {
    expect(sorted(union(WIRE, 'JobStatusFilter'))).toEqual(sorted(JOB_STATUS_FILTER.names));
    expect(sorted(list('sdk/cli/src/commands/jobs.ts', 'JOB_STATUSES'))).toEqual(sorted(JOB_STATUS_FILTER.names));
  });

  it('webhook endpoint statuses and disabled reasons in the SDK types', () => {
    expect(sorted(field(WIRE, 'WebhookEndpoint', 'status'))).toEqual(sorted(WEBHOOK_ENDPOINT_STATUSES));
    expect(sorted(field(WIRE, 'WebhookEndpointUpdate', 'status'))).toEqual(sorted(WEBHOOK_ENDPOINT_STATUSES));
    expect(sorted(field(WIRE, 'WebhookEndpoint', 'disabledReason'))).toEqual(sorted(WEBHOOK_DISABLED_REASONS));
  });

  it('webhook delivery statuses in the SDK types and the CLI check', () => {
    expect(sorted(field(WIRE, 'WebhookDelivery', 'status'))).toEqual(sorted(WEBHOOK_DELIVERY_STATUSES));
    expect(sorted(field(WIRE, 'ListWebhookDeliveriesQuery', 'status'))).toEqual(sorted(WEBHOOK_DELIVERY_STATUSES));
    expect(sorted(list('sdk/cli/src/commands/webhooks.ts', 'DELIVERY_STATUSES'))).toEqual(sorted(WEBHOOK_DELIVERY_STATUSES));
  });
});
