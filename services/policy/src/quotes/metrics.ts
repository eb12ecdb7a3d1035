// Referral metrics, read from the quotes table at scrape time (operators decide with the admin
// command, partners in UAT with a job: the table is the one place that sees every decision):
// referrals waiting, the oldest one's age, how many are past their dueBy (the
// PartnerQuoteReferralOverdue alert, docs/operations.md "Deciding referrals"), and decisions by outcome.
import { Gauge, type Registry } from 'prom-client';
import type { Pool } from '@partner/shared/db/pg';
import { scrapedGauge, scrapeSource } from '@partner/shared/telemetry/gauges';

interface ReferralCounts {
  waiting: number;
  oldestAgeSeconds: number;
  overdue: number;
  approved: number;
  declined: number;
}

export async function referralCounts(pool: Pool): Promise<ReferralCounts> {
  const { rows } = await pool.query<{ waiting: string; oldest: number | null; overdue: string; approved: string; declined: string }>(
    `SELECT count(*) FILTER (WHERE status = 'referred') AS waiting,
            extract(epoch FROM now() - min(created_at) FILTER (WHERE status = 'referred'))::float8 AS oldest,
            count(*) FILTER (WHERE status = 'referred' AND referral_due_by < now()) AS overdue,
            count(*) FILTER (WHERE decision_outcome = 'approved') AS approved,
            count(*) FILTER (WHERE decision_outcome = 'declined') AS declined
       FROM quotes
      WHERE status = 'referred' OR decision_outcome IS NOT NULL`,
  );
  const r = rows[0]!;
  return {
    waiting: Number(r.waiting),
    oldestAgeSeconds: Math.max(0, r.oldest ?? 0),
    overdue: Number(r.overdue),
    approved: Number(r.approved),
    declined: Number(r.declined),
  };
}

export function referralMetrics(registry: Registry, pool: Pool): void {
  const source = scrapeSource(registry, 'partner_quote_referrals_waiting', () => referralCounts(pool));
  scrapedGauge(registry, source, { name: 'partner_quote_referrals_waiting', help: 'Referred quotes waiting on an underwriter.', value: (r) => r.waiting });
  scrapedGauge(registry, source, {
    name: 'partner_quote_referral_oldest_age_seconds',
    help: 'Seconds the oldest referred quote has waited on an underwriter (0 when none waits).',
    value: (r) => r.oldestAgeSeconds,
  });
  scrapedGauge(registry, source, {
    name: 'partner_quote_referrals_overdue',
    help: 'Referred quotes past their dueBy (the PartnerQuoteReferralOverdue alert).',
    value: (r) => r.overdue,
  });
  new Gauge({
    name: 'partner_quote_referral_decisions',
    help: 'Referral decisions recorded (operators and the UAT test helper), by outcome (approved, declined): a count of the decided quotes.',
    labelNames: ['outcome'],
    registers: [registry],
    async collect() {
      const read = await source();
      this.set({ outcome: 'approved' }, read === undefined ? Number.NaN : read.approved);
      this.set({ outcome: 'declined' }, read === undefined ? Number.NaN : read.declined);
    },
  });
}
