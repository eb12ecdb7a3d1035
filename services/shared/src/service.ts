// The common shape of a gRPC service process: a pool on its own schema (migrated on start unless
// told not to), its gRPC services plus grpc.health.v1, any listeners of its own (the token server's
// HTTP), the ops listener, and one shutdown order for all of them:
//   readiness off → gRPC and the other listeners drain together → the service's own stop (consumers,
//   relays, timers) → pool → ops listener (last, so /livez answers while the rest stops).
import type { Registry } from 'prom-client';
import type { BaseConfig, DbConfig } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { createPool, migrate, registerPoolMetrics, type Pool } from './pg.js';
import { startGrpcServer, type ServiceBinding } from './grpc.js';
import { createRegistry, startOpsServer, type ReadinessCheck } from './ops.js';

/** A listener a service runs besides gRPC and ops (its port is announced under `name`). */
export interface ExtraListener {
  name: string;
  port: number;
  /** Stops accepting, lets requests in flight finish within drainMs. */
  close(drainMs: number): Promise<void>;
}

export interface ServiceParts {
  bindings: ServiceBinding[];
  listeners?: ExtraListener[];
  checks?: Record<string, ReadinessCheck>;
  /** Stops what the service started besides its gRPC server (consumers, relays, timers). */
  stop?: () => Promise<void>;
}

export interface RunningService {
  ports: { grpc: number; ops: number; [listener: string]: number };
  pool: Pool;
  registry: Registry;
  stop(): Promise<void>;
}

export interface GrpcServiceOptions {
  /** The service's configuration: base settings, database and its gRPC port. */
  config: BaseConfig & DbConfig & { grpcPort: number };
  schema: string;
  migrationsDir: string;
  migrate?: boolean;
  logger?: Logger;
  /** Builds the service; pass `{ registry }` to implement() so its gRPC calls are counted. */
  build(ctx: { pool: Pool; registry: Registry; logger: Logger }): Promise<ServiceParts>;
}

export async function migrateSchema(db: DbConfig, schema: string, migrationsDir: string, logger: Logger): Promise<void> {
  const pool = createPool({ url: db.databaseUrl, schema, max: 1, applicationName: `${schema}-migrate`, logger });
  try {
    await migrate(pool, schema, migrationsDir, logger);
  } finally {
    await pool.end();
  }
}

export async function startGrpcService(opts: GrpcServiceOptions): Promise<RunningService> {
  const name = opts.config.serviceName;
  const logger = opts.logger ?? createLogger(name, opts.config.logLevel);
  const pool = createPool({ url: opts.config.databaseUrl, schema: opts.schema, max: opts.config.poolMax, applicationName: name, logger, timeouts: opts.config.timeouts });
  if (opts.migrate ?? true) await migrate(pool, opts.schema, opts.migrationsDir, logger);
  const registry = createRegistry(name);
  registerPoolMetrics(pool, registry, opts.config.poolMax);
  const parts = await opts.build({ pool, registry, logger });
  const grpc = await startGrpcServer({ host: opts.config.host, port: opts.config.grpcPort, services: parts.bindings });
  const ops = await startOpsServer({
    host: opts.config.host,
    port: opts.config.opsPort,
    registry,
    checks: { postgres: async () => void (await pool.query('SELECT 1')), ...(parts.checks ?? {}) },
  });
  const listeners = parts.listeners ?? [];
  return {
    ports: { ...Object.fromEntries(listeners.map((l) => [l.name, l.port])), grpc: grpc.port, ops: ops.port },
    pool,
    registry,
    stop: async () => {
      ops.setDraining();
      await Promise.all([grpc.shutdown(opts.config.drainMs), ...listeners.map((l) => l.close(opts.config.drainMs))]);
      await parts.stop?.();
      await pool.end();
      await ops.close();
    },
  };
}
