// The contract between the consumer and the job handlers: a handler returns the job's result,
// throws JobFailed for an outcome the job must settle with, and lets anything else propagate (the
// message is then delivered again later).
import type { PromiseClient, serviceDefs } from '@partner/shared/grpc';
import type { Job__Output } from '@partner/shared/proto-types';
import type { ProductLookup } from './products.js';
import { DomainError } from '@partner/shared/errors';

type Defs = ReturnType<typeof serviceDefs>;

export class JobFailed extends Error {
  constructor(readonly error: { code: string; message: string; retryable: boolean }) {
    super(error.message);
  }
}

export interface HandlerContext {
  clients: { submission: PromiseClient<Defs['submission']>; policy: PromiseClient<Defs['policy']> };
  /** The product catalogue, cached (see products.ts). */
  product: ProductLookup;
  /** Sandbox directives in externalRef are honoured (UAT only). */
  sandbox: boolean;
  /** Resolves after ms, or rejects when the worker is stopping. */
  sleep(ms: number): Promise<void>;
}

export type Handler = (job: Job__Output, payload: unknown, ctx: HandlerContext) => Promise<unknown>;

/**
 * For a call to another service: a refusal that retrying cannot change (not retryable) settles the
 * job as failed with it; anything retryable propagates, so the job is delivered again.
 */
export function failOnRefusal(err: unknown): never {
  if (err instanceof DomainError && !err.retryable) {
    throw new JobFailed({ code: err.code, message: err.message, retryable: false });
  }
  throw err;
}

/** The owner a job acts for, as the services' requests name it. */
export function ownerOf(job: Job__Output): { tenantId: string; partnerId: string } {
  return { tenantId: job.caller!.tenantId, partnerId: job.caller!.partnerId };
}
