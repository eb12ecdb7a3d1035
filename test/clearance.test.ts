// Clearance (docs/api.md "Clearance"): the first partner to submit a risk holds it, decided atomically
// in the transaction that creates the submission; later partners see only `blocked`/`review` and a
// basis, never anything about the earlier submission; withdrawing releases the risk to the earliest
// blocked submission, whose partner is told exactly once (feed and a verified webhook); operators
// list and decide the queue. Real PostgreSQL, NATS, gRPC and HTTP throughout.
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { useReceivers, type Received } from './support/receiver.js';
import { until } from './support/poll.js';
import { scrape } from './support/metrics.js';
import { multipart, upload } from './support/attachments.js';
import { PRODUCT } from './support/fixtures.js';
import { PartnerApiError, PartnerClient } from '../sdk/client/src/index.js';
import { join } from 'node:path';
import { ROOT } from './support/stack.js';
import { runProcess } from './support/run.js';

const TENANT = `tenant-clear-${randomUUID().slice(0, 8)}`;
const WAIT = { prefer: 'wait=20' };

interface Partner {
  creds: ClientCreds;
  token: string;
}

let a: Partner;
let b: Partner;
let c: Partner;

const stack = useStack(async (s) => {
  await s.startAll({ MAX_WAITERS_PER_PARTNER: '500', OUTBOX_RELAY_INTERVAL_MS: '100' }, { dispatcher: true });
  await s.admin('product', 'add', '--id', PRODUCT, '--name', 'Clearance product');
  const partner = async (): Promise<Partner> => {
    const creds = await s.createClient({ tenant: TENANT });
    return { creds, token: await s.token(creds) };
  };
  [a, b, c] = [await partner(), await partner(), await partner()];
});
const receiver = useReceivers();

let seq = 0;
/** A fresh FEIN per risk (9 digits). */
const newTaxId = () => String(100_000_000 + Math.floor(Math.random() * 800_000_000) + ++seq).slice(0, 9);

const body = (applicant: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  externalRef: `ref-${randomUUID()}`,
  submissionType: 'application',
  effectiveDate: '2027-01-01',
  productId: PRODUCT,
  applicant,
  ...extra,
});

async function create(p: Partner, json: unknown): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await stack.api('POST', '/v1/submissions', { token: p.token, headers: WAIT, json });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const get = async (p: Partner, path: string) => stack.api('GET', path, { token: p.token });
const withdraw = (p: Partner, id: string, json: unknown = { reason: 'applicant_withdrew' }, headers: Record<string, string> = WAIT) =>
  stack.api('POST', `/v1/submissions/${id}/withdraw`, { token: p.token, headers, json });

