// Webhooks (docs/webhooks.md, docs/api.md "Webhooks"): endpoints managed as jobs, signed deliveries verified with the
// reference library (standardwebhooks), the retry schedule, 410 disabling with its event, a hanging
// receiver that delays no one else, rotation, recover and ping, the delivery log, partner isolation,
// disabling an endpoint that kept failing (and not one a success came between),
// a dispatcher SIGKILLed mid-delivery, and the SSRF refusals at registration, PATCH and delivery (strict,
// and where loopback is allowed: nothing else that is not public, nor IPv4 embedded in IPv6).
import { afterAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { provision, submissionBody } from './support/fixtures.js';
import { scrape } from './support/metrics.js';
import { until } from './support/poll.js';
import { Receiver, useReceivers, type Received } from './support/receiver.js';
import { ALL_PERMISSIONS, Stack } from './support/stack.js';
import { useStack } from './support/use-stack.js';

const RETRY_S = [0.6, 1.2];

type Endpoint = { endpointId: string; url: string; eventTypes: string[]; status: string; disabledReason?: string };

/** The headers a Standard Webhooks verifier takes. */
const headersOf = (r: Received): Record<string, string> => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

/** Verifies a received delivery with the reference implementation; returns the event. */
function verified(r: Received, secret: string): { id: string; type: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(r.body, headersOf(r)) as { id: string; type: string; data: Record<string, unknown> };
}

function helpers(stack: () => Stack) {
  const wait = { prefer: 'wait=20' };
  return {
    async create(token: string, url: string, eventTypes: string[], extra: Record<string, unknown> = {}): Promise<Endpoint> {
      const res = await stack().api('POST', '/v1/webhook-endpoints', { token, headers: wait, json: { url, eventTypes, ...extra } });
      expect(res.status, res.text).toBe(200);
      return res.body as Endpoint;
    },
    async secret(token: string, id: string): Promise<string> {
      const res = await stack().api('GET', `/v1/webhook-endpoints/${id}/secret`, { token });
      expect(res.status, res.text).toBe(200);
      return res.body.secret as string;
    },
    async submit(token: string): Promise<string> {
      const res = await stack().api('POST', '/v1/submissions', { token, headers: wait, json: submissionBody() });
      expect(res.status, res.text).toBe(200);
      return res.body.submissionId as string;
    },
    async deliveries(token: string, id: string, query = ''): Promise<Record<string, any>[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
      const res = await stack().api('GET', `/v1/webhook-endpoints/${id}/deliveries${query}`, { token });
      expect(res.status, res.text).toBe(200);
      return res.body.items;
    },
    async endpoint(token: string, id: string): Promise<Endpoint> {
      const res = await stack().api('GET', `/v1/webhook-endpoints/${id}`, { token });
      expect(res.status, res.text).toBe(200);
      return res.body as Endpoint;
    },
    async job(token: string, method: string, path: string, json?: unknown) {
      return stack().api(method, path, { token, headers: wait, ...(json !== undefined ? { json } : {}) });
    },
  };
}

/**
 * A stack with a dispatcher run with `env`, a provisioned partner (its token handed to `ready`), and
 * receivers that are stopped after the block.
 */
function withDispatcher(env: Record<string, string>, ready: (token: string) => void) {
  const stack = useStack(async (stack) => {
    await stack.startAll(env, { dispatcher: true });
    ready(await provision(stack));
  });
  return { stack, receiver: useReceivers() };
}

describe('webhooks: endpoints, signed deliveries, retries', () => {
  let token: string;
  const { stack, receiver } = withDispatcher(
    { WEBHOOK_RETRY_SCHEDULE: RETRY_S.join(','), WEBHOOK_RETRY_JITTER: '0', WEBHOOK_TIMEOUT_MS: '3000' },
    (t) => (token = t),
  );
  const h = helpers(() => stack);

  it('sends each matching event once per endpoint, signed (verified by standardwebhooks), and nothing else', async () => {
    const some = await receiver();
    const all = await receiver();
    const narrow = await h.create(token, some.url, ['submission.created'], { description: 'only submissions' });
    expect(narrow).toMatchObject({ url: some.url, eventTypes: ['submission.created'], status: 'enabled', description: 'only submissions' });
    expect(narrow.endpointId).toMatch(/^we_[0-9a-f]{32}$/);
    expect(JSON.stringify(narrow)).not.toContain('whsec_');
    const wide = await h.create(token, all.url, ['*']);
    const [narrowSecret, wideSecret] = [await h.secret(token, narrow.endpointId), await h.secret(token, wide.endpointId)];
    expect(narrowSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const submissionId = await h.submit(token);
    await all.waitFor('submission.created and job.succeeded', (rs) => rs.length >= 2);
    await some.waitFor('submission.created', (rs) => rs.length >= 1);
    // Let anything that should not come have its chance: one more event that both see.
    const second = await h.submit(token);
    await some.waitFor('the second submission', (rs) => rs.some((r) => r.body.includes(second)));
    await all.waitFor('the second submission and its job', (rs) => rs.length >= 4);

    const narrowEvents = some.received.map((r) => verified(r, narrowSecret));
    expect(narrowEvents.map((e) => e.type)).toEqual(['submission.created', 'submission.created']);
    expect(narrowEvents[0]!.data).toMatchObject({ submissionId });
    const wideEvents = all.received.map((r) => verified(r, wideSecret));
    expect(wideEvents.map((e) => e.type).sort()).toEqual(['job.succeeded', 'job.succeeded', 'submission.created', 'submission.created']);
    // One endpoint's secret does not verify another's deliveries.
    expect(() => verified(some.received[0]!, wideSecret)).toThrow();
    for (const r of [...some.received, ...all.received]) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-id']).toBe((JSON.parse(r.body) as { id: string }).id);
    }
    // The body is the event exactly as the feed shows it.
    const feed = await stack.api('GET', `/v1/events/${narrowEvents[0]!.id}`, { token });
    expect(JSON.parse(some.received[0]!.body)).toEqual(feed.body);
    // Exactly once each: ids are distinct.
    expect(new Set(wideEvents.map((e) => e.id)).size).toBe(4);

    const log = await until('the delivery log shows both succeeded', async () => {
      const items = await h.deliveries(token, narrow.endpointId);
      return items.length === 2 && items.every((d) => d.status === 'succeeded') && items;
    });
    expect(log[0]).toMatchObject({ eventType: 'submission.created', status: 'succeeded', attempts: 1, lastResponseStatus: 200 });
    expect(log[0]!.deliveryId).toMatch(/^whd_[0-9a-f]{32}$/);
    // The secret appears in no log line.
    expect(stack.logs.join('\n')).not.toContain(narrowSecret.slice('whsec_'.length));
  });

  it('retries a failing receiver on the schedule, never early, with the same webhook-id, until it succeeds', async () => {
    const flaky = await receiver();
    flaky.answer = (_r, i) => (i < 2 ? 500 : 200);
    const ep = await h.create(token, flaky.url, ['submission.created']);
    const secret = await h.secret(token, ep.endpointId);
    await h.submit(token);
    const got = await flaky.waitFor('three attempts', (rs) => rs.length >= 3 && rs);
    const ids = got.map((r) => verified(r, secret).id);
    expect(new Set(ids).size).toBe(1);
    // Never earlier than the schedule (jitter 0 here); the margin below is for a loaded machine.
    const gaps = [got[1]!.at - got[0]!.at, got[2]!.at - got[1]!.at];
    expect(gaps[0]).toBeGreaterThanOrEqual(RETRY_S[0]! * 1000 - 50);
    expect(gaps[1]).toBeGreaterThanOrEqual(RETRY_S[1]! * 1000 - 50);
    expect(gaps[0]).toBeLessThan(RETRY_S[0]! * 1000 + 3000);
    const [d] = await until('the delivery succeeded', async () => {
      const items = await h.deliveries(token, ep.endpointId);
      return items[0]?.status === 'succeeded' && items;
    });
    expect(d).toMatchObject({ attempts: 3, lastResponseStatus: 200 });
    expect(d!.nextAttemptAt).toBeUndefined();
  });

  it("counts what it does in the dispatcher's metrics: attempts by outcome, final states, latency, backlog", async () => {
    const m = await scrape(stack.opsUrls.dispatcher!);
    expect(m.sum('partner_webhook_attempts_total', { outcome: 'success' })).toBeGreaterThan(0);
    expect(m.sum('partner_webhook_attempts_total', { outcome: 'http_error' })).toBeGreaterThan(0);
    expect(m.sum('partner_webhook_deliveries_total', { status: 'succeeded' })).toBeGreaterThan(0);
    expect(m.sum('partner_webhook_attempt_duration_seconds_count')).toBeGreaterThan(0);
    for (const name of ['partner_webhook_pending_deliveries', 'partner_webhook_oldest_pending_age_seconds', 'partner_webhook_in_flight']) {
      expect(Number.isFinite(m.sum(name)), name).toBe(true);
    }
    expect(m.sum('partner_webhook_partner_pending_deliveries', { partner: 'other' })).toBeGreaterThanOrEqual(0);
    expect(m.sum('partner_webhook_endpoints_disabled_total', { reason: 'gone' })).toBe(0);
  });

  it('settles successes through its batched settlement (partner_db_batch_size, step SettleDeliveries): each delivery once, succeeded at its first attempt', async () => {
    const settled = async () => {
      const m = await scrape(stack.opsUrls.dispatcher!);
      return { batches: m.sum('partner_db_batch_size_count', { step: 'SettleDeliveries' }), deliveries: m.sum('partner_db_batch_size_sum', { step: 'SettleDeliveries' }) };
    };
    const before = await settled();
    // Twelve endpoints of one event: claimed together, sent at once, settled as they finish.
    const receivers = await Promise.all(Array.from({ length: 12 }, () => receiver()));
    const endpoints = [];
    for (const r of receivers) endpoints.push(await h.create(token, r.url, ['submission.created']));
    const submissionId = await h.submit(token);
    for (const r of receivers) await r.waitFor('the submission', (rs) => rs.some((x) => x.body.includes(submissionId)));
    for (const ep of endpoints) {
      const items = await until('the delivery succeeded', async () => {
        const ds = await h.deliveries(token, ep.endpointId);
        return ds.length > 0 && ds.every((d) => d.status === 'succeeded') && ds;
      });
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ eventType: 'submission.created', attempts: 1, lastResponseStatus: 200 });
    }
    for (const r of receivers) expect(r.received.filter((x) => x.body.includes(submissionId))).toHaveLength(1);
    const after = await settled();
    expect(after.deliveries - before.deliveries).toBeGreaterThanOrEqual(12);
    expect(after.batches - before.batches).toBeGreaterThan(0);
    expect(after.batches - before.batches).toBeLessThanOrEqual(after.deliveries - before.deliveries);
    for (const ep of endpoints) await h.job(token, 'DELETE', `/v1/webhook-endpoints/${ep.endpointId}`);
  });

  it('a receiver that keeps failing: the delivery fails after the last retry, with the reason', async () => {
    const broken = await receiver();
    broken.answer = () => ({ status: 503, headers: { 'retry-after': '0' } });
    const ep = await h.create(token, broken.url, ['submission.created']);
    await h.submit(token);
    const [d] = await until('the delivery failed', async () => {
      const items = await h.deliveries(token, ep.endpointId, '?status=failed');
      return items.length === 1 && items;
    });
    expect(d).toMatchObject({ status: 'failed', attempts: RETRY_S.length + 1, lastResponseStatus: 503, lastError: 'the receiver answered 503' });
    expect(broken.received).toHaveLength(RETRY_S.length + 1);
    // The endpoint stays enabled: failing for 5 days (not seconds) disables it.
    expect((await h.endpoint(token, ep.endpointId)).status).toBe('enabled');
    await h.job(token, 'DELETE', `/v1/webhook-endpoints/${ep.endpointId}`);
  });

  it('a 410 disables the endpoint at once and emits webhook_endpoint.disabled; recover enables it and sends again', async () => {
    const gone = await receiver();
    gone.answer = () => 410;
    const watcher = await receiver();
    const ep = await h.create(token, gone.url, ['submission.created']);
    const watch = await h.create(token, watcher.url, ['webhook_endpoint.disabled']);
    const since = new Date().toISOString();
    await h.submit(token);
    const disabledEvent = await watcher.waitFor('webhook_endpoint.disabled', (rs) => rs[0]);
    const event = verified(disabledEvent, await h.secret(token, watch.endpointId));
    expect(event).toMatchObject({ type: 'webhook_endpoint.disabled', data: { endpointId: ep.endpointId, status: 'disabled', disabledReason: 'gone' } });
    expect(gone.received).toHaveLength(1);
    expect(await h.endpoint(token, ep.endpointId)).toMatchObject({ status: 'disabled', disabledReason: 'gone' });
    const feed = await stack.api('GET', '/v1/events?types=webhook_endpoint.disabled', { token });
    expect(feed.body.items.map((e: { id: string }) => e.id)).toEqual([event.id]);
    // Nothing more is sent while it is disabled.
    const [d] = await h.deliveries(token, ep.endpointId);
    expect(d).toMatchObject({ status: 'failed', attempts: 1, lastResponseStatus: 410 });

    gone.answer = () => 200;
    const recovered = await h.job(token, 'POST', `/v1/webhook-endpoints/${ep.endpointId}/recover`, { since });
    expect(recovered.status, recovered.text).toBe(200);
    expect(recovered.body).toMatchObject({ endpointId: ep.endpointId, queued: 1 });
    const again = await gone.waitFor('the recovered delivery', (rs) => rs.length >= 2 && rs[1]);
    expect(again.headers['webhook-id']).toBe(gone.received[0]!.headers['webhook-id']);
    expect((await h.endpoint(token, ep.endpointId)).status).toBe('enabled');
  });

  it('a hanging receiver is timed out and retried, and delays no other endpoint', async () => {
    const hanging = await receiver();
    hanging.answer = () => 'hang';
    const healthy = await receiver();
    const slow = await h.create(token, hanging.url, ['*']);
    const fast = await h.create(token, healthy.url, ['submission.created']);
    const n = 8;
    const started = Date.now();
    await Promise.all(Array.from({ length: n }, () => h.submit(token)));
    await hanging.waitFor('the hanging receiver has requests', (rs) => rs.length >= 1);
    const all = await healthy.waitFor(`${n} deliveries`, (rs) => rs.length >= n && rs);
    // All of the healthy endpoint's deliveries arrived before the hanging one's first attempt could
    // even time out (3 s): nobody queued behind it.
    const lastHealthy = Math.max(...all.map((r) => r.at));
    const slowLog = await h.deliveries(token, slow.endpointId);
    expect(slowLog.every((d) => d.lastAttemptAt === null)).toBe(true);
    expect(lastHealthy - started).toBeLessThan(8_000);
    const [timedOut] = await until('a timed-out attempt in the log', async () => {
      const items = await h.deliveries(token, slow.endpointId);
      return items.filter((d) => d.lastError?.startsWith('no answer within')).length > 0 && items.filter((d) => d.lastError);
    });
    expect(timedOut).toMatchObject({ status: 'pending', attempts: 1 });
    expect(timedOut!.nextAttemptAt).toBeDefined();
    for (const id of [slow.endpointId, fast.endpointId]) await h.job(token, 'DELETE', `/v1/webhook-endpoints/${id}`);
  });

  it('rotation: both secrets sign during the overlap, only the new one after it', async () => {
    const r = await receiver();
    const ep = await h.create(token, r.url, ['submission.created']);
    const before = await h.secret(token, ep.endpointId);
    const rotated = await h.job(token, 'POST', `/v1/webhook-endpoints/${ep.endpointId}/secret/rotate`);
    expect(rotated.status, rotated.text).toBe(200);
    expect(JSON.stringify(rotated.body)).not.toContain('whsec_');
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.parse(rotated.body.rotatedAt)).toBe(24 * 3_600_000);
    const after = await h.secret(token, ep.endpointId);
    expect(after).not.toBe(before);

    await h.submit(token);
    const first = await r.waitFor('a delivery during the overlap', (rs) => rs[0]);
    expect(String(first.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(first, before).type).toBe('submission.created');
    expect(verified(first, after).type).toBe('submission.created');

    // The overlap ends (24 h, brought forward here).
    await stack.sql("UPDATE events.webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE endpoint_id = $1", [ep.endpointId]);
    await h.submit(token);
    const second = await r.waitFor('a delivery after the overlap', (rs) => rs[1]);
    expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verified(second, after).type).toBe('submission.created');
    expect(() => verified(second, before)).toThrow();
  });

  it('ping sends webhook_endpoint.ping to that endpoint alone; update and delete are jobs; another partner sees 404', async () => {
    const owner = { tenant: 'tenant-webhooks', partner: `partner-${Date.now()}` };
    const token = await stack.token(await stack.createClient(owner));
    const r = await receiver();
    const other = await receiver();
    const ep = await h.create(token, r.url, ['job.failed']);
    await h.create(token, other.url, ['*']);
    const ping = await h.job(token, 'POST', `/v1/webhook-endpoints/${ep.endpointId}/ping`);
    expect(ping.status, ping.text).toBe(200);
    const got = await r.waitFor('the ping', (rs) => rs[0]);
    expect(verified(got, await h.secret(token, ep.endpointId))).toMatchObject({ id: ping.body.eventId, type: 'webhook_endpoint.ping', data: { endpointId: ep.endpointId } });
    const feed = await stack.api('GET', `/v1/events/${ping.body.eventId}`, { token });
    expect(feed.status).toBe(404);

    // Without a wait: 202 with the job handle, like every mutation.
    const accepted = await stack.api('PATCH', `/v1/webhook-endpoints/${ep.endpointId}`, { token, json: { description: 'renamed', status: 'disabled' } });
    expect(accepted.status, accepted.text).toBe(202);
    const job = await until('the update job settled', async () => {
      const j = await stack.api('GET', `/v1/jobs/${accepted.body.id}`, { token });
      return j.body.status === 'succeeded' && j.body;
    });
    expect(job).toMatchObject({ kind: 'webhook_endpoint.update', result: { description: 'renamed', status: 'disabled', disabledReason: 'partner' } });

    const stranger = await stack.token(await stack.createClient());
    for (const [method, path] of [
      ['GET', `/v1/webhook-endpoints/${ep.endpointId}`],
      ['GET', `/v1/webhook-endpoints/${ep.endpointId}/secret`],
      ['GET', `/v1/webhook-endpoints/${ep.endpointId}/deliveries`],
      ['PATCH', `/v1/webhook-endpoints/${ep.endpointId}`],
      ['DELETE', `/v1/webhook-endpoints/${ep.endpointId}`],
      ['POST', `/v1/webhook-endpoints/${ep.endpointId}/ping`],
    ] as const) {
      const res = await stack.api(method, path, { token: stranger, ...(method === 'PATCH' ? { json: { description: 'x' } } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await stack.api('GET', '/v1/webhook-endpoints', { token: stranger })).body).toEqual({ items: [], nextCursor: null });

    const reader = await stack.token(await stack.createClient({ ...owner, permissions: ALL_PERMISSIONS.filter((p) => p !== 'webhooks/write') }));
    expect((await stack.api('GET', `/v1/webhook-endpoints/${ep.endpointId}`, { token: reader })).status).toBe(200);
    expect((await stack.api('GET', `/v1/webhook-endpoints/${ep.endpointId}/secret`, { token: reader })).status).toBe(403);
    expect((await stack.api('POST', '/v1/webhook-endpoints', { token: reader, json: { url: r.url, eventTypes: ['*'] } })).status).toBe(403);

    const deleted = await h.job(token, 'DELETE', `/v1/webhook-endpoints/${ep.endpointId}`);
    expect(deleted.body).toEqual({ endpointId: ep.endpointId, deleted: true });
    expect((await stack.api('GET', `/v1/webhook-endpoints/${ep.endpointId}`, { token })).status).toBe(404);
  });

  it('refuses bad endpoints with 400 naming the field, and fails the job past the per-partner limit', async () => {
    const bad = async (json: unknown) => {
      const res = await stack.api('POST', '/v1/webhook-endpoints', { token, json });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      return res.body.error.details.map((d: { field: string }) => d.field);
    };
    expect(await bad({ url: 'https://hooks.example.com/x', eventTypes: [] })).toEqual(['eventTypes']);
    expect(await bad({ url: 'https://hooks.example.com/x', eventTypes: ['submission.exploded'] })).toEqual(['eventTypes']);
    expect(await bad({ url: 'https://hooks.example.com/x', eventTypes: ['*', 'job.failed'] })).toEqual(['eventTypes']);
    expect(await bad({ url: 'ftp://hooks.example.com/x', eventTypes: ['*'] })).toEqual(['url']);
    expect(await bad({ url: 'https://user:pw@hooks.example.com/x', eventTypes: ['*'] })).toEqual(['url']);
    expect(await bad({ url: `https://hooks.example.com/${'a'.repeat(2048)}`, eventTypes: ['*'] })).toEqual(['url']);
    expect(await bad({ eventTypes: ['*'] })).toEqual(['url']);
    expect(await bad({ url: 'https://hooks.example.com/x', eventTypes: ['*'], secret: 'mine' })).toEqual(['secret']);

    // A partner of its own: 16 endpoints (the default limit), then one more.
    const fresh = await stack.token(await stack.createClient());
    const r = await receiver();
    await Promise.all(Array.from({ length: 16 }, () => h.create(fresh, r.url, ['job.failed'])));
    const listed = await stack.api('GET', '/v1/webhook-endpoints?limit=10', { token: fresh });
    expect(listed.body.items).toHaveLength(10);
    const rest = await stack.api('GET', `/v1/webhook-endpoints?limit=10&cursor=${listed.body.nextCursor}`, { token: fresh });
    expect(rest.body.items).toHaveLength(6);
    expect(rest.body.nextCursor).toBeNull();
    const over = await stack.api('POST', '/v1/webhook-endpoints', { token: fresh, headers: { prefer: 'wait=20' }, json: { url: r.url, eventTypes: ['job.failed'] } });
    expect(over.status, over.text).toBe(422);
    expect(over.body.error).toMatchObject({ code: 'limit_exceeded', retryable: false });
    expect(over.body.jobId).toMatch(/^job_/);
  });
});

