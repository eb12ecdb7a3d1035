// The event path by stage (issue 34): where the time between a settlement's commit and a long-polling
// feed reader (or a webhook receiver) having its event goes. Each stage's end is read from a clock on
// this machine, so the stages of one event add up to its end-to-end figure:
//
//   settle      the event's timestamp (the settling statement, committed with its outbox row)
//   jetstream   the events stream stored the relay's publish (the stream message's own timestamp)
//   writer      the feed writer's transaction that stored it began (events.stored_at = now())
//   feed.stored the writer committed and published the wake-up (heard here, as a gateway hears it)
//   reader      the long-polling reader has the page            (feed)
//   post        the dispatcher started the POST (webhook_attempts.attempted_at, 1 ms resolution)
//   receiver    the receiver has the request                     (webhooks)
import { connect } from 'nats';
import { natsNames } from '../../services/shared/dist/nats/client.js';
import { round, summarize, wallNow } from './load.mjs';

/** "2026-11-26T12:30:00.123456789Z" → wall-clock ms with the sub-millisecond part kept. */
export function isoMs(iso) {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(iso);
  if (!m) return Date.parse(iso);
  return Date.parse(`${m[1]}Z`) + Number(`0.${m[2] ?? '0'}`) * 1000;
}

/**
 * Starts listening to the feed's wake-ups and notes where the events stream stands; `stages()`
 * later reads the stream messages, the stored rows and the attempts of the given jobs' events.
 */
export async function stageTap(stack) {
  const names = natsNames(stack.prefix);
  const nc = await connect({ servers: stack.natsUrl });
  const jsm = await nc.jetstreamManager();
  const firstSeq = (await jsm.streams.info(names.eventsStream)).state.last_seq + 1;
  const wakes = new Map(); // partner key → [{ seq, at }] in arrival order
  nc.subscribe(names.feedWakeSubject, {
    callback: (_err, m) => {
      const at = wallNow();
      try {
        const w = JSON.parse(m.string());
        const key = `${w.tenantId}\u0000${w.partnerId}`;
        (wakes.get(key) ?? wakes.set(key, []).get(key)).push({ seq: BigInt(w.seq), at });
      } catch {
        // not a wake-up
      }
    },
  });
  await nc.flush();

  /**
   * Per-stage latencies of the job.succeeded events of `jobIds`; `endAt(jobId)` is when the reader
   * or receiver had it (wall ms). webhook: read the first attempt's start too.
   */
  async function stages(jobIds, endAt, { webhook = false } = {}) {
    const wanted = new Set(jobIds);
    const lastSeq = (await jsm.streams.info(names.eventsStream)).state.last_seq;
    const byJob = new Map();
    for (let seq = firstSeq; seq <= lastSeq; seq++) {
      const sm = await jsm.streams.getMessage(names.eventsStream, { seq }).catch(() => undefined);
      if (!sm) continue;
      let body;
      try {
        body = sm.json();
      } catch {
        continue;
      }
      const e = body?.event;
      if (e?.type !== 'job.succeeded' || !wanted.has(e.data?.id)) continue;
      byJob.set(e.data.id, { eventId: e.id, key: `${body.tenantId}\u0000${body.partnerId}`, settle: isoMs(e.timestamp), jetstream: isoMs(sm.timestamp) });
    }
    const eventIds = [...byJob.values()].map((x) => x.eventId);
    const rows = await stack.sql(
      `SELECT event_id, partner_seq, extract(epoch FROM stored_at) * 1000 AS stored_ms FROM events.events WHERE event_id = ANY($1)`,
      [eventIds],
    );
    const stored = new Map(rows.map((r) => [r.event_id, { seq: BigInt(r.partner_seq), at: Number(r.stored_ms) }]));
    const attempts = webhook
      ? new Map(
          (
            await stack.sql(
              `SELECT d.event_id, extract(epoch FROM a.attempted_at) * 1000 AS at FROM events.webhook_deliveries d
                 JOIN events.webhook_attempts a ON a.delivery_id = d.delivery_id AND a.attempt = 1
                WHERE d.event_id = ANY($1)`,
              [eventIds],
            )
          ).map((r) => [r.event_id, Number(r.at)]),
        )
      : new Map();
    const out = { settleToJetstream: [], jetstreamToWriter: [], writerToFeedStored: [], total: [] };
    if (webhook) Object.assign(out, { feedStoredToPost: [], postToReceiver: [] });
    else out.feedStoredToReader = [];
    for (const [jobId, x] of byJob) {
      const s = stored.get(x.eventId);
      const end = endAt(jobId);
      if (!s || end === undefined) continue;
      const wake = (wakes.get(x.key) ?? []).find((w) => w.seq >= s.seq);
      out.settleToJetstream.push(x.jetstream - x.settle);
      out.jetstreamToWriter.push(s.at - x.jetstream);
      out.total.push(end - x.settle);
      if (!wake) continue;
      out.writerToFeedStored.push(wake.at - s.at);
      if (!webhook) out.feedStoredToReader.push(end - wake.at);
      else if (attempts.has(x.eventId)) {
        const post = attempts.get(x.eventId);
        out.feedStoredToPost.push(post - wake.at);
        out.postToReceiver.push(end - post);
      }
    }
    return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, summarize(v)]));
  }

  return { stages, close: () => nc.close() };
}