/** Every event of a partner's feed, oldest first. */
async function feed(p: Partner): Promise<{ id: string; type: string; data: Record<string, any> }[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const items = [];
  for (let cursor = ''; ; ) {
    const res = await get(p, `/v1/events?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status, res.text).toBe(200);
    items.push(...res.body.items);
    if (res.body.items.length === 0) return items;
    cursor = res.body.nextCursor;
  }
}

describe('clearance at intake', () => {
  it('of 3 partners × 8 concurrent creates of one risk, exactly one is cleared, 20 rounds running', async () => {
    const partners = [a, b, c];
    for (let round = 0; round < 20; round++) {
      // Even rounds: one FEIN, names spelled apart; odd rounds: one name (spelled apart) and address, no FEIN.
      const taxId = newTaxId();
      const name = `Round ${round} ${randomUUID().slice(0, 6)} Holdings`;
      const spellings = [`${name}, LLC`, `${name.toUpperCase()} llc.`, ` ${name.toLowerCase()}  L.L.C `];
      const address = { line1: '1 Main St', city: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' };
      const results = await Promise.all(
        partners.flatMap((p, pi) =>
          Array.from({ length: 8 }, (_, i) =>
            create(p, body(round % 2 === 0 ? { legalName: `Other ${pi} ${i} ${name}`, taxId } : { legalName: spellings[(pi + i) % 3]!, address })).then((r) => ({ partner: pi, ...r })),
          ),
        ),
      );
      const cleared = results.filter((r) => r.clearance.status === 'cleared');
      expect(cleared, `round ${round}`).toHaveLength(1);
      const winner = cleared[0]!;
      const basis = round % 2 === 0 ? 'tax_id' : 'name_address';
      expect(winner.clearance).toEqual({ status: 'cleared', basis: null, decidedAt: expect.any(String) });
      // Every other submission of the winner's partner is a duplicate of its own; each other partner has exactly one blocked
      // submission (its first) and duplicates of that one.
      for (const [pi] of partners.entries()) {
        const mine = results.filter((r) => r.partner === pi && r !== winner);
        const blocked = mine.filter((r) => r.clearance.status === 'blocked');
        expect(blocked, `round ${round} partner ${pi}`).toHaveLength(pi === winner.partner ? 0 : 1);
        for (const r of blocked) expect(r.clearance).toEqual({ status: 'blocked', basis, decidedAt: expect.any(String) });
        const firstOwn = pi === winner.partner ? winner : blocked[0]!;
        for (const r of mine.filter((x) => x !== blocked[0])) {
          expect(r.clearance).toEqual({ status: 'duplicate', basis, duplicateOf: firstOwn.submissionId, decidedAt: expect.any(String) });
        }
      }
    }
    // The database agrees: one cleared live submission per risk.
    const held = await stack.sql<{ n: string }>(
      `SELECT count(*) AS n FROM submission.submissions WHERE tenant_id = $1 AND clearance_status = 'cleared' AND status <> 'withdrawn'`,
      [TENANT],
    );
    expect(Number(held[0]!.n)).toBe(20);
    const m = await scrape(stack.opsUrls.submission!);
    expect(m.sum('partner_clearance_decisions_total', { status: 'cleared', basis: 'none' })).toBeGreaterThanOrEqual(20);
    expect(m.sum('partner_clearance_decisions_total', { status: 'blocked', basis: 'tax_id' })).toBeGreaterThanOrEqual(20);
    expect(m.sum('partner_clearance_decisions_total', { status: 'duplicate', basis: 'name_address' })).toBeGreaterThanOrEqual(210);
  });

  it('shows the later partner only blocked/review and a basis: nothing of the earlier submission anywhere in its view', async () => {
    for (const kind of ['blocked', 'review'] as const) {
      const taxId = newTaxId();
      const token = randomUUID().slice(0, 8);
      const earlierName = `Zenith ${token} Widgets LLC`;
      const earlierRef = `EARLIER-SECRET-${token}`;
      const earlier = await create(a, body(
        kind === 'blocked' ? { legalName: earlierName, taxId } : { legalName: earlierName, address: { line1: '9 Hidden Way', city: 'Secretville', region: 'CA', postalCode: '90001', country: 'US' } },
        { externalRef: earlierRef, effectiveDate: '2027-01-05' },
      ));
      expect(earlier.clearance.status).toBe('cleared');
      const earlierSub = (await get(a, `/v1/submissions/${earlier.submissionId}`)).body;
      const earlierJob = (await stack.sql<{ job_id: string }>('SELECT job_id FROM submission.submissions WHERE submission_id = $1', [earlier.submissionId]))[0]!.job_id;

      // The later partner: another spelling (review: the name alone), or the same FEIN under another name (blocked).
      const laterBody = body(kind === 'blocked' ? { legalName: `Different ${token} Trading`, taxId } : { legalName: `ZENITH ${token.toUpperCase()} WIDGETS, L.L.C.` }, { effectiveDate: '2027-02-01' });
      const created = await stack.api('POST', '/v1/submissions', { token: b.token, headers: WAIT, json: laterBody });
      expect(created.status).toBe(200);
      expect(created.body.clearance).toEqual({ status: kind, basis: kind === 'blocked' ? 'tax_id' : 'name_only', decidedAt: expect.any(String) });
      const laterId = created.body.submissionId as string;
      const jobId = created.headers.get('job-id')!;
      const view = [
        created.text,
        (await get(b, `/v1/submissions/${laterId}`)).text,
        (await get(b, '/v1/submissions?limit=200')).text,
        (await get(b, `/v1/submissions?clearance=${kind}`)).text,
        (await get(b, `/v1/jobs/${jobId}`)).text,
        (await get(b, '/v1/jobs?limit=200')).text,
        JSON.stringify(await until('the later partner\'s submission.created is in its feed', async () => {
          const events = await feed(b);
          return events.some((e) => e.type === 'submission.created' && e.data.submissionId === laterId) && events;
        })),
        (await scrape(stack.opsUrls.submission!)).text,
        (await scrape(stack.opsUrls.gateway!)).text,
        (await scrape(stack.opsUrls.worker!)).text,
      ].join('\n');
      const secrets = [
        earlier.submissionId,
        earlierSub.submissionName,
        earlierName,
        earlierRef,
        earlierSub.effectiveDate,
        earlierSub.createdAt,
        earlierSub.updatedAt,
        earlierJob,
        a.creds.partnerId,
        a.creds.clientId,
        '9 Hidden Way',
        'Secretville',
      ];
      for (const s of secrets) expect(view, `${kind}: the later partner sees ${s}`).not.toContain(s);
      // Log lines about the later partner's request (info level and above) name nothing of the earlier one.
      const about = stack.logs.filter((l) => l.includes(laterId) || l.includes(jobId));
      for (const line of about) for (const s of secrets) expect(line).not.toContain(s);
    }
  });

  it('is a duplicate for the same partner (with duplicateOf), another risk outside 60 days or in another postal code', async () => {
    const taxId = newTaxId();
    const dupe = `Dupe ${randomUUID().slice(0, 8)}`;
    const first = await create(c, body({ legalName: `${dupe} Co`, taxId }));
    const again = await create(c, body({ legalName: `${dupe.toUpperCase()} COMPANY`, taxId }, { effectiveDate: '2027-01-20' }));
    expect(again.clearance).toEqual({ status: 'duplicate', basis: 'tax_id', duplicateOf: first.submissionId, decidedAt: expect.any(String) });
    // 61 days after the later one (and 80 after the first): another risk.
    const later = await create(a, body({ legalName: `${dupe} Co`, taxId }, { effectiveDate: '2027-03-22' }));
    expect(later.clearance.status).toBe('cleared');
    const addr = (postalCode: string) => ({ line1: '1 Elm', city: 'X', region: 'NY', postalCode, country: 'US' });
    const name = `Postal ${randomUUID().slice(0, 6)} Ltd`;
    expect((await create(a, body({ legalName: name, address: addr('10001') }))).clearance.status).toBe('cleared');
    // Another postal code is not name_address: the name alone, so review.
    expect((await create(b, body({ legalName: name, address: addr('10002') }))).clearance).toMatchObject({ status: 'review', basis: 'name_only' });
    expect((await create(c, body({ legalName: name, address: addr('10001') }))).clearance).toMatchObject({ status: 'blocked', basis: 'name_address' });
  });
});

/** Verifies a received delivery with the reference implementation; returns the event. */
const verified = (r: Received, secret: string) =>
  new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  }) as { id: string; type: string; data: Record<string, unknown> };

describe('probing another partner\'s effective date (issue 48, 2)', () => {
  const day = (iso: string, n: number) => new Date(Date.parse(`${iso}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

  it('a bisection by creating and withdrawing probes learns nothing finer than the 121 days one probe shows', async () => {
    const taxId = newTaxId();
    const name = `Probe Target ${randomUUID().slice(0, 8)} LLC`;
    // Partner a's submission, whose date b is after: 2027-06-17.
    const secret = '2027-06-17';
    await create(a, body({ legalName: name, taxId }, { effectiveDate: secret }));

    // b's first two probes, 190 days apart (no window holds both): one blocked, one cleared — the
    // "known blocked and known cleared date" the reported bisection started from.
    const ask = async (date: string) => {
      const s = await create(b, body({ legalName: name, taxId }, { effectiveDate: date }));
      const w = await withdraw(b, s.submissionId as string, { reason: 'entered_in_error' });
      expect(w.status, w.text).toBe(200);
      return s.clearance as { status: string; basis: string | null };
    };
    let blocked = day(secret, 10);
    let cleared = day(secret, 200);
    expect(await ask(blocked)).toMatchObject({ status: 'blocked', basis: 'tax_id' });
    expect(await ask(cleared)).toMatchObject({ status: 'cleared', basis: null });

    // The bisection that found the exact date in 10 probes: every further probe within 120 days of
    // an earlier one is `review` with the basis of b's own key, whatever the truth is.
    const answers: string[] = [];
    for (let i = 0; i < 10; i++) {
      const lo = Date.parse(blocked);
      const hi = Date.parse(cleared);
      const mid = new Date(lo + Math.floor((hi - lo) / 86_400_000 / 2) * 86_400_000).toISOString().slice(0, 10);
      if (mid === blocked) break;
      const answer = await ask(mid);
      answers.push(answer.status);
      expect(answer).toEqual({ status: 'review', basis: 'tax_id', decidedAt: expect.any(String) });
      if (answer.status === 'blocked') blocked = mid;
      else if (answer.status === 'cleared') cleared = mid;
      else break; // a review says nothing: the bisection is stuck where it started
    }
    expect(answers).toEqual(['review']);
    // What b knows: the secret date lies within 60 days of `blocked` and not within 60 of `cleared`.
    const candidates = Array.from({ length: 400 }, (_, i) => day('2027-01-01', i)).filter((d) => {
      const dist = (x: string) => Math.abs(Date.parse(d) - Date.parse(x)) / 86_400_000;
      return dist(blocked) <= 60 && dist(cleared) > 60;
    });
    expect(candidates).toContain(secret);
    expect(candidates.length).toBeGreaterThanOrEqual(31);

    // Operators see why it waits; its own live submission within 60 days is still a duplicate; a
    // date more than 120 days from every earlier probe is decided on its matches again.
    const live = await create(b, body({ legalName: name, taxId }, { effectiveDate: day(secret, 40) }));
    expect(live.clearance).toMatchObject({ status: 'review', basis: 'tax_id' });
    const listed = JSON.parse((await stack.adminRaw('clearance', 'list', '--tenant', TENANT, '--status', 'review')).stdout) as { items: { submissionId: string; reason: string | null }[] };
    expect(listed.items.find((i) => i.submissionId === live.submissionId)?.reason).toBe('repeated_submission');
    const dupe = await create(b, body({ legalName: name, taxId }, { effectiveDate: day(secret, 45) }));
    expect(dupe.clearance).toMatchObject({ status: 'duplicate', duplicateOf: live.submissionId });
    const far = await create(b, body({ legalName: name, taxId }, { effectiveDate: day(secret, 400) }));
    expect(far.clearance).toMatchObject({ status: 'cleared' });
  });

  it('the same in one batch of creates: a later input of the same partner and risk within 120 days is reviewed', async () => {
    const taxId = newTaxId();
    const name = `Batch Probe ${randomUUID().slice(0, 8)}`;
    const [x, y] = await Promise.all([
      create(c, body({ legalName: name, taxId }, { effectiveDate: '2027-02-01' })),
      create(c, body({ legalName: name, taxId }, { effectiveDate: '2027-04-15' })),
    ]);
    // Whichever came first is cleared; the other, 73 days away (not a duplicate), is a probe.
    expect([x.clearance.status, y.clearance.status].sort()).toEqual(['cleared', 'review']);
  });
});

describe('withdrawal', () => {
  it('withdraws, releases the risk to the earliest blocked submission, told once by feed and a verified webhook', async () => {
    const hooks = await receiver();
    const ep = await stack.api('POST', '/v1/webhook-endpoints', { token: b.token, headers: WAIT, json: { url: hooks.url, eventTypes: ['submission.clearance_changed', 'submission.created'] } });
    expect(ep.status, ep.text).toBe(200);
    const secret = (await get(b, `/v1/webhook-endpoints/${ep.body.endpointId}/secret`)).body.secret as string;

    const taxId = newTaxId();
    const name = `Release ${randomUUID().slice(0, 8)} Inc`;
    const held = await create(a, body({ legalName: name, taxId }));
    const blockedB = await create(b, body({ legalName: name, taxId }));
    const blockedC = await create(c, body({ legalName: name, taxId }));
    expect([held.clearance.status, blockedB.clearance.status, blockedC.clearance.status]).toEqual(['cleared', 'blocked', 'blocked']);

    const res = await withdraw(a, held.submissionId, { reason: 'applicant_withdrew', note: 'Placed elsewhere.' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ submissionId: held.submissionId, status: 'withdrawn', withdrawal: { reason: 'applicant_withdrew', note: 'Placed elsewhere.', withdrawnAt: expect.any(String) } });
    expect((await get(a, `/v1/submissions/${held.submissionId}`)).body).toEqual(res.body);

    const nowB = (await get(b, `/v1/submissions/${blockedB.submissionId}`)).body;
    expect(nowB.clearance).toEqual({ status: 'cleared', basis: null, decidedAt: expect.any(String) });
    expect((await get(c, `/v1/submissions/${blockedC.submissionId}`)).body.clearance.status).toBe('blocked');

    // A's feed: submission.withdrawn with the withdrawn submission.
    const aEvents = await until('submission.withdrawn in the feed', async () => {
      const e = (await feed(a)).filter((x) => x.type === 'submission.withdrawn' && x.data.submissionId === held.submissionId);
      return e.length > 0 && e;
    });
    expect(aEvents).toHaveLength(1);
    expect(aEvents[0]!.data).toEqual(res.body);

    // B is told once, in its feed and by its webhook; then one more event of B's, so a second copy had its chance to come.
    const hook = await hooks.waitFor('submission.clearance_changed', (rs) => rs.find((r) => verified(r, secret).type === 'submission.clearance_changed'));
    expect(verified(hook, secret).data).toEqual(nowB);
    const marker = await create(b, body({ legalName: `Marker ${randomUUID()}` }));
    await hooks.waitFor('the marker', (rs) => rs.some((r) => r.body.includes(marker.submissionId)));
    const bEvents = await until('the marker in the feed', async () => {
      const e = await feed(b);
      return e.some((x) => x.data.submissionId === marker.submissionId) && e;
    });
    const changed = bEvents.filter((e) => e.type === 'submission.clearance_changed');
    expect(changed).toHaveLength(1);
    expect(changed[0]!.data).toEqual(nowB);
    expect(hooks.received.filter((r) => verified(r, secret).type === 'submission.clearance_changed')).toHaveLength(1);
    expect(JSON.parse(hook.body).id).toBe(changed[0]!.id);
    // C heard nothing about it.
    expect((await feed(c)).filter((e) => e.type === 'submission.clearance_changed')).toEqual([]);

    // Withdrawing again: the job fails 409 not_withdrawable. Adding an attachment: the same.
    const again = await withdraw(a, held.submissionId);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'not_withdrawable', retryable: false });
    expect(again.body.jobId).toMatch(/^job_/);
    const up = await upload(stack, a.token, held.submissionId, multipart({ fileName: 'late.pdf', contentType: 'application/pdf', size: 1000 }));
    expect(up.status).toBe(409);
    expect((up.body as { error: { code: string } }).error.code).toBe('not_withdrawable');

    // Lists: status=withdrawn, clearance=blocked.
    const withdrawnList = (await get(a, '/v1/submissions?status=withdrawn')).body.items.map((s: { submissionId: string }) => s.submissionId);
    expect(withdrawnList).toContain(held.submissionId);
    const blockedList = (await get(c, '/v1/submissions?clearance=blocked')).body.items.map((s: { submissionId: string }) => s.submissionId);
    expect(blockedList).toContain(blockedC.submissionId);
    expect((await get(b, '/v1/submissions?clearance=blocked')).body.items.map((s: { submissionId: string }) => s.submissionId)).not.toContain(blockedB.submissionId);
  });

  it('refuses bad input with 400 naming the fields, and another partner\'s submission with 404', async () => {
    const mine = await create(a, body({ legalName: `Bad Input ${randomUUID()}` }));
    const bad = await withdraw(a, mine.submissionId, { reason: 'bored', note: 'x'.repeat(501), extra: true });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_error');
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['extra', 'note', 'reason']);
    expect((await withdraw(a, mine.submissionId, {})).body.error.details).toEqual([{ field: 'reason', issue: 'is required' }]);
    const foreign = await withdraw(b, mine.submissionId);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    expect((await withdraw(a, 'not-a-uuid')).status).toBe(404);
    const filter = await get(a, '/v1/submissions?clearance=bogus');
    expect(filter.status).toBe(400);
    expect(filter.body.error.details).toEqual([{ field: 'clearance', issue: expect.stringContaining('cleared') }]);
    expect((await get(a, `/v1/submissions/${mine.submissionId}`)).body.status).toBe('submitted');
  });

  it('a withdrawal racing a create of the same risk never leaves two (or no) cleared live submissions', async () => {
    for (let round = 0; round < 12; round++) {
      const taxId = newTaxId();
      const name = `Race ${randomUUID().slice(0, 8)} Co`;
      const holder = await create(a, body({ legalName: name, taxId }));
      // Half the rounds have a blocked submission waiting; the others only the racing create.
      if (round % 2 === 0) await create(b, body({ legalName: name, taxId }));
      const [w, racing] = await Promise.all([withdraw(a, holder.submissionId), create(c, body({ legalName: name, taxId }))]);
      expect(w.status, w.text).toBe(200);
      expect(['cleared', 'blocked']).toContain(racing.clearance.status);
      const rows = await stack.sql<{ n: string }>(
        `SELECT count(*) AS n FROM submission.submissions WHERE risk_tax_id = $1 AND clearance_status = 'cleared' AND status <> 'withdrawn'`,
        [taxId],
      );
      expect(Number(rows[0]!.n), `round ${round}`).toBe(1);
    }
  });
});