describe('webhooks: an endpoint failing for WEBHOOK_DISABLE_AFTER_HOURS with no success is disabled', () => {
  // A second stands for the 5 days: shorter than the first retry's wait (1.5 s), so an endpoint's
  // second failure in a row disables it unless a success came in between, and long enough that no
  // first attempt's settling, however slow the machine, reaches it.
  const DISABLE_AFTER_S = 1;
  let token: string;
  const { stack, receiver } = withDispatcher(
    { WEBHOOK_RETRY_SCHEDULE: '1.5,3,3', WEBHOOK_RETRY_JITTER: '0', WEBHOOK_DISABLE_AFTER_HOURS: String(DISABLE_AFTER_S / 3600) },
    (t) => (token = t),
  );
  const h = helpers(() => stack);

  it('a success in between starts the count again: failures either side of it do not disable', async () => {
    const flaky = await receiver();
    // Each delivery fails once, then succeeds.
    flaky.answer = (_r, i) => (i % 2 === 0 ? 503 : 200);
    const ep = await h.create(token, flaky.url, ['submission.created']);
    await h.submit(token);
    await until('the first delivery succeeded at its retry', async () => {
      const items = await h.deliveries(token, ep.endpointId, '?status=succeeded');
      return items.length === 1;
    });
    // This failure comes more than DISABLE_AFTER_S after the first one: only the success between
    // them keeps the endpoint enabled.
    await h.submit(token);
    const items = await until('the second delivery succeeded at its retry', async () => {
      const items = await h.deliveries(token, ep.endpointId, '?status=succeeded');
      return items.length === 2 && items;
    });
    expect(items.map((d) => d.attempts)).toEqual([2, 2]);
    expect(flaky.received).toHaveLength(4);
    expect(await h.endpoint(token, ep.endpointId)).toMatchObject({ status: 'enabled' });
    await h.job(token, 'DELETE', `/v1/webhook-endpoints/${ep.endpointId}`);
  });

  it('fails on: disabled (reason failing) at the first failure past the limit, its pending delivery failed, the event sent and counted', async () => {
    const broken = await receiver();
    broken.answer = () => 503;
    const watcher = await receiver();
    const ep = await h.create(token, broken.url, ['submission.created']);
    const watch = await h.create(token, watcher.url, ['webhook_endpoint.disabled']);
    await h.submit(token);
    const disabledEvent = await watcher.waitFor('webhook_endpoint.disabled', (rs) => rs[0]);
    const event = verified(disabledEvent, await h.secret(token, watch.endpointId));
    expect(event).toMatchObject({ type: 'webhook_endpoint.disabled', data: { endpointId: ep.endpointId, status: 'disabled', disabledReason: 'failing' } });
    expect(await h.endpoint(token, ep.endpointId)).toMatchObject({ status: 'disabled', disabledReason: 'failing' });
    // The second attempt (1.5 s after the first) disabled it; the retry it would have had is not sent.
    const [d] = await h.deliveries(token, ep.endpointId);
    expect(d).toMatchObject({ status: 'failed', attempts: 2, lastResponseStatus: 503, lastError: 'the receiver answered 503; the endpoint was disabled: it kept failing' });
    expect(broken.received).toHaveLength(2);
    const m = await scrape(stack.opsUrls.dispatcher!);
    expect(m.sum('partner_webhook_endpoints_disabled_total', { reason: 'failing' })).toBe(1);
    expect(m.sum('partner_webhook_endpoints_disabled_total', { reason: 'gone' })).toBe(0);
  });
});