/** The table's rows for one path's stages: p50 and p99 of each, one row per figure (no targets: the end-to-end rows carry them). */
export function stageRows(label, stages) {
  const names = {
    settleToJetstream: 'settle commit → JetStream stored (relay fast path)',
    jetstreamToWriter: 'JetStream → events writer transaction begins',
    writerToFeedStored: 'writer transaction → feed.stored heard (store, commit, wake-up)',
    feedStoredToReader: 'feed.stored → long-poll reader has the page',
    feedStoredToPost: 'feed.stored → dispatcher starts the POST (wake + claim)',
    postToReceiver: 'POST start → receiver has it',
  };
  const rows = [];
  for (const [k, text] of Object.entries(names)) {
    const s = stages?.[k];
    if (!s) continue;
    for (const p of ['p50', 'p99']) rows.push({ metric: `${label} stage ${p}: ${text}`, product: round(s[p]), unit: 'ms', baseline: null, baselineName: null, ratio: null, target: null, pass: null });
  }
  return rows;
}

/**
 * The event-path rows (issue 34). all: the rows of `--only events` (end-to-end, stages, fan-out,
 * waiters); otherwise only those the full run's table (report.mjs) does not already have.
 */
export function eventPathRows(r, { judge, all }) {
  const rows = [];
  const add = (metric, product, unit, target) =>
    rows.push({ metric, product: round(product, 3), unit, baseline: null, baselineName: null, ratio: null, target: target?.text ?? null, pass: judge && target ? target.check(product) : null });
  const feed = r.events?.wakeup;
  const hook = r.webhooks?.latency;
  if (all && feed) {
    add('event feed: settle commit → long-poll reader p50', feed.fromCommitMs.p50, 'ms');
    add('event feed: settle commit → long-poll reader p99', feed.fromCommitMs.p99, 'ms', { text: '≤ 10 ms', check: (v) => v !== null && v <= 10 });
  }
  if (feed?.stages) rows.push(...stageRows('event feed', feed.stages));
  if (all && hook) {
    add('webhook: settle commit → receiver p50', hook.fromCommitMs.p50, 'ms');
    add('webhook: settle commit → receiver p99', hook.fromCommitMs.p99, 'ms', { text: '≤ 20 ms', check: (v) => v !== null && v <= 20 });
  }
  if (hook?.stages) rows.push(...stageRows('webhook', hook.stages));
  const f = r.webhooks?.fanout;
  if (f) {
    if (all) {
      add(`webhook fan-out ${f.healthy.events} events × ${f.healthy.endpoints} endpoints`, f.healthy.deliveriesPerS, 'deliveries/s');
      add('webhook fan-out CPU/delivery (dispatcher + events + PG)', f.healthy.cpuMsPerDelivery.total, 'ms');
      add(`webhook fan-out healthy p99, ${f.withHanging.hanging} of ${f.withHanging.endpoints} hanging ÷ all healthy`, f.healthyP99Ratio, '×', { text: '≤ 2× all healthy', check: (v) => v !== null && v <= 2 });
    }
    add('webhook fan-out PostgreSQL CPU/delivery', f.healthy.cpuMsPerDelivery.postgres, 'ms', { text: '≤ 0.5 ms', check: (v) => v !== null && v <= 0.5 });
    add('webhook fan-out dispatcher CPU/delivery', f.healthy.cpuMsPerDelivery.dispatcher, 'ms');
    add('webhook fan-out claim queries/delivery', f.healthy.claimsPerDelivery, '');
    add('webhook fan-out successes per settlement transaction (mean)', f.healthy.meanSettleBatch, '');
    add('webhook fan-out duplicates (both runs)', f.healthy.duplicates + f.withHanging.duplicates, '', { text: '0', check: (v) => v === 0 });
  }
  const w = r.waiters;
  if (all && w) {
    add(`${w.waiters} waiters: extra gateway RSS after a forced GC`, w.afterGc?.extraRssMb, 'MB', { text: '< 200 MB', check: (v) => v !== null && v < 200 });
    add(`${w.waiters} waiters: live heap per waiter after a forced GC`, w.afterGc?.heapKbPerWaiter, 'KB');
    add(`${w.waiters} waiters: extra gateway RSS, no forced GC`, w.extraRssMb, 'MB');
    add(`${w.waiters} waiters: DB queries while waiting`, w.queriesWhileWaiting, '', { text: '0', check: (v) => v === 0 && w.pgStatActivityBackendsActiveInWindow === 0 });
    add(`${w.waiters} waiters: all answered after first settle`, w.settle.allAnsweredAfterFirstSettleMs, 'ms');
    rows.at(-1).product = `${w.settle.allAnsweredAfterFirstSettleMs} (${w.settle.ok}/${w.waiters} ok)`;
  }
  return rows;
}
