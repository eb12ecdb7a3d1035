// startProcess: the one way every process (auth, policy, submission, job, events, worker, dispatcher,
// gateway) starts and stops. Top to bottom it reads as a process runs:
//   config → pool on its schema (migrated unless told not to) → metrics registry → gRPC clients (the
//   list from services/processes.json, addresses from config) → NATS (`first`: waited for; `later`:
//   attached when it comes) → build (the service's own parts; loops and HTTP listeners start here)
//   → gRPC server (its bindings + grpc.health.v1) → ops listener → ready (main announces the ports).
// Readiness, the same for every process: "not draining and listening". The ops listener starts
// last, so once /readyz answers, every listener of the process is bound; from then until the
// shutdown /readyz answers 200 and gRPC health SERVING, whatever PostgreSQL, NATS or the peer
// services do. A dependency outage is answered per call instead (UNAVAILABLE / 503 `unavailable`
// with a retry hint: domain/outage.ts), so the Service keeps its endpoints and callers get our
// answer, and a PDB never counts the pods of a healthy process as disrupted. The dependencies are
// still checked and reported (/readyz's body, /dependencies: http/ops-server.ts). Liveness is the
// process's own (parts.liveness: e.g. a worker whose consume loop stays dead is restarted).
// Shutdown, the one order for every process (the reverse):
//   1. readiness off: /readyz answers 503 draining, ctx.draining() turns true, gRPC health NOT_SERVING;
//   2. listeners drain together: gRPC (tryShutdown within the drain budget) and the HTTP listeners
//      (in-flight requests finish, idle connections close, the rest are cut when the budget is spent);
//   3. consumers and loops stop: the supervised loops (the running pass awaited), then the service's
//      own stop (consumers, relays, writers, caches);
//   4. clients and NATS close: the NATS connection drains, the gRPC client channels close;
//   5. the pool ends;
//   6. the ops listener closes last, so /livez answers while the rest stops.
// run.ts wraps it for main.ts: the ready line, signals, the hard deadline and telemetry after all.
import type { Registry } from 'prom-client';
import type { BaseConfig, DbConfig, NatsConfig } from './config.js';
import { startGrpcServer } from '../grpc/server.js';
import type { ServiceBinding } from '../grpc/loader.js';
import { createLogger, type Logger } from '../telemetry/logger.js';
import { createRegistry, startOpsServer, type DependencyCheck, type LivenessCheck } from '../http/ops-server.js';
import { createPool, migrate, registerPoolMetrics, type MigrationSteps, type PlannerSettings, type Pool } from '../db/pg.js';
import { clientReadiness, closeClients, createClients, type GrpcClients, type GrpcClientsConfig, type ServiceName } from './clients.js';
import { supervisedLoops, type LoopSpec } from './loops.js';
import { NO_NATS, startNats, type NatsHandle, type ProcessNats } from './nats.js';
import type { Listener } from './http.js';

export interface ProcessContext<C, K extends ServiceName> {
  config: C;
  logger: Logger;
  registry: Registry;
  /** The pool on the process's schema (only with `db`; reading it otherwise throws). */
  readonly pool: Pool;
  clients: GrpcClients<K>;
  nats: ProcessNats;
  /** Starts a supervised background loop (loops.ts: one restart policy), stopped at step 3. */
  every(spec: LoopSpec): void;
  /** True from the start of the shutdown (step 1). */
  draining(): boolean;
}

export interface ProcessParts {
  /** Served on config.grpcPort with grpc.health.v1 (and the call streams of grpc/call-stream.ts). */
  grpc?: ServiceBinding[];
  /** HTTP listeners started by build (http.ts listenHttp), drained at step 2. */
  listeners?: Listener[];
  /** Dependency checks besides the pool's (`postgres`), NATS's and the clients': reported, never gating readiness. */
  dependencies?: Record<string, DependencyCheck>;
  liveness?: Record<string, LivenessCheck>;
  /** Stops the consumers and what else the service runs (step 3). */
  stop?: () => Promise<void>;
}

/** What a caller (main.ts, a test) may pass to a process's start function. */
export interface StartOptions {
  /** Default: a logger named after the process at config.logLevel. */
  logger?: Logger | undefined;
  /** Apply the schema's migrations at start (default true; the Helm hook Job does it in Kubernetes). */
  migrate?: boolean | undefined;
}

