// One connection for every resource client, as temporal's client splits its `connection` from its
// workflow and schedule clients: the transport (transport.ts: one request with its token, time limits
// and retries), the jobs every mutation is carried out as (jobs.ts), and the mutation pattern
// (mutations.ts). A resource's client (submissions.ts, policies.ts, …) takes the connection whole.
import { Jobs } from './jobs.js';
import { Mutations } from './mutations.js';
import type { PartnerClientOptions } from './options.js';
import { Transport } from './transport.js';

export interface Connection {
  readonly transport: Transport;
  /** Reading and following jobs; also `client.jobs`. */
  readonly jobs: Jobs;
  /** A fresh Idempotency-Key and Prefer: wait on every mutation, its job followed to the end. */
  readonly mutations: Mutations;
}

export function connect(opts: PartnerClientOptions): Connection {
  const transport = new Transport(opts);
  const jobs = new Jobs(transport, opts.pollWaitSeconds ?? 0);
  return { transport, jobs, mutations: new Mutations(transport, jobs, opts.wait ?? 15) };
}