describe('webhooks: a dispatcher killed mid-delivery', () => {
  let token: string;
  let r: Receiver;
  const h = helpers(() => stack);
  const stack = useStack(async (stack) => {
    await stack.startAll();
    token = await provision(stack);
    r = await Receiver.start();
  });
  afterAll(async () => {
    await r?.stop();
  });

  it('loses no delivery: a new dispatcher sends, at least once, everything the killed one held', async () => {
    const env = { WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_ENDPOINT_CONCURRENCY: '2', WEBHOOK_ENDPOINT_MAX_IN_FLIGHT: '4', WEBHOOK_POLL_MS: '200' };
    const first = await stack.spawnService('dispatcher', env);
    const ep = await h.create(token, r.url, ['submission.created']);
    // The receiver holds the first requests until the dispatcher sending them is dead.
    let firstBatch = true;
    r.answer = () => (firstBatch ? 'hang' : 200);
    const ids = await Promise.all(Array.from({ length: 6 }, () => h.submit(token)));
    await r.waitFor('deliveries in flight', (rs) => rs.length >= 2);
    first.kill('SIGKILL');
    await first.exited;
    firstBatch = false;
    await stack.spawnService('dispatcher', env);
    await r.waitFor('every submission delivered', (rs) => ids.every((id) => rs.some((x) => x.body.includes(id))), 30_000);
    const log = await until('every delivery succeeded', async () => {
      const items = await h.deliveries(token, ep.endpointId, '?limit=50');
      return items.length === 6 && items.every((d) => d.status === 'succeeded') && items;
    }, 30_000);
    expect(log).toHaveLength(6);
  });
});

