// The worker's claim commits asynchronously (issue 47; services/job/src/repo.ts, ASYNC_COMMIT): its
// commit does not wait for the WAL flush. This file crashes a private PostgreSQL right behind claims
// and shows what that may and may not lose.
//
// Why it is safe: nothing outside PostgreSQL acts on a claim before a synchronous commit has flushed
// it. The claim only tells the worker to start; every effect of a job is a synchronous commit in the
// same database, and a synchronous commit writes all WAL before its own record, the claim's included.
// So a crash that loses a claim lost every effect of that delivery with it: the job is `accepted`
// again and its message, never acked, comes back. The one answer drawn from a claim alone, a cancel
// refused with 409 job_not_cancelable ("the job has started"), flushes first.
//
// How the crash lands behind a claim: the test holds a lock on submission.submissions, so the
// submission service's insert waits (after the claim, before any effect commits); the worker starts
// only once the jobs are published and their outbox rows deleted (no other commit in between), the
// claims' WAL begins a page of its own (the WAL writer writes full pages), and the server runs with
// wal_writer_delay at its maximum (10 s), no autovacuum and no request log, so nothing writes the
// claim's WAL before the crash unless a synchronous commit does, or the WAL writer's own 10 s round
// falls between the claims and the crash (each round writes every asynchronous commit). That window
// is a fraction of a second on an idle machine; on a loaded one it grows (the first test found its
// claims on disk twice on 28 Nov, with the machine 2.3 times slower than usual and a CI run beside
// it). So the first test reads the WAL's write position right before the crash: past the claims'
// first byte, the round cannot show a claim lost, and its jobs run while a new round (up to five)
// takes its place. The crash is SIGQUIT to the postmaster: WAL not yet written
// is lost, as in `pg_ctl stop -m immediate`. What survived is read on another port before the services
// can reach the server again.
//
// It proves: a claim with no synchronous commit behind it is lost (the job is `accepted` again: the
// claim really is asynchronous); such a job can then be cancelled, and its redelivery does not run it;
// another such job is run by its redelivery, once (one submission, one receipt, one event of each kind);
// a cancel refused because the job has started is never undone by a crash (the job stays `running`)
// and the job then settles once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { PrivatePostgres } from './support/private-postgres.js';
import { Stack } from './support/stack.js';
import { PRODUCT, submissionBody } from './support/fixtures.js';
import { until } from './support/poll.js';
import { scrape } from './support/metrics.js';

interface JobState {
  job_id: string;
  status: string;
  deliveries: number;
}

