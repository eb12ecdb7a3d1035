// The API's submission record (GET /v1/submissions/{id}, the submission list, and the result of a
// submission.withdraw job): one mapping from the gRPC Submission for the gateway and the worker.
import { applicantFromMessage } from './applicant.js';
import { clearanceFromMessage, withdrawalFieldFromMessage } from './clearance.js';
import type { Submission__Output } from '../generated/partner/submission/v1/Submission.js';

export function submissionRecord(s: Submission__Output): Record<string, unknown> {
  return {
    submissionId: s.submissionId,
    submissionName: s.submissionName,
    status: s.status,
    externalRef: s.externalRef,
    submissionType: s.submissionType,
    effectiveDate: s.effectiveDate,
    productId: s.productId,
    applicant: applicantFromMessage(s.applicant),
    principalId: s.principalId || null,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    requirements: { version: Number(s.requirements?.version ?? 0), currentlyDue: s.requirements?.currentlyDue ?? [] },
    clearance: clearanceFromMessage(s.clearance),
    ...withdrawalFieldFromMessage(s.withdrawal),
    // The test clock it lives on (UAT, issue 44), only when it has one.
    ...(s.testClockId ? { testClockId: s.testClockId } : {}),
    risk: s.riskJson ? (JSON.parse(s.riskJson) as Record<string, unknown>) : null,
  };
}