export interface ProcessSpec<C extends BaseConfig, K extends ServiceName> extends StartOptions {
  /** The process's name in services/processes.json. */
  name: string;
  config: C;
  /** Its schema: a pool on it (pool metrics, a reported `postgres` dependency), migrated unless `migrate` is false. */
  db?: { schema: string; migrationsDir: string; before?: MigrationSteps | undefined; planner?: PlannerSettings | undefined };
  /** Build its gRPC clients (the config's addresses); each is a reported dependency (its peer's health). */
  clients?: { config: GrpcClientsConfig<K> };
  /** Connect to NATS: `first` before build, or `later` in the background; a reported `nats` dependency. */
  nats?: { connect: 'first' | 'later' };
  build(ctx: ProcessContext<C, K>): Promise<ProcessParts>;
}

export interface RunningProcess {
  ports: Record<string, number>;
  /** The pool (with `db`). */
  pool: Pool | undefined;
  registry: Registry;
  stop(): Promise<void>;
}

/** Applies a schema's migrations on a pool of its own (`main.js migrate`, and startProcess). */
export async function migrateSchema(db: DbConfig, schema: string, migrationsDir: string, logger: Logger, before?: MigrationSteps): Promise<void> {
  const pool = createPool({ url: db.databaseUrl, schema, max: 1, applicationName: `${schema}-migrate`, logger });
  try {
    await migrate(pool, schema, migrationsDir, logger, before);
  } finally {
    await pool.end();
  }
}

export async function startProcess<C extends BaseConfig, K extends ServiceName = never>(spec: ProcessSpec<C, K>): Promise<RunningProcess> {
  const { config } = spec;
  const name = config.serviceName;
  const logger = spec.logger ?? createLogger(name, config.logLevel);
  const db = config as C & Partial<DbConfig>;
  let pool: Pool | undefined;
  if (spec.db) {
    if (db.databaseUrl === undefined || db.poolMax === undefined) throw new Error(`${name}: a pool needs the database settings (readDb)`);
    pool = createPool({
      url: db.databaseUrl,
      schema: spec.db.schema,
      max: db.poolMax,
      applicationName: name,
      logger,
      timeouts: db.timeouts,
      ...(spec.db.planner ? { planner: spec.db.planner } : {}),
    });
    if (spec.migrate ?? true) await migrate(pool, spec.db.schema, spec.db.migrationsDir, logger, spec.db.before);
  }
  const registry = createRegistry(name);
  if (pool) registerPoolMetrics(pool, registry, db.poolMax!);
  const clients = spec.clients ? createClients<K>(spec.name, spec.clients.config, registry) : ({} as GrpcClients<K>);
  let nats: NatsHandle | undefined;
  if (spec.nats) {
    const { natsUrl } = config as C & Partial<NatsConfig>;
    if (natsUrl === undefined) throw new Error(`${name}: NATS needs its settings (readNats)`);
    nats = await startNats({ url: natsUrl, name, logger, wait: spec.nats.connect === 'first' });
  }
  const loops = supervisedLoops(logger);
  let draining = false;
  const havePool = pool;
  const parts = await spec.build({
    config,
    logger,
    registry,
    get pool(): Pool {
      if (!havePool) throw new Error(`${name} was started without a pool`);
      return havePool;
    },
    clients,
    nats: nats ?? NO_NATS,
    every: (loop) => loops.every(loop),
    draining: () => draining,
  });
  let grpc: Awaited<ReturnType<typeof startGrpcServer>> | undefined;
  if (parts.grpc) {
    const { grpcPort } = config as C & { grpcPort?: number };
    if (grpcPort === undefined) throw new Error(`${name}: a gRPC server needs its port in the configuration (grpcPort)`);
    grpc = await startGrpcServer({ host: config.host, port: grpcPort, services: parts.grpc });
  }
  const ops = await startOpsServer({
    host: config.host,
    port: config.opsPort,
    registry,
    dependencies: {
      ...(pool ? { postgres: async () => void (await pool.query('SELECT 1')) } : {}),
      ...(nats ? { nats: nats.readiness() } : {}),
      ...(spec.clients ? clientReadiness(clients) : {}),
      ...parts.dependencies,
    },
    ...(parts.liveness ? { liveness: parts.liveness } : {}),
  });
  const listeners = parts.listeners ?? [];
  return {
    ports: { ...Object.fromEntries(listeners.map((l) => [l.name, l.port])), ...(grpc ? { grpc: grpc.port } : {}), ops: ops.port },
    pool,
    registry,
    stop: async () => {
      draining = true;
      ops.setDraining();
      grpc?.setServing('NOT_SERVING');
      await Promise.all([grpc?.shutdown(config.drainMs), ...listeners.map((l) => l.close(config.drainMs))]);
      await loops.stop();
      await parts.stop?.();
      await nats?.close();
      closeClients(clients);
      await pool?.end();
      await ops.close();
    },
  };
}