describe('webhooks: targets refused (SSRF) when loopback targets are not allowed, and anything else not public always', () => {
  let token: string;
  let r: Receiver;
  /** A second gateway of the same stack, with WEBHOOK_ALLOW_LOOPBACK_TARGETS=true (the local mode). */
  let loopbackGateway: string;
  const h = helpers(() => stack);
  const stack = useStack(async (stack) => {
    r = await Receiver.start();
    // These tests are about addresses: every port they use is allowed (80 as in UAT, and the
    // receiver's), so only the address can be what refuses (WEBHOOK_ALLOWED_PORTS has its own block).
    const ports = `80,443,8443,${new URL(r.url).port}`;
    await stack.startAll({ WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'false', WEBHOOK_RETRY_SCHEDULE: '60', WEBHOOK_ALLOWED_PORTS: ports }, { dispatcher: true });
    const strictGateway = stack.gatewayUrl;
    await stack.startGateway({ WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'true', WEBHOOK_ALLOWED_PORTS: ports });
    loopbackGateway = stack.gatewayUrl;
    stack.gatewayUrl = strictGateway;
    token = await provision(stack);
  });
  afterAll(async () => {
    await r?.stop();
  });

  // Registrations and PATCHes expected to be refused subscribe to an event this block never emits: if
  // the check were broken, the endpoint they made would still never be sent to (no traffic leaves
  // loopback, whatever happens).
  const NEVER_HERE = ['attachment.deleted'];

  /** 400 validation_error naming url alone, for a refused target. */
  const refusedUrl = (res: { status: number; text: string; body: any }) => { // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details).toEqual([{ field: 'url', issue: expect.stringMatching(/private address/) }]);
  };

  it.each([
    'http://127.0.0.1/hooks',
    'http://[::1]/hooks',
    'http://169.254.169.254/latest/meta-data',
    'http://10.0.0.1/hooks',
    'http://192.168.1.20/hooks',
    'http://[::ffff:127.0.0.1]/hooks',
    'http://[fd00::1]/hooks',
    'http://[fe80::1]/hooks',
    'http://0x7f000001/hooks',
    'http://2130706433/hooks',
    'http://0177.0.0.1/hooks',
    'http://0x7f.1/hooks',
    'http://127.1/hooks',
    'http://0/hooks',
    'http://0.0.0.0/hooks',
    'http://localhost/hooks',
    // The attack's IPv4-compatible addresses (issue 36), and the other IPv6 forms embedding IPv4.
    'http://[::127.0.0.1]/',
    'http://[::7f00:1]/',
    'http://[::a9fe:a9fe]/',
    'http://[::10.0.0.1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:0:127.0.0.1]/',
    'http://[64:ff9b::7f00:1]/',
    'http://[64:ff9b:1::808:808]/',
    'http://[2002:7f00:1::1]/',
    'http://[2001::1]/',
    'http://[fd00:ec2::254]/latest/meta-data',
  ])('refuses %s at registration: 400 naming url', async (url) => {
    refusedUrl(await stack.api('POST', '/v1/webhook-endpoints', { token, json: { url, eventTypes: NEVER_HERE } }));
  });

  it('refuses non-loopback and embedded targets at registration and PATCH even where loopback is allowed', async () => {
    const targets = [
      'http://[::127.0.0.1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://169.254.169.254/',
      'http://10.0.0.1/',
      'http://[64:ff9b::7f00:1]/',
    ];
    // Loopback itself is allowed there.
    const created = await stack.api('POST', '/v1/webhook-endpoints', {
      base: loopbackGateway,
      token,
      headers: { prefer: 'wait=20' },
      json: { url: r.url, eventTypes: NEVER_HERE },
    });
    expect(created.status, created.text).toBe(200);
    const ep = created.body as Endpoint;
    for (const url of targets) {
      for (const base of [loopbackGateway, stack.gatewayUrl]) {
        refusedUrl(await stack.api('POST', '/v1/webhook-endpoints', { base, token, json: { url, eventTypes: NEVER_HERE } }));
        refusedUrl(await stack.api('PATCH', `/v1/webhook-endpoints/${ep.endpointId}`, { base, token, json: { url } }));
      }
    }
    // And loopback not where it is not allowed.
    refusedUrl(await stack.api('PATCH', `/v1/webhook-endpoints/${ep.endpointId}`, { token, json: { url: r.url } }));
    expect((await h.endpoint(token, ep.endpointId)).url).toBe(r.url);
    expect((await h.job(token, 'DELETE', `/v1/webhook-endpoints/${ep.endpointId}`)).status).toBe(200);
  });

  it('refuses at delivery too, before connecting: a host that resolves to loopback now, and addresses written into the database', async () => {
    // Registered through the gateway that allows loopback, as if it had pointed elsewhere then (DNS
    // rebinding): the dispatcher, which does not allow loopback, judges again before any connection.
    const target = new URL(r.url);
    for (const url of [`http://localhost:${target.port}/hooks`, r.url, `http://[::ffff:127.0.0.1]:${target.port}/hooks`]) {
      const res = await stack.api('POST', '/v1/webhook-endpoints', { base: loopbackGateway, token, headers: { prefer: 'wait=20' }, json: { url, eventTypes: ['submission.created'] } });
      expect(res.status, res.text).toBe(200);
      const ep = res.body as Endpoint;
      await h.submit(token);
      const [d] = await until(`the delivery to ${url} refused`, async () => {
        const items = await h.deliveries(token, ep.endpointId);
        return items[0]?.lastError && items;
      });
      expect(d!.lastError).toMatch(/^refused: .*(loopback|127\.0\.0\.1|::1)/);
      expect(d!.lastResponseStatus).toBeUndefined();
      await h.job(token, 'DELETE', `/v1/webhook-endpoints/${ep.endpointId}`);
    }
    expect(r.received).toHaveLength(0);
  });
});