describe("PostgreSQL crashed behind the worker's claims (asynchronous commit)", () => {
  let server: PrivatePostgres;
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    // No autovacuum either: an ANALYZE's commit is synchronous, and would write the claims' WAL.
    server = await PrivatePostgres.start({ settings: { synchronous_commit: 'on', wal_writer_delay: '10000ms', autovacuum: 'off' } });
    stack = await Stack.create({ pgAdminUrl: server.url() });
    // No worker yet: each round starts its own once its jobs are queued. No request log: its writer
    // stores the submits' entries (asynchronous commits) a flush interval after they are answered,
    // at a moment the round does not control; that WAL could fill the claims' page, which the WAL
    // writer then writes, claims included (seen once in CI on a slow machine).
    await stack.startAll({ REQUEST_LOG_ENABLED: 'false' }, { worker: false });
    await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Test product');
    token = await stack.token(await stack.createClient());
  });

  afterAll(async () => {
    await server?.up().catch(() => undefined);
    await stack?.stop();
    await server?.destroy();
  });

  const submit = async (key: string): Promise<string> => {
    const r = await stack.api('POST', '/v1/submissions', { token, json: submissionBody(key), headers: { 'idempotency-key': key } });
    expect(r.status, r.text).toBe(202);
    return (r.body as { id: string }).id;
  };
  const cancel = (id: string) => stack.api('POST', `/v1/jobs/${id}/cancel`, { token });
  const states = async (c: pg.Client, ids: string[]): Promise<Map<string, JobState>> =>
    new Map(
      (await c.query<JobState>('SELECT job_id, status, deliveries FROM job.jobs WHERE job_id = ANY($1)', [ids])).rows.map((r) => [r.job_id, r]),
    );

  /**
   * One round: the jobs queued with no worker running; the submissions table locked; a worker
   * started, which claims every job and waits on the lock in its insert; `beforeCrash`; the crash;
   * what survived, read aside; the server back for the services. The worker naks each delivery
   * its crash failed, for the back-off (WORKER_BACKOFF_MS) before the next.
   */
  const round = async (
    keys: string[],
    beforeCrash: (ids: string[]) => Promise<void> = async () => undefined,
    opts: { unwritten?: boolean } = {},
    attempt = 1,
  ): Promise<{ ids: string[]; after: Map<string, JobState>; submissions: number; outbox: number; worker: Awaited<ReturnType<Stack['startWorker']>> }> => {
    const ids = await Promise.all(keys.map(submit));
    // Published and their outbox rows deleted: no commit of the submit path is left to come.
    await until('the jobs published', async () => Number((await stack.sql<{ n: string }>('SELECT count(*) AS n FROM job.outbox'))[0]!.n) === 0);
    const lock = new pg.Client({ connectionString: server.url(stack.dbName) });
    lock.on('error', () => undefined);
    await lock.connect();
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE submission.submissions IN SHARE MODE');
    const look = new pg.Client({ connectionString: server.url(stack.dbName) });
    look.on('error', () => undefined);
    await look.connect();
    // The WAL writer writes every full page of WAL at once, asynchronous commits in it included: the
    // claims' records must not be on a page that later WAL fills before the crash. The claims and the
    // waiting insert's row locks write a few hundred bytes; when less than 2 KB of the current page is
    // left, the claims begin on the next page: WAL up to its boundary first (a non-transactional
    // logical message: written into the WAL buffers, no commit, no flush).
    const { rest } = (await look.query<{ rest: string }>("SELECT 8192 - (pg_current_wal_insert_lsn() - '0/0'::pg_lsn) % 8192 AS rest")).rows[0]!;
    if (Number(rest) < 2048) await look.query("SELECT pg_logical_emit_message(false, 'claim-crash-test', repeat('x', $1))", [Number(rest)]);
    // Where the claims' WAL begins: none of it may be written (to the OS) before the crash.
    const claimsFrom = (await look.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn() AS lsn')).rows[0]!.lsn;
    const worker = await stack.startWorker({ WORKER_BACKOFF_MS: '4000', WORKER_MAX_DELIVERIES: '20' });
    // (Two jobs of one partner may be created in one call, or the second wait for the first's receipt
    // chain: either way no effect commits while the insert waits.)
    await until('every job claimed and the insert waiting on the lock', async () => {
      const claimed = [...(await states(look, ids)).values()].every((j) => j.status === 'running');
      const waiting = await look.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_locks WHERE relation = 'submission.submissions'::regclass AND NOT granted",
      );
      return claimed && Number(waiting.rows[0]!.n) > 0;
    });
    await beforeCrash(ids);
    if (opts.unwritten) {
      // The WAL writer's own round (every 10 s) writes every asynchronous commit; if one fell between
      // the claims and now, this round cannot show a claim lost: let its jobs run, then a new round.
      // (The crash follows this read by a millisecond or so, against the round's 10 s.)
      const { written, past } = (
        await look.query<{ written: string; past: boolean }>('SELECT pg_current_wal_lsn() AS written, pg_current_wal_lsn() > $1::pg_lsn AS past', [claimsFrom])
      ).rows[0]!;
      if (past) {
        if (attempt >= 5) throw new Error(`the claims' WAL was written before the crash in ${attempt} rounds`);
        console.log(`claim crash: the claims' WAL was written before the crash (written ${written}, claims from ${claimsFrom}); another round`);
        await lock.query('ROLLBACK');
        await Promise.all([lock.end(), look.end()]);
        for (const id of ids) await settled(id);
        await worker.stop();
        return round(keys.map((k) => `${k}-${attempt + 1}`), beforeCrash, opts, attempt + 1);
      }
    }
    await server.crash();
    await Promise.all([lock.end().catch(() => undefined), look.end().catch(() => undefined)]);
    const aside = await server.upElsewhere();
    const survived = new pg.Client({ connectionString: server.urlOn(aside, stack.dbName) });
    await survived.connect();
    const after = await states(survived, ids);
    const submissions = Number((await survived.query<{ n: string }>('SELECT count(*) AS n FROM submission.submissions WHERE job_id = ANY($1)', [ids])).rows[0]!.n);
    // The jobs' outbox rows whose deletes (asynchronous too) the crash lost.
    const outbox = Number((await survived.query<{ n: string }>('SELECT count(*) AS n FROM job.outbox WHERE job_id = ANY($1)', [ids])).rows[0]!.n);
    await survived.end();
    await server.down();
    await server.up();
    return { ids, after, submissions, outbox, worker };
  };

  const settled = (id: string) =>
    until(`job ${id} settled`, async () => {
      const r = await stack.api('GET', `/v1/jobs/${id}`, { token, headers: { prefer: 'wait=5' } });
      const body = r.body as { status: string; result?: { submissionId: string } };
      return r.status === 200 && body.status !== 'processing' && body;
    }, 40_000);

  it('a claim no synchronous commit followed is lost: the job is accepted again, may be cancelled, and otherwise runs once', async () => {
    const { ids, after, submissions, outbox, worker } = await round(['claim-lost-cancel', 'claim-lost-run'], undefined, { unwritten: true });
    const [cancelled, run] = ids as [string, string];
    // Both claims were lost with the crash, and with them nothing else: no effect had committed.
    expect(after.get(cancelled)).toMatchObject({ status: 'accepted', deliveries: 0 });
    expect(after.get(run)).toMatchObject({ status: 'accepted', deliveries: 0 });
    expect(submissions).toBe(0);
    // The deletes of their outbox rows (services/shared/src/nats/outbox-relay.ts) commit asynchronously
    // too, before the claims; whether the crash lost them depends on whether later WAL filled their
    // page (the WAL writer writes full pages) before the crash. Either way nothing below runs twice: the
    // relay publishes rows it finds again, and JetStream drops the duplicates.
    expect([0, 2]).toContain(outbox);
    console.log(`claim crash: outbox rows back after the crash (their deletes lost): ${outbox} of 2`);

    // The unclaimed job can be cancelled (before its redelivery, 4 s after the crash): 200, cancelled.
    const c = await until('the cancel answered', async () => {
      const r = await cancel(cancelled);
      return r.status === 503 ? false : r;
    });
    expect(c.status, c.text).toBe(200);
    expect(c.body).toMatchObject({ id: cancelled, status: 'canceled' });

    // The other is delivered again and runs once; the cancelled one's redelivery finds it cancelled.
    const done = await settled(run);
    expect(done.status).toBe('succeeded');
    expect((await settled(cancelled)).status).toBe('canceled');
    await until('the outbox published again and emptied', async () => Number((await stack.sql<{ n: string }>('SELECT count(*) AS n FROM job.outbox'))[0]!.n) === 0);
    await until("the cancelled job's redelivery skipped it", async () =>
      (await scrape(stack.opsUrls.worker!)).sum('partner_worker_jobs_processed_total', { kind: 'submission.create', outcome: 'skipped' }) === 1,
    );
    const rows = await stack.sql<{ job_id: string; submission_id: string }>('SELECT job_id, submission_id FROM submission.submissions WHERE job_id = ANY($1)', [ids]);
    expect(rows).toEqual([{ job_id: run, submission_id: done.result!.submissionId }]);
    const receipts = await stack.sql<{ n: string }>('SELECT count(*) AS n FROM submission.receipts WHERE job_id = $1', [run]);
    expect(Number(receipts[0]!.n)).toBe(1);
    await until('the events stored', async () => {
      const events = await stack.sql<{ type: string; id: string }>(
        `SELECT type, coalesce(data->>'submissionId', data->>'id') AS id FROM events.events
          WHERE type IN ('submission.created', 'job.succeeded', 'job.canceled') AND coalesce(data->>'submissionId', data->>'id') = ANY($1)`,
        [[cancelled, run, done.result!.submissionId]],
      );
      const want = [
        { type: 'job.canceled', id: cancelled },
        { type: 'job.succeeded', id: run },
        { type: 'submission.created', id: done.result!.submissionId },
      ];
      const key = (e: { type: string; id: string }) => `${e.type} ${e.id}`;
      return JSON.stringify(events.map(key).sort()) === JSON.stringify(want.map(key).sort());
    });
    await worker.stop();
  });

  it('a cancel refused because the job has started is never undone by a crash: the claim is on disk before the 409', async () => {
    const { ids, after, submissions, outbox, worker } = await round(['claim-refused'], async ([id]) => {
      const r = await cancel(id!);
      expect(r.status, r.text).toBe(409);
      expect((r.body as { error: { code: string } }).error.code).toBe('job_not_cancelable');
    });
    const [id] = ids as [string];
    // Without the refusal's flush this claim would be lost as the first test's were.
    expect(after.get(id)).toMatchObject({ status: 'running', deliveries: 1 });
    expect(submissions).toBe(0);
    // The refusal's flush wrote all WAL before it, the outbox row's delete included.
    expect(outbox).toBe(0);
    const done = await settled(id);
    expect(done.status).toBe('succeeded');
    const rows = await stack.sql<{ submission_id: string }>('SELECT submission_id FROM submission.submissions WHERE job_id = $1', [id]);
    expect(rows).toEqual([{ submission_id: done.result!.submissionId }]);
    // Still refused, after it all.
    expect((await cancel(id)).status).toBe(409);
    await worker.stop();
  });
});
