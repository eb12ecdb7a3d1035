// PostgreSQL crashed mid-flow (issue 47): three writers commit with synchronous_commit = off — the
// feed writer (services/events/src/writer.ts), the request-log writer (request-log/writer.ts) and the
// webhook dispatcher's claim (dispatcher/store.ts) — and a crash may lose the last of those commits.
// (The worker's job claim commits asynchronously too; test/claim-crash.test.ts crashes behind it.)
// This file crashes a private server twice (SIGQUIT to the postmaster, as `pg_ctl stop -m immediate`:
// no checkpoint, WAL not yet written out of shared memory is lost) while submissions of two
// partners flow through the whole stack, one reader per partner follows its feed by cursor, and a
// webhook endpoint receives one partner's events; each time the server is started again.
//
// The server runs with synchronous_commit = on (PostgreSQL's default, as in production): the private
// server's own default (off, for speed) would make every commit of the stack asynchronous, and the
// test would find losses production cannot have. fsync = off stays: the machine does not crash, so
// what the server wrote is in the OS cache either way; what a process crash loses is WAL not yet
// written at all — an asynchronous commit's, until the WAL writer or any later synchronous commit
// (which writes all WAL before its own) writes it. So each crash is sent right behind one of the feed
// writer's commits, from inside the server (see the hook below), and loses that commit in about half
// of the crashes (8 of 17 measured); when another commit wrote it first, nothing is lost. Either outcome passes.
//
// It proves: every accepted job settles once, with one submission and one event of each kind; every
// event is in the feed once, each partner's partner_seq is gapless from 1; every event the writer had
// stored with an acknowledged commit — lost in the crash or not — is in the feed with the same id,
// partner_seq and position; each reader saw exactly its partner's feed in order (its cursor neither
// skipped nor repeated across the crashes), every event at the position it is at in the end;
// request-log ids are unique; every webhook event is delivered (duplicate sends are allowed and
// counted) and no delivery is recorded as succeeded twice. It reports what each crash lost: the
// highest partner_seq each partner's `feed.stored` wake-ups had announced, against the highest stored
// once the server has recovered — read on another port before the services can reach it (so before
// the feed writer stores anything again).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from 'nats';
import { natsNames } from '@partner/shared/nats/client';
import { WRITER_LOCK } from '../services/events/src/writer.js';
import pg from 'pg';
import { PrivatePostgres } from './support/private-postgres.js';
import { Stack, type ClientCreds } from './support/stack.js';
import { PRODUCT, submissionBody } from './support/fixtures.js';
import { Receiver } from './support/receiver.js';
import { scrape } from './support/metrics.js';
import { until } from './support/poll.js';

/** Submissions per partner (two events each: submission.created, job.succeeded). */
const PER_PARTNER = 70;
/** Concurrent submitters per partner (each waits for its job: Prefer: wait). */
const SUBMITTERS = 3;
/**
 * The crashes: each right behind the feed writer's first commit once this many events were announced
 * (about a third and two thirds of the flow). Two, because whether a crash loses the commit depends on
 * a race (see the file's head): 8 of 17 crashes lost it when measured.
 */
const CRASH_AFTER_EVENTS = [90, 190];

interface Seen {
  id: string;
  /** Its position in the partner's feed as the reader counted it (the reader starts at the beginning). */
  seq: number;
  /** Crashes begun before it was read. */
  crashesBefore: number;
}

interface Partner {
  creds: ClientCreds;
  token: string;
  key: string;
  /** Submissions accepted (200 or 202), by Idempotency-Key. */
  accepted: Set<string>;
  /** Highest partner_seq announced by a feed.stored wake-up. */
  announced: number;
  seen: Seen[];
}

