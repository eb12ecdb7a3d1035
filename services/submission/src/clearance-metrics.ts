// Clearance metrics: decisions by status and basis (at intake, and releases after a withdrawal), and
// how long the oldest `review` submission has waited for a person (the PartnerClearanceReviewWaiting
// alert, docs/operations.md).
import { Counter, type Registry } from 'prom-client';
import type { Pool } from '@partner/shared/db/pg';
import { scrapedGauges } from '@partner/shared/telemetry/gauges';
import { oldestReviewAgeSeconds } from './clearance.js';
import type { SubmissionRow } from './submission-row.js';

export interface ClearanceMetrics {
  /** A submission was created with its clearance. */
  decided(row: Pick<SubmissionRow, 'clearance_status' | 'clearance_basis'>): void;
  /** A blocked submission became cleared when the one holding its risk was withdrawn. */
  released(row: Pick<SubmissionRow, 'clearance_status' | 'clearance_basis'>): void;
}

export function clearanceMetrics(registry: Registry, pool: Pool): ClearanceMetrics {
  // Labels are the decision's own status and basis only: never anything about a partner or a submission.
  const decisions = new Counter({
    name: 'partner_clearance_decisions_total',
    help: 'Clearance decisions, by status (cleared, duplicate, blocked, review) and basis (tax_id, name_address, name_only; none when cleared); releases after a withdrawal count as cleared.',
    labelNames: ['status', 'basis'],
    registers: [registry],
  });
  for (const status of ['cleared', 'duplicate', 'blocked', 'review']) {
    for (const basis of status === 'cleared' ? ['none'] : ['tax_id', 'name_address', 'name_only']) {
      if (status === 'blocked' && basis === 'name_only') continue;
      if (status === 'review' && basis !== 'name_only') continue;
      decisions.inc({ status, basis }, 0);
    }
  }
  scrapedGauges(registry, () => oldestReviewAgeSeconds(pool), [
    {
      name: 'partner_clearance_review_oldest_age_seconds',
      help: 'Seconds the oldest live submission in clearance review has waited for an operator (0 when none waits).',
      value: (age) => age,
    },
  ]);
  const count = (r: Pick<SubmissionRow, 'clearance_status' | 'clearance_basis'>) => decisions.inc({ status: r.clearance_status, basis: r.clearance_basis ?? 'none' });
  return { decided: count, released: count };
}
