// Jobs test_clock.create, test_clock.advance, test_clock.delete (API.md "Test clocks", UAT only;
// issue 44). Each is keyed by its job id in the policy service: a redelivered create makes no second
// clock, a redelivered delete answers the clock it deleted, and an advance is a loop of one-batch
// calls whose progress the service records per job, so a worker killed mid-advance resumes where the
// last committed batch ended, applying nothing twice. The advance's job succeeds only after its last
// batch (the clock's new time) committed.
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { testClockRecordOf } from '@partner/shared/domain/test-clocks';
import { DomainError } from '@partner/shared/domain/errors';
import { failOnRefusal, JobFailed, jobScope, type Handler, type HandlerContext } from './handler-contract.js';

interface CreatePayload {
  frozenTime: string;
  name?: string;
}

interface ClockPayload {
  testClockId: string;
  frozenTime?: string;
}


const createClock: Handler = async (job, payload, ctx) => {
  const p = payload as CreatePayload;
  const { testClock } = await ctx.clients.policy
    .CreateTestClock({ ...jobScope(job), frozenTime: p.frozenTime, ...(p.name !== undefined ? { name: p.name } : {}) })
    .catch(failOnRefusal);
  return testClockRecordOf(testClock!);
};

const advanceClock: Handler = async (job, payload, ctx) => {
  const p = payload as ClockPayload;
  for (;;) {
    const step = await ctx.clients.policy
      .AdvanceTestClock({ ...jobScope(job), testClockId: p.testClockId, frozenTime: p.frozenTime ?? '', batchSize: ctx.advanceBatch ?? 0 })
      .catch(failOnRefusal);
    if (step.done) {
      return {
        ...testClockRecordOf(step.testClock!),
        // What the advance moved (a referral past its dueBy is reported here as overdue).
        applied: {
          quotesExpired: step.quotesExpired,
          policiesActivated: step.policiesActivated,
          policiesExpired: step.policiesExpired,
          referralsOverdue: step.referralsOverdue,
        },
      };
    }
  }
};

const deleteClock: Handler = async (job, payload, ctx) => {
  const p = payload as ClockPayload;
  const { testClock } = await ctx.clients.policy.DeleteTestClock({ ...jobScope(job), testClockId: p.testClockId }).catch(failOnRefusal);
  return { testClockId: testClock!.testClockId, deleted: true };
};

export const clockHandlers: Record<string, Handler> = {
  [JOB_KINDS.testClockCreate]: createClock,
  [JOB_KINDS.testClockAdvance]: advanceClock,
  [JOB_KINDS.testClockDelete]: deleteClock,
};

/**
 * The time a record on a test clock reads (quote.create's validUntil and dueBy, a decision's new
 * validUntil): its clock's frozenTime, '' on the wall clock. While the clock advances the job fails
 * 409 clock_advancing (retryable); a clock gone (deleted) fails it 422 unknown_test_clock.
 */
export async function clockTimeOf(ctx: HandlerContext, owner: { tenantId: string; partnerId: string }, testClockId: string | null | undefined): Promise<string> {
  if (!testClockId) return '';
  const { testClock } = await ctx.clients.policy.GetTestClock({ owner, testClockId }).catch((err: unknown) => {
    if (err instanceof DomainError && err.code === 'not_found') {
      throw new JobFailed({ code: 'unknown_test_clock', message: `the submission's test clock ${testClockId} no longer exists`, retryable: false });
    }
    throw err;
  });
  if (testClock!.status === 'advancing') {
    throw new JobFailed({ code: 'clock_advancing', message: `test clock ${testClockId} is advancing; retry once its advance has settled`, retryable: true });
  }
  return testClock!.frozenTime;
}
