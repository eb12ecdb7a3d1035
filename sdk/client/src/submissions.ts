// Submissions (/v1/submissions): creating one is a job (mutations.ts); reading and listing them.
import type { SubmissionListParams } from './list-types.js';
import type { MutationOutcome, Mutations } from './mutations.js';
import type { CallOptions, MutationOptions } from './options.js';
import { paginate, seg, type Transport, type WithResponse } from './transport.js';
import type { Page, Submission, SubmissionCreate, SubmissionResult } from './types.js';
import { withdraw, type SubmissionWithdraw } from './clearance.js';

export class Submissions {
  constructor(
    private readonly transport: Transport,
    private readonly mutations: Mutations,
  ) {}

  async create(input: SubmissionCreate, opts: MutationOptions): Promise<WithResponse<SubmissionResult>> {
    return this.mutations.mutate<SubmissionResult>(() => ({ method: 'POST', path: '/v1/submissions', json: input }), opts);
  }

  start(input: SubmissionCreate, opts: Omit<MutationOptions, 'timeoutMs' | 'onPoll'>): Promise<MutationOutcome<SubmissionResult>> {
    return this.mutations.start<SubmissionResult>({ method: 'POST', path: '/v1/submissions', json: input }, opts);
  }

  withdraw(submissionId: string, input: SubmissionWithdraw, opts: MutationOptions): Promise<WithResponse<Submission>> {
    return withdraw(this.mutations, submissionId, input, opts);
  }

  async get(submissionId: string, opts: CallOptions): Promise<WithResponse<Submission>> {
    return (await this.transport.request<Submission>({ method: 'GET', path: `/v1/submissions/${seg(submissionId)}`, ...opts })).body;
  }

  async list(params: SubmissionListParams, opts: CallOptions): Promise<Page<Submission>> {
    return (await this.transport.request<Page<Submission>>({ method: 'GET', path: '/v1/submissions', query: { ...params }, ...opts })).body;
  }

  iterate(params: Omit<SubmissionListParams, 'cursor'>, opts: CallOptions): AsyncGenerator<Submission> {
    return paginate(params, (p) => this.list(p, opts));
  }
}