describe('operators: clearance list and decide', () => {
  it('lists the queue, records decisions with clearance_changed, and refuses a second clear of a held risk without --force', async () => {
    const name = `Queue ${randomUUID().slice(0, 6)} Partners`;
    const first = await create(a, body({ legalName: name }));
    const inReview = await create(b, body({ legalName: `${name} LLC` }));
    expect(inReview.clearance).toMatchObject({ status: 'review', basis: 'name_only' });

    const queue = await stack.admin('clearance', 'list', '--tenant', TENANT, '--status', 'review');
    const item = queue.items.find((i: { submissionId: string }) => i.submissionId === inReview.submissionId);
    expect(item).toMatchObject({ partnerId: b.creds.partnerId, status: 'review', basis: 'name_only', matches: [{ submissionId: first.submissionId, partnerId: a.creds.partnerId, status: 'cleared', basis: 'name_only' }] });
    const gauge = (await scrape(stack.opsUrls.submission!)).sum('partner_clearance_review_oldest_age_seconds');
    expect(gauge).toBeGreaterThan(0);

    const refused = await stack.adminRaw('clearance', 'decide', '--submission', inReview.submissionId, '--status', 'cleared');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--force');
    const blocked = await stack.admin('clearance', 'decide', '--submission', inReview.submissionId, '--status', 'blocked', '--note', 'same insured', '--by', 'ops-jane');
    expect(blocked.submission.clearance).toMatchObject({ status: 'blocked', basis: 'name_only' });
    const forced = await stack.admin('clearance', 'decide', '--submission', inReview.submissionId, '--status', 'cleared', '--force', '--by', 'ops-jane');
    expect(forced.submission.clearance).toEqual({ status: 'cleared', basis: null, decidedAt: expect.any(String) });
    const log = await stack.sql<{ clearance_log: { status: string; by: string; at: string; note?: string; force?: boolean }[] }>(
      'SELECT clearance_log FROM submission.submissions WHERE submission_id = $1',
      [inReview.submissionId],
    );
    expect(log[0]!.clearance_log).toEqual([
      { status: 'blocked', by: 'ops-jane', at: expect.any(String), note: 'same insured' },
      { status: 'cleared', by: 'ops-jane', at: expect.any(String), force: true },
    ]);
    // Each decision reached B's feed (the service's relay publishes what the admin command recorded), and nothing about A's.
    const events = await until('two clearance_changed events', async () => {
      const e = (await feed(b)).filter((x) => x.type === 'submission.clearance_changed' && x.data.submissionId === inReview.submissionId);
      return e.length === 2 && e;
    });
    expect(events.map((e) => e.data.clearance.status)).toEqual(['blocked', 'cleared']);
    expect(JSON.stringify(events)).not.toContain(first.submissionId);
    expect(JSON.stringify(events)).not.toContain('ops-jane');
  });
});

