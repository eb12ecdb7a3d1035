// Baseline (c), the floor pipeline: the least the design's mutation path costs with no gRPC and no
// framework beyond Koa. One module, two roles (FLOOR_ROLE):
//   http   — POST /v1/submissions: read + parse the JSON body, register a waiter for the job id,
//            INSERT the job (pg), publish it to JetStream and await the ack, then answer 200 with the
//            result once the settlement event arrives on core NATS (one subscription for all jobs,
//            made at start, so it exists before any publish).
//   worker — durable pull consumer with explicit ack and at most FLOOR_CONCURRENCY jobs at once (the
//            product worker's default is 16): INSERT the submission, UPDATE the job with its result,
//            publish the settlement event on core NATS, ack.
// Tables live in the bench database's own `floor` schema; subjects and the stream use their own
// prefix. The bench creates both before starting the processes.
import Koa from 'koa';
import Router from '@koa/router';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { connect, StringCodec } from 'nats';

const role = process.env.FLOOR_ROLE;
const prefix = process.env.FLOOR_PREFIX;
const stream = `${prefix}_JOBS`;
const jobSubject = `${prefix}.jobs.submission_create`;
const settledSubject = `${prefix}.events.job_settled`;
const sc = StringCodec();

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX ?? 10), application_name: `floor-${role}` });
const nc = await connect({ servers: process.env.NATS_URL, name: `floor-${role}` });
const js = nc.jetstream();

if (role === 'http') {
  const waiters = new Map();
  nc.subscribe(settledSubject, {
    callback: (_err, msg) => {
      const event = JSON.parse(sc.decode(msg.data));
      waiters.get(event.jobId)?.(event.result);
    },
  });
  await nc.flush();

  const readBody = (req) =>
    new Promise((resolve, reject) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });

  const app = new Koa();
  const router = new Router();
  router.get('/readyz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.post('/v1/submissions', async (ctx) => {
    const payload = JSON.parse(await readBody(ctx.req));
    const jobId = randomUUID();
    let timer;
    const settled = new Promise((resolve) => {
      waiters.set(jobId, resolve);
      timer = setTimeout(() => resolve(undefined), 15_000);
    });
    try {
      await pool.query("INSERT INTO floor.jobs (job_id, tenant_id, partner_id, payload, status) VALUES ($1, $2, $3, $4, 'accepted')", [
        jobId,
        'bench',
        'bench-partner',
        payload,
      ]);
      await js.publish(jobSubject, sc.encode(JSON.stringify({ jobId, payload })), { msgID: jobId });
      const result = await settled;
      if (result) ctx.body = result;
      else {
        ctx.status = 202;
        ctx.body = { id: jobId, status: 'accepted' };
      }
    } finally {
      clearTimeout(timer);
      waiters.delete(jobId);
    }
  });
  app.use(router.routes());
  app.listen(Number(process.env.PORT), '127.0.0.1');
} else if (role === 'worker') {
  const consumer = await js.consumers.get(stream, 'workers');
  const concurrency = Number(process.env.FLOOR_CONCURRENCY ?? 16);
  const messages = await consumer.consume({ max_messages: concurrency });
  let slots = concurrency;
  const queue = [];
  const acquire = () => (slots > 0 ? (slots--, Promise.resolve()) : new Promise((r) => queue.push(r)));
  const release = () => (queue.length ? queue.shift()() : slots++);
  const handle = async (m) => {
    const { jobId, payload } = JSON.parse(sc.decode(m.data));
    const submissionId = randomUUID();
    const name = payload.applicant.legalName.trim();
    await pool.query(
      `INSERT INTO floor.submissions (submission_id, job_id, tenant_id, partner_id, external_ref, submission_type,
                                      effective_date, product_id, applicant, submission_name, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'submitted') ON CONFLICT (job_id) DO NOTHING`,
      [submissionId, jobId, 'bench', 'bench-partner', payload.externalRef, payload.submissionType, payload.effectiveDate, payload.productId, payload.applicant, name],
    );
    const result = { submissionId, submissionName: name, status: 'submitted' };
    await pool.query("UPDATE floor.jobs SET status = 'succeeded', result = $2, updated_at = now() WHERE job_id = $1", [jobId, result]);
    nc.publish(settledSubject, sc.encode(JSON.stringify({ jobId, result })));
    m.ack();
  };
  void (async () => {
    for await (const m of messages) {
      await acquire();
      handle(m)
        .catch((err) => {
          process.stderr.write(`floor worker: ${err.message}\n`);
          m.nak(1000);
        })
        .finally(release);
    }
  })();
  // Readiness for the bench: a tiny listener once the consumer runs.
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { status: 'ok' };
  });
  app.listen(Number(process.env.PORT), '127.0.0.1');
} else {
  throw new Error('FLOOR_ROLE must be http or worker');
}

process.on('SIGTERM', async () => {
  await nc.drain().catch(() => undefined);
  await pool.end().catch(() => undefined);
  process.exit(0);
});