/** An event as the feed writer stored it. */
interface Stored {
  event_id: string;
  partner_seq: string;
  position: string;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const partnerKey = (tenantId: string, partnerId: string) => `${tenantId}/${partnerId}`;

describe('PostgreSQL crashed while events flow (asynchronous commits)', () => {
  let server: PrivatePostgres;
  let stack: Stack;
  let receiver: Receiver;
  let nc: NatsConnection;
  const partners: Partner[] = [];

  beforeAll(async () => {
    // synchronous_commit at the server's default (on): only the commits that ask for off are asynchronous.
    server = await PrivatePostgres.start({ settings: { synchronous_commit: 'on' } });
    stack = await Stack.create({ pgAdminUrl: server.url() });
    await stack.startAll(
      {
        OUTBOX_RELAY_INTERVAL_MS: '200',
        // A job whose delivery fails while the database is down is retried soon and often enough to
        // outlast the outage (the defaults, 1 s then 5 s, 15 s, … and 5 attempts, would fail some).
        WORKER_BACKOFF_MS: '200',
        WORKER_MAX_DELIVERIES: '50',
        WORKER_ACK_WAIT_MS: '3000',
        // A claimed delivery whose settlement the crash refused is claimed again when its lease lapses:
        // the lease is timeout × 5, so 5 s here rather than 50 s.
        WEBHOOK_TIMEOUT_MS: '1000',
      },
      { dispatcher: true },
    );
    await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Test product');
    for (let i = 0; i < 2; i++) {
      const creds = await stack.createClient();
      partners.push({ creds, token: await stack.token(creds), key: partnerKey(creds.tenant, creds.partnerId), accepted: new Set(), announced: 0, seen: [] });
    }
    receiver = await Receiver.start();
    const endpoint = await stack.api('POST', '/v1/webhook-endpoints', { token: partners[0]!.token, headers: { prefer: 'wait=10' }, json: { url: receiver.url, eventTypes: ['*'] } });
    expect(endpoint.status, endpoint.text).toBe(200);
    nc = await connect({ servers: stack.env.NATS_URL });
  });

  afterAll(async () => {
    await nc?.close();
    await receiver?.stop();
    await server?.up().catch(() => undefined);
    await stack?.stop();
    await server?.destroy();
  });

  it('loses and doubles nothing: the feed, its positions, the request log and the webhook deliveries', async () => {
    const byKey = new Map(partners.map((p) => [p.key, p]));
    let crashed = false;
    let crash: Promise<void> | undefined;
    /** Crashes begun so far. */
    let crashes = 0;
    const triggers: string[] = [];
    const crashNow = (by: string, signal: () => void = () => process.kill(server.postmasterPid(), 'SIGQUIT')) => {
      if (crash || crashes >= CRASH_AFTER_EVENTS.length) return;
      triggers.push(by);
      crashes++;
      const pid = server.postmasterPid();
      signal();
      crash = server.crashed(pid).then(() => {
        crashed = true;
      });
    };
    const announcedEvents = () => partners.reduce((n, q) => n + q.announced, 0);
    // The crash comes right behind one of the feed writer's commits, once about a third of the flow
    // is stored. The writer's batch is one call (feed_store), its whole transaction, holding the
    // writer's advisory lock from its first statement to its commit. As the writer sends that call, a
    // session of the test starts to watch the lock: once another backend holds it, it waits for it
    // and, the moment the commit releases it, has the server run `kill -QUIT` on its own postmaster.
    // So the crash follows the commit by the start of a shell (about a millisecond), not by this busy
    // process's event loop: that commit's WAL is then likely still unwritten, unless another commit's
    // flush (every synchronous commit writes all WAL before its own) took it along in between. The
    // writer goes on as after any commit (its wake-ups are sent).
    const newKiller = async () => {
      const c = new pg.Client({ connectionString: server.url(stack.dbName) });
      c.on('error', () => undefined);
      await c.connect();
      return c;
    };
    let killer = await newKiller();
    // The lock as pg_locks shows a bigint key: its high and low 32 bits.
    const lockKey = `classid = ${Math.floor(WRITER_LOCK / 2 ** 32)} AND objid = ${WRITER_LOCK % 2 ** 32} AND objsubid = 1`;
    const killBehindTheWriter = (pid: number) =>
      `DO $$BEGIN
         WHILE NOT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND ${lockKey} AND granted AND pid <> pg_backend_pid()) LOOP
           IF clock_timestamp() > statement_timestamp() + interval '30 seconds' THEN RAISE 'the feed writer never took its lock'; END IF;
           PERFORM pg_sleep(0.0002);
         END LOOP;
         PERFORM pg_advisory_lock(${WRITER_LOCK});
       END$$; COPY (SELECT 1) TO PROGRAM 'kill -QUIT ${pid}'`;
    // Every event the writer's commits stored, as the writer saw it once its call returned.
    const committed: Stored[] = [];
    const wrapped = new WeakSet<pg.PoolClient>();
    stack.services.events!.pool!.on('acquire', (client) => {
      if (wrapped.has(client)) return;
      wrapped.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      (client as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string } | undefined)?.text ?? '');
        if (!text.startsWith('SELECT * FROM feed_store(')) return query(...args);
        if (!crash && crashes < CRASH_AFTER_EVENTS.length && announcedEvents() >= CRASH_AFTER_EVENTS[crashes]!) {
          const pid = server.postmasterPid();
          crashNow("the feed writer's commit", () => {
            killer.query(killBehindTheWriter(pid)).catch(() => undefined);
          });
        }
        // The rows the batch stored (each event's id, partner_seq and position), committed once the
        // call returns. (pg's pool.query passes a callback; a client's own call gets a promise.)
        const record = (r: unknown) => {
          for (const row of (r as { rows?: Partial<Stored>[] }).rows ?? []) {
            if (row.event_id && row.partner_seq && row.position) committed.push({ event_id: row.event_id, partner_seq: String(row.partner_seq), position: String(row.position) });
          }
        };
        const done = args.at(-1);
        if (typeof done === 'function') {
          return query(...args.slice(0, -1), (err: Error | null, r: unknown) => {
            if (!err) record(r);
            (done as (err: Error | null, r: unknown) => void)(err, r);
          });
        }
        return query(...args).then((r) => (record(r), r));
      };
    });
    // Every wake-up: the highest partner_seq announced per partner. Should the writer's call ever look
    // different (the hook above never fires), the crash comes at a wake-up instead, and the test
    // fails on its triggers once the flow is done.
    const wakes = nc.subscribe(natsNames(stack.prefix).feedWakeSubject, {
      callback: (err, m) => {
        if (err) return;
        const w = m.json<{ tenantId: string; partnerId: string; seq: string }>();
        const p = byKey.get(partnerKey(w.tenantId, w.partnerId));
        if (!p) return;
        p.announced = Math.max(p.announced, Number(w.seq));
        if (crashes < CRASH_AFTER_EVENTS.length && announcedEvents() >= CRASH_AFTER_EVENTS[crashes]! + 40) crashNow('a feed.stored wake-up');
      },
    });
    await nc.flush();

    // The submitters: each submission under its own Idempotency-Key, sent again (same key) until accepted.
    let refused = 0;
    const submitter = async (p: Partner, from: number) => {
      for (let i = from; i < PER_PARTNER; i += SUBMITTERS) {
        const key = `crash-${p.creds.partnerId}-${i}`;
        for (;;) {
          const r = await stack
            .api('POST', '/v1/submissions', { token: p.token, json: submissionBody(key), headers: { prefer: 'wait=5', 'idempotency-key': key } })
            .catch(() => undefined);
          if (r && (r.status === 200 || r.status === 202)) break;
          expect([undefined, 503], r?.text).toContain(r?.status);
          refused++;
          await pause(100); // the retry's back-off (the gateway says Retry-After: 1; a test may be quicker)
        }
        p.accepted.add(key);
      }
    };

    // The readers: each follows its partner's feed from the start by cursor (long-polling), recording
    // every event with the position it counted, and whether it read it before the crash.
    let reading = true;
    const reader = async (p: Partner) => {
      let cursor = '';
      while (reading) {
        const r = await stack
          .api('GET', `/v1/events?limit=50${cursor ? `&cursor=${cursor}` : ''}`, { token: p.token, headers: { prefer: 'wait=1' } })
          .catch(() => undefined);
        if (r?.status !== 200) {
          expect([undefined, 503], r?.text).toContain(r?.status);
          await pause(100);
          continue;
        }
        for (const e of r.body.items as { id: string }[]) p.seen.push({ id: e.id, seq: p.seen.length + 1, crashesBefore: crashes });
        cursor = r.body.nextCursor as string;
      }
    };
    const readers = partners.map((p) => reader(p));

    const started = Date.now();
    const flow = Promise.all(partners.flatMap((p) => Array.from({ length: SUBMITTERS }, (_, k) => submitter(p, k))));

    // Each crash; then a look at what survived (on another port: the services cannot reach it, so the
    // feed writer has not stored anything again yet); then the server back where the services are.
    const rounds: { trigger: string; announced: Map<string, number>; recovered: Map<string, number>; recoveredPosition: string; committedThrough: number; logRows: string; downMs: number }[] = [];
    for (let k = 0; k < CRASH_AFTER_EVENTS.length; k++) {
      await until(`crash ${k + 1}`, async () => crashed, 40_000);
      const crashedAt = Date.now();
      await killer.end().catch(() => undefined);
      const aside = await server.upElsewhere();
      const look = new pg.Client({ connectionString: server.urlOn(aside, stack.dbName) });
      await look.connect();
      const recovered = new Map(
        (
          await look.query<{ tenant_id: string; partner_id: string; seq: string }>(
            'SELECT tenant_id, partner_id, max(partner_seq) AS seq FROM events.events GROUP BY 1, 2',
          )
        ).rows.map((r) => [partnerKey(r.tenant_id, r.partner_id), Number(r.seq)]),
      );
      const [{ position: recoveredPosition }] = (await look.query<{ position: string }>('SELECT coalesce(max(position), 0) AS position FROM events.events')).rows as [{ position: string }];
      const [{ n: logRows }] = (await look.query<{ n: string }>('SELECT count(*) AS n FROM events.request_log')).rows as [{ n: string }];
      await look.end();
      // What had been announced before the crash (nothing commits while the server is down or aside:
      // every wake-up that has arrived by now is of a commit made before the crash).
      const announced = new Map(partners.map((p) => [p.key, p.announced]));
      const committedThrough = Math.max(0, ...committed.map((c) => Number(c.position)));
      await server.down();
      await server.up();
      rounds.push({ trigger: triggers[k]!, announced, recovered, recoveredPosition, committedThrough, logRows, downMs: Date.now() - crashedAt });
      killer = await newKiller();
      crashed = false;
      crash = undefined;
    }
    await killer.end();

    await flow;
    const flowMs = Date.now() - started;
    // Each crash came right behind a commit of the writer's (not at a wake-up, later).
    expect(triggers).toEqual(CRASH_AFTER_EVENTS.map(() => "the feed writer's commit"));

    // Every accepted job settled, once, with one submission.
    const expected = PER_PARTNER * partners.length;
    expect(partners.reduce((n, p) => n + p.accepted.size, 0)).toBe(expected);
    await until(
      'every job settled',
      async () => Number((await stack.sql<{ n: string }>("SELECT count(*) AS n FROM job.jobs WHERE status NOT IN ('succeeded', 'failed', 'canceled')"))[0]!.n) === 0,
      20_000,
    );
    const jobs = await stack.sql<{ job_id: string; status: string; tenant_id: string; partner_id: string }>(
      "SELECT job_id, status, tenant_id, partner_id FROM job.jobs WHERE kind = 'submission.create'",
    );
    expect(jobs).toHaveLength(expected);
    expect(jobs.filter((j) => j.status !== 'succeeded')).toEqual([]);
    const submissions = await stack.sql<{ job_id: string; external_ref: string }>('SELECT job_id, external_ref FROM submission.submissions');
    expect(submissions).toHaveLength(expected);
    expect(new Set(submissions.map((s) => s.job_id)).size).toBe(expected);
    expect(new Set(submissions.map((s) => s.external_ref))).toEqual(new Set(partners.flatMap((p) => [...p.accepted])));

    // The feed caught up: nothing pending in the writer or the event outboxes, and each job's two events stored.
    await until(
      'the feed holds every event',
      async () => {
        if ((await scrape(stack.opsUrls.events!)).sum('partner_events_writer_pending') !== 0) return false;
        for (const name of ['submission', 'job']) if ((await scrape(stack.opsUrls[name]!)).sum('partner_event_outbox_backlog') !== 0) return false;
        const [row] = await stack.sql<{ n: string }>("SELECT count(*) AS n FROM events.events WHERE type IN ('submission.created', 'job.succeeded') AND data->>'kind' IS DISTINCT FROM 'webhook_endpoint.create'");
        return Number(row!.n) === 2 * expected;
      },
      20_000,
    );
    const feed = await stack.sql<{ event_id: string; tenant_id: string; partner_id: string; partner_seq: string; position: string; type: string; kind: string | null; job_id: string | null; submission_id: string | null }>(
      `SELECT event_id, tenant_id, partner_id, partner_seq, position, type, data->>'kind' AS kind,
              CASE WHEN type LIKE 'job.%' THEN data->>'id' END AS job_id,
              CASE WHEN type = 'submission.created' THEN data->>'submissionId' END AS submission_id
         FROM events.events ORDER BY position, partner_seq`,
    );
    // Every event a commit of the writer had stored (acknowledged) before the crash, lost or not, is in
    // the feed as it was stored: same id, same partner_seq, same position.
    const final = new Map(feed.map((e) => [e.event_id, { event_id: e.event_id, partner_seq: String(e.partner_seq), position: String(e.position) }]));
    expect(committed.length).toBeGreaterThanOrEqual(CRASH_AFTER_EVENTS.at(-1)!);
    expect(committed.filter((c) => JSON.stringify(final.get(c.event_id)) !== JSON.stringify(c))).toEqual([]);

    // Every event once: ids unique, one job.succeeded per job, one submission.created per submission.
    expect(new Set(feed.map((e) => e.event_id)).size).toBe(feed.length);
    const succeeded = feed.filter((e) => e.type === 'job.succeeded').map((e) => e.job_id);
    expect(new Set(succeeded).size).toBe(succeeded.length);
    for (const j of jobs) expect(succeeded, j.job_id).toContain(j.job_id);
    const created = feed.filter((e) => e.type === 'submission.created').map((e) => e.submission_id);
    expect(created).toHaveLength(expected);
    expect(new Set(created).size).toBe(expected);
    expect(feed.filter((e) => e.type === 'job.failed')).toEqual([]);

    // Each partner's partner_seq gapless from 1, in stream order; its reader saw exactly that feed,
    // in that order (nothing skipped, nothing twice across the crash), and what it saw before the
    // crash is at the same position after it.
    for (const p of partners) {
      const own = feed.filter((e) => partnerKey(e.tenant_id, e.partner_id) === p.key);
      expect(own.map((e) => Number(e.partner_seq))).toEqual(own.map((_, i) => i + 1));
      await until(`${p.creds.partnerId}'s reader reached the end of its feed`, async () => p.seen.length >= own.length, 15_000);
      const seqOf = new Map(own.map((e) => [e.event_id, Number(e.partner_seq)]));
      expect(p.seen.filter((s) => seqOf.get(s.id) !== s.seq)).toEqual([]);
      expect(p.seen.map((s) => s.id)).toEqual(own.map((e) => e.event_id));
    }
    reading = false;
    await Promise.all(readers);

    // The request log: no entry twice.
    const [log] = await stack.sql<{ n: string; ids: string }>('SELECT count(*) AS n, count(DISTINCT id) AS ids FROM events.request_log');
    expect(Number(log!.n)).toBeGreaterThan(0);
    expect(log!.ids).toBe(log!.n);

    // Webhooks (partner 0's endpoint, every type): every event but the endpoint's own creation job
    // delivered at least once; no delivery succeeded twice; duplicate sends counted.
    const hooked = feed.filter((e) => partnerKey(e.tenant_id, e.partner_id) === partners[0]!.key && e.kind !== 'webhook_endpoint.create');
    const hookedIds = new Set(hooked.map((e) => e.event_id));
    await receiver.waitFor('every event delivered', (rs) => {
      const got = new Set(rs.map((r) => (JSON.parse(r.body) as { id: string }).id));
      return [...hookedIds].every((id) => got.has(id));
    }, 20_000);
    await until(
      'every delivery settled',
      async () => Number((await stack.sql<{ n: string }>("SELECT count(*) AS n FROM events.webhook_deliveries WHERE status <> 'succeeded'"))[0]!.n) === 0,
      20_000,
    );
    const deliveries = await stack.sql<{ event_id: string; delivery_id: string }>('SELECT event_id, delivery_id FROM events.webhook_deliveries');
    expect(new Set(deliveries.map((d) => d.event_id))).toEqual(hookedIds);
    expect(deliveries).toHaveLength(hookedIds.size);
    const twice = await stack.sql(
      `SELECT delivery_id, count(*) AS n FROM events.webhook_attempts
        WHERE error IS NULL AND response_status BETWEEN 200 AND 299 GROUP BY 1 HAVING count(*) > 1`,
    );
    expect(twice).toEqual([]);
    const sends = new Map<string, number>();
    for (const e of receiver.events()) sends.set(e.id, (sends.get(e.id) ?? 0) + 1);
    const duplicateSends = [...sends.values()].reduce((n, k) => n + k - 1, 0);

    // What each crash lost: events announced (committed, and their wake-up sent) but not recovered.
    wakes.unsubscribe();
    const distinct = [...new Map(committed.map((c) => [c.event_id, c])).values()];
    const report = rounds.map((r, k) => {
      const lost = partners.map((p) => ({ partner: p.creds.partnerId, announced: r.announced.get(p.key)!, recovered: r.recovered.get(p.key) ?? 0 }));
      const lostEvents = lost.reduce((n, l) => n + Math.max(0, l.announced - l.recovered), 0);
      const lostStored = distinct.filter((c) => BigInt(c.position) > BigInt(r.recoveredPosition) && Number(c.position) <= r.committedThrough).length;
      const seenThenLost = partners.reduce((n, p) => n + p.seen.filter((s) => s.crashesBefore <= k && s.seq > (r.recovered.get(p.key) ?? 0) && s.seq <= r.announced.get(p.key)!).length, 0);
      return (
        `crash ${k + 1} (at ${r.trigger}): ${lostEvents > 0 ? 'LOST' : 'lost no'} announced feed commits — ${lost.map((l) => `${l.partner} announced seq ${l.announced}, recovered ${l.recovered}`).join(', ')}; ` +
        `writer's acknowledged commits through position ${r.committedThrough}, recovered max(position) ${r.recoveredPosition}: ${lostStored} stored events lost (all stored again at the same id/partner_seq/position); ` +
        `read by a reader before the crash and lost: ${seenThenLost}; request-log rows at recovery ${r.logRows}; server down ${r.downMs} ms`
      );
    });
    console.log(
      `async-commit crash: ${report.join(' | ')} | ` +
        `request-log rows at the end ${log!.n} (ids unique); webhook sends ${receiver.received.length} for ${hookedIds.size} events (${duplicateSends} duplicate sends, no delivery succeeded twice); ` +
        `submissions refused while down ${refused}; flow ${flowMs} ms; feed ${feed.length} events`,
    );
  });
});
