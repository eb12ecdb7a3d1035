// Starts the three baselines next to the bench stack: bare Koa, Koa + jose, and the floor pipeline
// (its schema in the bench database, its own JetStream stream and consumer under the bench prefix).
import { AckPolicy, DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, connect, nanos } from 'nats';
import { ROOT, freePorts, spawnNode, waitReady } from './stack.mjs';

export const FLOOR_SCHEMA_SQL = `
CREATE SCHEMA floor;
CREATE TABLE floor.jobs (
  job_id      text PRIMARY KEY,
  tenant_id   text NOT NULL,
  partner_id  text NOT NULL,
  payload     jsonb NOT NULL,
  status      text NOT NULL,
  result      jsonb,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE floor.submissions (
  submission_id    uuid PRIMARY KEY,
  job_id           text NOT NULL UNIQUE,
  tenant_id        text NOT NULL,
  partner_id       text NOT NULL,
  external_ref     text NOT NULL,
  submission_type  text NOT NULL,
  effective_date   date NOT NULL,
  product_id       uuid NOT NULL,
  applicant        jsonb NOT NULL,
  submission_name  text NOT NULL,
  status           text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);`;

export async function startBaselines(stack) {
  const [bare, jose, floorHttp, floorWorker] = await freePorts(4);
  const koa = `${ROOT}bench/baselines/koa.mjs`;
  const floor = `${ROOT}bench/baselines/floor.mjs`;

  // The floor pipeline's schema, stream (work queue, file storage, duplicate window — as the
  // product's) and durable pull consumer with explicit ack.
  await stack.sql(FLOOR_SCHEMA_SQL);
  const floorPrefix = `${stack.prefix}_floor`;
  const nc = await connect({ servers: stack.natsUrl });
  try {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({
      name: `${floorPrefix}_JOBS`,
      subjects: [`${floorPrefix}.jobs.>`],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      discard: DiscardPolicy.New,
      num_replicas: 1,
      duplicate_window: nanos(10 * 60_000),
    });
    await jsm.consumers.add(`${floorPrefix}_JOBS`, {
      durable_name: 'workers',
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(30_000),
      max_ack_pending: 1_000,
      filter_subject: `${floorPrefix}.jobs.>`,
    });
  } finally {
    await nc.close();
  }

  const common = { LOG_LEVEL: 'warn', DB_POOL_MAX: stack.env.DB_POOL_MAX ?? '10' };
  const procs = {
    koaBare: stack.track(spawnNode('koa-bare', koa, { env: { ...common, BASELINE_MODE: 'bare', PORT: String(bare) } })),
    koaJose: stack.track(
      spawnNode('koa-jose', koa, {
        env: {
          ...common,
          BASELINE_MODE: 'jose',
          PORT: String(jose),
          JWKS_URL: `${stack.issuer}/.well-known/jwks.json`,
          ISSUER: stack.issuer,
          AUDIENCE: 'partner-submission-api',
        },
      }),
    ),
    floorWorker: stack.track(
      spawnNode('floor-worker', floor, {
        env: { ...common, FLOOR_ROLE: 'worker', FLOOR_PREFIX: floorPrefix, PORT: String(floorWorker), DATABASE_URL: stack.databaseUrl, NATS_URL: stack.natsUrl },
      }),
    ),
    floorHttp: stack.track(
      spawnNode('floor-http', floor, {
        env: { ...common, FLOOR_ROLE: 'http', FLOOR_PREFIX: floorPrefix, PORT: String(floorHttp), DATABASE_URL: stack.databaseUrl, NATS_URL: stack.natsUrl },
      }),
    ),
  };
  await Promise.all([
    waitReady(procs.koaBare, `http://127.0.0.1:${bare}/readyz`),
    waitReady(procs.koaJose, `http://127.0.0.1:${jose}/readyz`),
    waitReady(procs.floorWorker, `http://127.0.0.1:${floorWorker}/`),
    waitReady(procs.floorHttp, `http://127.0.0.1:${floorHttp}/readyz`),
  ]);
  return {
    procs,
    urls: {
      koaBare: `http://127.0.0.1:${bare}`,
      koaJose: `http://127.0.0.1:${jose}`,
      floor: `http://127.0.0.1:${floorHttp}`,
    },
  };
}