describe('webhooks: allowed target ports (WEBHOOK_ALLOWED_PORTS, 443 and 8443 by default)', () => {
  let token: string;
  // The test stack's local mode (loopback allowed): the receivers' ephemeral loopback ports are
  // allowed, the default list holds for everything else.
  const { stack, receiver } = withDispatcher({ WEBHOOK_RETRY_SCHEDULE: '60' }, (t) => (token = t));
  const h = helpers(() => stack);
  // Endpoints registered to a public address subscribe to an event this block never emits.
  const NEVER_HERE = ['attachment.deleted'];
  const refusedPort = (res: { status: number; text: string; body: any }, issue: string) => { // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', retryable: false });
    expect(res.body.error.details).toEqual([{ field: 'url', issue }]);
  };

  it('refuses another port at registration and PATCH with 400 naming url and the allowed ports; accepts 443 and 8443', async () => {
    const post = (url: string) => stack.api('POST', '/v1/webhook-endpoints', { token, json: { url, eventTypes: NEVER_HERE } });
    refusedPort(await post('https://8.8.8.8:8080/hooks'), 'must use one of the ports 443, 8443 (port 8080 is not allowed)');
    refusedPort(await post('http://8.8.8.8/hooks'), 'must use one of the ports 443, 8443 (http without a port uses 80)');
    refusedPort(await post('https://[2606:4700::1111]:5432/hooks'), 'must use one of the ports 443, 8443 (port 5432 is not allowed)');
    const ok = await h.create(token, 'https://8.8.8.8:8443/hooks', NEVER_HERE);
    expect(ok.url).toBe('https://8.8.8.8:8443/hooks');
    expect((await h.create(token, 'https://8.8.8.8:443/hooks', NEVER_HERE)).url).toBe('https://8.8.8.8/hooks');
    const patched = await stack.api('PATCH', `/v1/webhook-endpoints/${ok.endpointId}`, { token, json: { url: 'https://8.8.8.8:4222/hooks' } });
    refusedPort(patched, 'must use one of the ports 443, 8443 (port 4222 is not allowed)');
    expect((await h.endpoint(token, ok.endpointId)).url).toBe('https://8.8.8.8:8443/hooks');
  });

  it("sends to this host's loopback on any port where loopback is allowed, by address or by name", async () => {
    const r = await receiver();
    const byName = `http://localhost:${new URL(r.url).port}/by-name`;
    await h.create(token, r.url, ['submission.created']);
    await h.create(token, byName, ['submission.created']);
    const id = await h.submit(token);
    const got = await r.waitFor('both deliveries', (rs) => rs.length >= 2 && rs);
    expect(got.map((x) => x.path).sort()).toEqual(['/by-name', new URL(r.url).pathname].sort());
    expect(got.every((x) => x.body.includes(id))).toBe(true);
  });

  it('fails a delivery to a stored URL whose port is no longer allowed, at once and with the reason, never connecting', async () => {
    const r = await receiver();
    const ep = await h.create(token, r.url, ['submission.created']);
    // Registered when its port was allowed; the list changed since.
    await stack.sql('UPDATE events.webhook_endpoints SET url = $2 WHERE endpoint_id = $1', [ep.endpointId, 'https://8.8.8.8:9443/hooks']);
    await h.submit(token);
    const [d] = await until('the delivery refused', async () => {
      const items = await h.deliveries(token, ep.endpointId);
      return items[0]?.lastError && items;
    });
    expect(d!.lastError).toBe("refused: the URL must use one of the ports 443, 8443 (port 9443 is not allowed); update the endpoint's URL");
    expect(d!.lastResponseStatus).toBeUndefined();
    expect(d!.status).toBe('pending');
    const m = await scrape(stack.opsUrls.dispatcher!);
    expect(m.sum('partner_webhook_attempts_total', { outcome: 'refused' })).toBe(1);
    expect(r.received).toHaveLength(0);
  });
});