describe('changes to existing clearances run one at a time', () => {
  it("a withdrawal's release and an operator's clear of another match of the released one never leave two cleared", async () => {
    // A (a, FEIN T, "alpha") holds the risk; B (b, FEIN T, "beta") is blocked by it on tax_id; E (c, "beta",
    // no FEIN) is in review against B. Withdrawing A releases B (A's locks: T, alpha); clearing E takes
    // E's lock (beta) and sees B blocked. Their risk locks are disjoint: only the tenant and product's
    // clearance-change lock keeps each from deciding on what the other is about to change.
    const taxId = newTaxId();
    const alpha = `Alpha ${randomUUID()}`;
    const beta = `Beta ${randomUUID()}`;
    const first = await create(a, body({ legalName: alpha, taxId }));
    const second = await create(b, body({ legalName: beta, taxId }));
    const third = await create(c, body({ legalName: beta }));
    expect([first.clearance.status, second.clearance.status, third.clearance.status]).toEqual(['cleared', 'blocked', 'review']);

    // Hold the change lock, start both, and let them go once both are waiting for it.
    const { clearanceChangeLock } = await import('../services/shared/src/domain/clearance.js');
    const holder = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [String(clearanceChangeLock(TENANT, PRODUCT))]);
      const withdrawing = withdraw(a, first.submissionId);
      const deciding = stack.adminRaw('clearance', 'decide', '--submission', third.submissionId, '--status', 'cleared', '--note', 'checked by hand');
      await until('the withdrawal and the decision both wait for the change lock', async () => {
        const [{ n }] = await holder.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").then((r) => r.rows);
        return n >= 2;
      });
      await holder.query('COMMIT');
      expect((await withdrawing).status).toBe(200);
      await deciding;
    } finally {
      await holder.end();
    }
    const statuses = await Promise.all([get(b, `/v1/submissions/${second.submissionId}`), get(c, `/v1/submissions/${third.submissionId}`)]);
    const cleared = statuses.filter((r) => r.body.clearance.status === 'cleared');
    expect(cleared).toHaveLength(1);
  });
});

