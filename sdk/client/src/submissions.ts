// Submissions (client.submissions, /v1/submissions): creating one and withdrawing it are jobs
// (mutations.ts); reading and listing them; the dry run of a create (POST /v1/submissions/validate).
// The types are generated from the OpenAPI document (wire-types.ts); clearance's are in clearance.ts.
import type { Connection } from './connection.js';
import type { MutationOutcome } from './mutations.js';
import type { CallOptions, MutationOptions } from './options.js';
import { paginate, seg, type WithResponse } from './transport.js';
import type { Page } from './types.js';
import type { ListSubmissionsQuery, Submission, SubmissionCreate, SubmissionResult, SubmissionWithdraw, ValidationResult } from './wire-types.js';

export type { Address, Applicant, Submission, SubmissionCreate, SubmissionResult, ValidationResult } from './wire-types.js';

/** GET /v1/submissions's filters (`externalRef` finds a submission whose job handle was lost). */
export type SubmissionListParams = ListSubmissionsQuery;

/** One field a create would refuse, as POST /v1/submissions/validate lists it. */
export type ValidationError = ValidationResult['errors'][number];

export class Submissions {
  constructor(private readonly connection: Connection) {}

  /** POST /v1/submissions, the whole pattern: resolves with the result once the job has succeeded. */
  async create(input: SubmissionCreate, opts: MutationOptions = {}): Promise<WithResponse<SubmissionResult>> {
    return this.connection.mutations.mutate<SubmissionResult>(() => ({ method: 'POST', path: '/v1/submissions', json: input }), opts);
  }

  /** POST /v1/submissions without polling: the result if it settled within the wait, else the job handle. */
  start(input: SubmissionCreate, opts: Omit<MutationOptions, 'timeoutMs' | 'onPoll'> = {}): Promise<MutationOutcome<SubmissionResult>> {
    return this.connection.mutations.start<SubmissionResult>({ method: 'POST', path: '/v1/submissions', json: input }, opts);
  }

  /** POST /v1/submissions/{id}/withdraw: resolves with the withdrawn submission once the job has succeeded (409 not_withdrawable when it was withdrawn already). */
  withdraw(submissionId: string, input: SubmissionWithdraw, opts: MutationOptions = {}): Promise<WithResponse<Submission>> {
    return this.connection.mutations.mutate<Submission>(() => ({ method: 'POST', path: `/v1/submissions/${seg(submissionId)}/withdraw`, json: input }), opts);
  }

  /** POST /v1/submissions/validate: every rule a create applies, answered at once; creates nothing. */
  async validate(body: SubmissionCreate | Record<string, unknown>, opts: CallOptions = {}): Promise<WithResponse<ValidationResult>> {
    return (await this.connection.transport.request<ValidationResult>({ method: 'POST', path: '/v1/submissions/validate', json: body, ...opts })).body;
  }

  /** GET /v1/submissions/{id}. */
  async get(submissionId: string, opts: CallOptions = {}): Promise<WithResponse<Submission>> {
    return (await this.connection.transport.request<Submission>({ method: 'GET', path: `/v1/submissions/${seg(submissionId)}`, ...opts })).body;
  }

  /** GET /v1/submissions: one page of the partner's submissions, newest first. */
  async list(params: SubmissionListParams = {}, opts: CallOptions = {}): Promise<Page<Submission>> {
    return (await this.connection.transport.request<Page<Submission>>({ method: 'GET', path: '/v1/submissions', query: { ...params }, ...opts })).body;
  }

  /** Every submission matching the filters, page after page (e.g. { externalRef } to find a lost one). */
  iterate(params: Omit<SubmissionListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<Submission> {
    return paginate(params, (p) => this.list(p, opts));
  }
}
