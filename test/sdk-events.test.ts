// The SDK's event types (issue 35) come from the OpenAPI document: sdk/client/src/event-types.ts is what
// scripts/gen-sdk-events.mjs writes from the document's `webhooks` (every event type, ping included,
// each `data` from the eventData of services/gateway/src/resources/*/index.ts), and `PartnerEvent` is a union on `type`
// whose check narrows `data` (type-checked here against the built SDK, as a partner compiles it).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES as SERVER_EVENT_TYPES } from '@partner/shared/domain/events';
import { PING_EVENT_TYPE } from '@partner/shared/domain/webhooks';
import { buildOpenApiDocument } from '../services/gateway/src/openapi/document.js';
import { EVENT_TYPES, FEED_EVENT_TYPES } from '../sdk/client/src/index.js';
import { ROOT } from './support/stack.js';

const run = promisify(execFile);
const doc = buildOpenApiDocument({ baseUrl: 'https://api.example.com', tokenUrl: 'https://auth.example.com/oauth2/token', scope: 'api.example.com/access', environment: 'uat' }) as {
  webhooks: Record<string, unknown>;
  components: { schemas: { EventType: { enum: string[] } } };
};

describe("the SDK's event types are the OpenAPI document's", () => {
  it('EventType is every type the document delivers (the ping too); FeedEventType is its feed list', () => {
    expect([...EVENT_TYPES]).toEqual(Object.keys(doc.webhooks));
    expect(EVENT_TYPES).toContain(PING_EVENT_TYPE);
    expect([...FEED_EVENT_TYPES]).toEqual(doc.components.schemas.EventType.enum);
    expect([...FEED_EVENT_TYPES]).toEqual([...SERVER_EVENT_TYPES]);
  });

  it('event-types.ts is what the generator writes from the document now', async () => {
    const r = await run(process.execPath, [join(ROOT, 'scripts/gen-sdk-events.mjs'), '--check']).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  describe('a partner narrows an event by its type', () => {
    // Under the repository (git-ignored .local/), so @partner/sdk resolves to the workspace's build.
    mkdirSync(join(ROOT, '.local'), { recursive: true });
    const dir = mkdtempSync(join(ROOT, '.local/sdk-events-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('compiles where data is used as its type says, and refuses what it does not have', async () => {
      writeFileSync(
        join(dir, 'use.mts'),
        `import { webhooks, type PartnerEvent } from '@partner/sdk';
declare const e: PartnerEvent;
if (e.type === 'submission.created') console.log(e.data.submissionId, e.data.applicant.legalName);
if (e.type === 'job.failed') console.log(e.data.error.code, e.data.kind);
if (e.type === 'webhook_endpoint.ping') console.log(e.data.endpointId);
if (e.type === 'webhook_endpoint.disabled') console.log(e.data.disabledReason);
const one: PartnerEvent<'attachment.deleted'> = { id: 'evt_1', type: 'attachment.deleted', timestamp: '', data: { submissionId: 's', attachmentId: 'a' } };
const v = webhooks.verify('{}', {}, 'whsec_x');
if (v.type === 'job.succeeded') console.log(v.data.result);
// @ts-expect-error -- data is not narrowed before the type is checked
console.log(e.data.submissionId);
// @ts-expect-error -- a submission has no error
if (e.type === 'submission.created') console.log(e.data.error);
export { one };
`,
      );
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'], noEmit: true, skipLibCheck: false }, include: ['*.mts'] }));
      const out = await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', dir]).then(
        () => '',
        (e: { stdout: string }) => e.stdout,
      );
      expect(out).toBe('');
    });
  });
});
