// Worker configuration (environment variables; see README "Configuration").
import { EnvReader } from '@partner/shared/config/env';
import { readBase, readNats, type BaseConfig, type NatsConfig } from '@partner/shared/process/config';
import { defaultAddress, defaultPort } from '@partner/shared/process/registry';

export interface WorkerConfig extends BaseConfig, NatsConfig {
  environment: 'uat' | 'production';
  grpc: { job: string; submission: string; policy: string; events: string };
  grpcTimeoutMs: number;
  /** Carry the hot calls (the submit steps and the hot reads) on open streams (shared/grpc/call-stream.ts). */
  grpcCallStreams: boolean;
  /** Jobs processed at once by this process. */
  concurrency: number;
  /** JetStream redelivers a job not acknowledged (nor kept alive with working()) within this. */
  ackWaitMs: number;
  /** Deliveries before a job that keeps failing on infrastructure errors is failed for good. */
  maxDeliveries: number;
  /** Delay before each redelivery after a retryable failure (the last value repeats). */
  backoffMs: number[];
  streamReplicas: number;
  /**
   * With the claim off (bench only): a first delivery is marked running (StartJob) only once it has
   * taken this long. 0 marks every job running, concurrently with its effect. Unused with the claim.
   */
  runningAfterMs: number;
  /**
   * Claim every job before its effect (the default; what makes cancellation safe). false only for the
   * bench, to measure what the claim costs: first deliveries then run unclaimed, as before.
   */
  claim: boolean;
  /** How long a product lookup is cached (unknown products: a fifth of it). */
  productCacheMs: number;
  /** /livez fails once the job consumer has been down (and could not be restarted) this long. */
  livenessAfterMs: number;
  /** Test-only fault injection: `exit-after-effect` kills the process after a job's effect, before its ack. */
  testFault: 'exit-after-effect' | undefined;
  /** Due transitions a test clock's advance applies per call (per transaction) (issue 44). */
  testClockAdvanceBatch: number;
}

export function readWorkerConfig(env = new EnvReader()): Readonly<WorkerConfig> {
  const backoff = env.list('WORKER_BACKOFF_MS', { default: ['1000', '5000', '15000', '30000'], doc: 'delay before each retry after a retryable failure (the last value repeats)', range: 'milliseconds, each 0..3600000' }).map(Number);
  if (backoff.some((n) => !Number.isInteger(n) || n < 0 || n > 3_600_000)) env.problem('WORKER_BACKOFF_MS', 'must be a comma list of milliseconds');
  const fault = env.optionalStr('WORKER_TEST_FAULT', { doc: 'fault tests only: exit-after-effect kills the process after a job\'s effect, before its ack', range: 'exit-after-effect' });
  if (fault && fault !== 'exit-after-effect') env.problem('WORKER_TEST_FAULT', 'may only be exit-after-effect');
  return env.done({
    ...readBase(env, 'worker', defaultPort('worker', 'ops')),
    ...readNats(env),
    environment: env.oneOf('ENVIRONMENT', ['uat', 'production'] as const, { default: 'uat', doc: 'uat or production (sandbox directives obeyed only in uat)' }),
    grpc: {
      job: env.str('JOB_GRPC_ADDR', { default: defaultAddress('job'), doc: 'where to reach the job service (host:port)' }),
      submission: env.str('SUBMISSION_GRPC_ADDR', { default: defaultAddress('submission'), doc: 'where to reach the submission service (host:port)' }),
      policy: env.str('POLICY_GRPC_ADDR', { default: defaultAddress('policy'), doc: 'where to reach the policy service (host:port)' }),
      events: env.str('EVENTS_GRPC_ADDR', { default: defaultAddress('events'), doc: 'where to reach the events service (host:port)' }),
    },
    grpcTimeoutMs: env.int('GRPC_TIMEOUT_MS', { default: 5_000, min: 50, max: 60_000, doc: 'default gRPC deadline (capped by the request\'s remaining budget)' }),
    grpcCallStreams: env.bool('GRPC_CALL_STREAMS', { default: true, doc: 'carry the hot calls (SubmitJob, SettleJob, ClaimJobs, CreateSubmission and the reads GetJob, ListPolicies, GetPolicy, ListEvents, GetEvent) as messages on long-lived gRPC streams per peer instead of one unary call each (same deadlines, errors and traces); false: plain unary calls' }),
    concurrency: env.int('WORKER_CONCURRENCY', { default: 64, min: 1, max: 1_000, doc: 'jobs processed at once per worker process (each waits on gRPC calls, so more at once share the services\' batched statements)' }),
    ackWaitMs: env.int('WORKER_ACK_WAIT_MS', { default: 30_000, min: 500, max: 600_000, doc: 'JetStream redelivers a job not acknowledged (nor kept alive) within this: redelivery after a worker vanishes' }),
    maxDeliveries: env.int('WORKER_MAX_DELIVERIES', { default: 5, min: 1, max: 100, doc: 'attempts before a job failing on infrastructure errors fails with a retryable internal error' }),
    backoffMs: backoff,
    streamReplicas: env.int('JOBS_STREAM_REPLICAS', { default: 1, min: 1, max: 5, doc: 'replicas of the JetStream jobs stream (1 in development, 3 in production clusters)' }),
    runningAfterMs: env.int('WORKER_RUNNING_AFTER_MS', { default: 100, min: 0, max: 60_000, doc: 'with WORKER_CLAIM=false only (the bench\'s baseline): a job\'s first delivery is marked running once the worker has spent this long on it (0: at once); with the claim, every job is running from its claim' }),
    claim: env.bool('WORKER_CLAIM', { default: true, doc: 'claim every job (accepted -> running) before its effect, so a cancel and a worker never both win; false is for the bench only (measures the claim\'s cost; a cancelled job may then run)' }),
    productCacheMs: env.int('WORKER_PRODUCT_CACHE_MS', { default: 30_000, min: 0, max: 3_600_000, doc: 'how long a product lookup is cached (unknown products: a fifth of it)' }),
    livenessAfterMs: env.int('WORKER_LIVENESS_AFTER_MS', { default: 60_000, min: 1_000, max: 3_600_000, doc: '/livez fails once the JetStream consume loop has been down (and could not be restarted) this long' }),
    testFault: fault as 'exit-after-effect' | undefined,
    testClockAdvanceBatch: env.int('TEST_CLOCK_ADVANCE_BATCH', { default: 500, min: 1, max: 5_000, doc: 'UAT test clocks: due transitions an advance applies per transaction (its progress is recorded per batch)' }),
  });
}
