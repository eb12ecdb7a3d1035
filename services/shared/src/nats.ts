// NATS: connection helper and the names of every subject and stream, derived from one prefix so
// deployments and test runs can share a server without seeing each other's messages.
import { connect, type NatsConnection } from 'nats';
import type { Logger } from './logger.js';

export type { NatsConnection };

export function natsNames(prefix: string) {
  return {
    /** JetStream work-queue stream holding queued jobs. */
    jobsStream: `${prefix}_JOBS`,
    /** Subject of a queued job of a kind, e.g. partner.jobs.submission_create. */
    jobSubject: (kind: string) => `${prefix}.jobs.${kind.replace(/[^A-Za-z0-9_-]/g, '_')}`,
    jobSubjects: `${prefix}.jobs.>`,
    /** Durable consumer the workers share. */
    workerConsumer: 'workers',
    /** Core NATS subject of settlement events (one for all jobs; every gateway subscribes). */
    settledSubject: `${prefix}.events.job_settled`,
  };
}

/**
 * Connects with endless reconnects. With waitOnFirstConnect the promise settles once a server is
 * reached, so a process may start before NATS and catch up when it comes.
 */
export async function connectNats(opts: { url: string; name: string; logger: Logger }): Promise<NatsConnection> {
  const nc = await connect({
    servers: opts.url.split(','),
    name: opts.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    pingInterval: 10_000,
  });
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') {
        opts.logger.warn({ nats: s.type, data: String(s.data) }, 'NATS connection status');
      }
    }
  })();
  return nc;
}
