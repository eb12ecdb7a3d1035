// The first webhook delivery verifies (issue 35, docs/webhooks.md "Register an endpoint"): the partner
// brings its own secret at creation (as the SDK and CLI do), so it verifies, with the reference
// library (standardwebhooks), every delivery from the first attempt of the first one; an endpoint's own
// creation job is never delivered to it; the secret is in no job result, event or log; a malformed
// secret is 400 naming `secret` before any job exists.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { provision, submissionBody } from './support/fixtures.js';
import { useReceivers } from './support/receiver.js';
import { useStack } from './support/use-stack.js';
import { until } from './support/poll.js';

type Event = { id: string; type: string; data: Record<string, unknown> };
const wait = { prefer: 'wait=20' };

describe('webhooks: a secret the partner holds before the first delivery', () => {
  let token: string;
  const stack = useStack(async (s) => {
    await s.startAll({}, { dispatcher: true });
    token = await provision(s);
  });
  const receiver = useReceivers();

  it('verifies every delivery at the first attempt; the endpoint\'s own creation job is not delivered to it; the secret is nowhere else', async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const rx = await receiver();
    // The receiver refuses what does not verify, as a partner's does (a refused attempt would be retried).
    rx.answer = (r) => {
      try {
        new Webhook(secret).verify(r.body, { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) });
        return 204;
      } catch {
        return 400;
      }
    };
    const created = await stack.api('POST', '/v1/webhook-endpoints', { token, headers: wait, json: { url: rx.url, eventTypes: ['*'], secret } });
    expect(created.status, created.text).toBe(200);
    const endpointId = created.body.endpointId as string;
    expect(created.text).not.toContain('whsec_');
    // The service signs with the partner's secret.
    expect((await stack.api('GET', `/v1/webhook-endpoints/${endpointId}/secret`, { token })).body).toEqual({ secret });

    const sub = await stack.api('POST', '/v1/submissions', { token, headers: wait, json: submissionBody() });
    expect(sub.status, sub.text).toBe(200);
    await rx.waitFor('the submission and its job', (rs) => rs.length >= 2);
    const got = rx.received.map((r) => JSON.parse(r.body) as Event);
    expect(got.map((e) => e.type).sort()).toEqual(['job.succeeded', 'submission.created']);
    expect(got.find((e) => e.type === 'job.succeeded')!.data).toMatchObject({ kind: 'submission.create' });

    // The creation job's job.succeeded is in the feed (with no secret), yet was never queued for this endpoint.
    const feed = await stack.api('GET', '/v1/events?types=job.succeeded', { token });
    const own = (feed.body.items as Event[]).find((e) => e.data.kind === 'webhook_endpoint.create');
    expect(own?.data.result).toMatchObject({ endpointId });
    expect(feed.text).not.toContain('whsec_');
    const job = await stack.api('GET', `/v1/jobs/${own!.data.id as string}`, { token });
    expect(job.status).toBe(200);
    expect(job.text).not.toContain('whsec_');
    // The receiver has answered; the dispatcher records the outcome just after: read the log once it has.
    type Delivery = { eventId: string; status: string; attempts: number; lastResponseStatus: number };
    const items = await until('both deliveries settled in the log', async () => {
      const log = await stack.api('GET', `/v1/webhook-endpoints/${endpointId}/deliveries`, { token });
      const rows = log.body.items as Delivery[];
      return rows.length >= 2 && rows.every((d) => d.status !== 'pending') && rows;
    });
    expect(items.map((d) => d.eventId)).not.toContain(own!.id);
    expect(items.map((d) => d.eventId).sort()).toEqual(got.map((e) => e.id).sort());
    for (const d of items) expect(d).toMatchObject({ status: 'succeeded', attempts: 1, lastResponseStatus: 204 });
    expect(stack.logs.join('\n')).not.toContain(secret.slice('whsec_'.length));
  });

  it('an endpoint created without a secret does not get its own creation job either', async () => {
    const rx = await receiver();
    const created = await stack.api('POST', '/v1/webhook-endpoints', { token, headers: wait, json: { url: rx.url, eventTypes: ['job.succeeded'] } });
    expect(created.status, created.text).toBe(200);
    const sub = await stack.api('POST', '/v1/submissions', { token, headers: wait, json: submissionBody() });
    const [first] = await rx.waitFor('the submission job', (rs) => rs.length >= 1 && rs);
    expect((JSON.parse(first!.body) as Event).data).toMatchObject({ kind: 'submission.create', result: { submissionId: sub.body.submissionId } });
    expect(rx.received.map((r) => (JSON.parse(r.body) as Event).data.kind)).not.toContain('webhook_endpoint.create');
  });

  it('refuses a malformed secret with 400 naming `secret`, before any job', async () => {
    const rx = await receiver();
    const bad = ['whsec_short', `whsec_${randomBytes(16).toString('base64')}`, `whsec_${randomBytes(65).toString('base64')}`, randomBytes(32).toString('base64'), `whsec_${randomBytes(32).toString('base64url')}-_`, 42];
    for (const secret of bad) {
      const res = await stack.api('POST', '/v1/webhook-endpoints', { token, headers: wait, json: { url: rx.url, eventTypes: ['*'], secret } });
      expect(res.status, `${String(secret)}: ${res.text}`).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_error', retryable: false });
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['secret']);
    }
    const list = await stack.api('GET', '/v1/webhook-endpoints', { token });
    expect(list.body.items.map((e: { url: string }) => e.url)).not.toContain(rx.url);
  });
});
