// Test clocks (client.testClocks; UAT only, docs/api.md "Test clocks"): create, get, list, iterate,
// advance and delete. Create, advance and delete are jobs (mutations.ts): each resolves once its job
// has succeeded (an advance: after every transition due has committed, so the records read in their
// new state) and rejects with the job's error (e.g. `limit_exceeded`, `clock_advancing`, which is
// retryable). The types are generated from the OpenAPI document (wire-types.ts).
import type { Connection } from './connection.js';
import type { CallOptions, MutationOptions } from './options.js';
import { paginate, seg, type WithResponse } from './transport.js';
import type { Page } from './types.js';
import type { ListTestClocksQuery, TestClock, TestClockAdvanced, TestClockCreate, TestClockDeleted } from './wire-types.js';

export type { TestClock, TestClockAdvance, TestClockAdvanced, TestClockCreate, TestClockDeleted } from './wire-types.js';

/** GET /v1/test_clocks's parameters. */
export type TestClockListParams = ListTestClocksQuery;

export class TestClocks {
  constructor(private readonly connection: Connection) {}

  /** POST /v1/test_clocks: a clock stopped at `frozenTime` (RFC 3339 with a zone); at most 10 live per partner. */
  create(input: TestClockCreate, opts: MutationOptions = {}): Promise<WithResponse<TestClock>> {
    return this.connection.mutations.mutate<TestClock>(() => ({ method: 'POST', path: '/v1/test_clocks', json: input }), opts);
  }

  /** GET /v1/test_clocks/{id}. */
  async get(testClockId: string, opts: CallOptions = {}): Promise<WithResponse<TestClock>> {
    return (await this.connection.transport.request<TestClock>({ method: 'GET', path: `/v1/test_clocks/${seg(testClockId)}`, ...opts })).body;
  }

  /** GET /v1/test_clocks: one page of the partner's live clocks, newest first. */
  async list(params: TestClockListParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<TestClock>>> {
    return (await this.connection.transport.request<Page<TestClock>>({ method: 'GET', path: '/v1/test_clocks', query: { ...params }, ...opts })).body;
  }

  /** Every live clock, page after page. */
  iterate(params: Omit<TestClockListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<TestClock> {
    return paginate(params, (p) => this.list(p, opts));
  }

  /**
   * POST /v1/test_clocks/{id}/advance: moves the clock forward to `frozenTime` (later than its time, at
   * most two years ahead). Resolves with the clock at its new time and what moved (`applied`).
   */
  advance(testClockId: string, frozenTime: string | Date, opts: MutationOptions = {}): Promise<WithResponse<TestClockAdvanced>> {
    const at = typeof frozenTime === 'string' ? frozenTime : frozenTime.toISOString();
    return this.connection.mutations.mutate<TestClockAdvanced>(() => ({ method: 'POST', path: `/v1/test_clocks/${seg(testClockId)}/advance`, json: { frozenTime: at } }), opts);
  }

  /** DELETE /v1/test_clocks/{id}: its records keep their state and stop moving. */
  delete(testClockId: string, opts: MutationOptions = {}): Promise<WithResponse<TestClockDeleted>> {
    return this.connection.mutations.mutate<TestClockDeleted>(() => ({ method: 'DELETE', path: `/v1/test_clocks/${seg(testClockId)}` }), opts);
  }
}