describe('SDK and CLI', () => {
  it('withdrawSubmission and `partner submissions withdraw`; clearance in `submissions get/list`', async () => {
    const sdk = new PartnerClient({ baseUrl: stack.gatewayUrl, authUrl: stack.authUrl, clientId: a.creds.clientId, clientSecret: a.creds.clientSecret, scope: stack.scope });
    const taxId = newTaxId();
    const created = await sdk.createSubmission(body({ legalName: `Sdk ${randomUUID().slice(0, 8)}`, taxId }) as never);
    expect(created.clearance.status).toBe('cleared');
    const withdrawn = await sdk.withdrawSubmission(created.submissionId, { reason: 'entered_in_error' });
    expect(withdrawn).toMatchObject({ submissionId: created.submissionId, status: 'withdrawn', withdrawal: { reason: 'entered_in_error' } });
    const again = await sdk.withdrawSubmission(created.submissionId, { reason: 'entered_in_error' }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(PartnerApiError);
    expect(again).toMatchObject({ status: 409, code: 'not_withdrawable' });

    const env = {
      PATH: process.env.PATH ?? '',
      HOME: '/nonexistent',
      PARTNER_BASE_URL: stack.gatewayUrl,
      PARTNER_AUTH_URL: stack.authUrl,
      PARTNER_CLIENT_ID: b.creds.clientId,
      PARTNER_CLIENT_SECRET: b.creds.clientSecret,
      PARTNER_SCOPE: stack.scope,
    };
    const cli = (...args: string[]) => runProcess(process.execPath, [join(ROOT, 'sdk/cli/dist/main.js'), ...args], { env });
    const mine = await create(b, body({ legalName: `Cli ${randomUUID().slice(0, 8)}`, taxId }));
    expect(mine.clearance.status).toBe('cleared'); // the SDK's one is withdrawn: the risk was free
    const got = await cli('submissions', 'get', mine.submissionId, '--json');
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout).clearance).toEqual(mine.clearance);
    const listed = await cli('submissions', 'list', '--clearance', 'cleared', '--limit', '5');
    expect(listed.code, listed.stderr).toBe(0);
    // Not a terminal: JSON (a terminal gets the table, with its CLEARANCE column).
    const items = (JSON.parse(listed.stdout) as { items: { submissionId: string; clearance: { status: string } }[] }).items;
    expect(items.find((i) => i.submissionId === mine.submissionId)?.clearance.status).toBe('cleared');
    expect(items.every((i) => i.clearance.status === 'cleared')).toBe(true);
    const out = await cli('submissions', 'withdraw', mine.submissionId, '--reason', 'duplicate', '--note', 'sent twice', '--json');
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ status: 'withdrawn', withdrawal: { reason: 'duplicate', note: 'sent twice' } });
    const twice = await cli('submissions', 'withdraw', mine.submissionId, '--reason', 'duplicate');
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('not_withdrawable');
    const bad = await cli('submissions', 'withdraw', mine.submissionId, '--reason', 'bored');
    expect(bad.code).toBe(2);
  });
});
