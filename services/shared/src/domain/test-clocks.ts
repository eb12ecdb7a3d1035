// Test clocks as the API shows them (API.md "Test clocks", UAT only; issue 44): GET /v1/test_clocks/{id},
// the list, and the results of the test_clock.* jobs, from the policy service's gRPC message.
import type { TestClock__Output } from '../generated/partner/policy/v1/TestClock.js';

export interface TestClockRecord {
  testClockId: string;
  name: string | null;
  frozenTime: string;
  status: 'ready' | 'advancing';
  createdAt: string;
  updatedAt: string;
}

export function testClockRecordOf(c: TestClock__Output): TestClockRecord {
  return {
    testClockId: c.testClockId,
    name: c.name ?? null,
    frozenTime: c.frozenTime,
    status: c.status === 'advancing' ? 'advancing' : 'ready',
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}

/** The shape of a test clock id: "clk_" and 24 lower-case letters or digits. */
export const TEST_CLOCK_ID = /^clk_[0-9a-z]{24}$/;
