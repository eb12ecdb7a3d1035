// Applies the transitions dueTransitions (transitions.ts) computed, in the order given (time order),
// each a conditional UPDATE from the status it was read in (a racing bind, a second sweeper replica or
// a resumed advance changes nothing twice) with its event in the caller's transaction: policy.updated
// (active / expired), quote.updated (expired); a referral past its dueBy is marked overdue once
// (referral_overdue_at, policy 0007). The wall-clock sweeper (sweeper.ts) and a test clock's advance
// (clocks/advance.ts) both apply through here.
import { prepared, type PoolClient } from '@partner/shared/db/pg';
import { iso } from '@partner/shared/domain/ids';
import { recordEvent, type RecordedEvent } from '@partner/shared/nats/event-outbox';
import type { natsNames } from '@partner/shared/nats/client';
import { setQuoteStatus } from '../quotes/repository.js';
import { COLUMNS, type PolicyRow } from '../policies.js';
import { policyRecord } from './documents.js';
import type { Transition } from './transitions.js';

type Names = ReturnType<typeof natsNames>;

export interface Applied {
  activated: number;
  expired: number;
  quotesExpired: number;
  referralsOverdue: number;
  events: RecordedEvent[];
}

export async function applyTransitions(tx: PoolClient, names: Names, due: readonly Transition[]): Promise<Applied> {
  const out: Applied = { activated: 0, expired: 0, quotesExpired: 0, referralsOverdue: 0, events: [] };
  for (let i = 0; i < due.length; i++) {
    const t = due[i]!;
    if (t.kind === 'quote') {
      // A run of consecutive quote expiries is one UPDATE; their events keep the run's (time) order.
      let j = i;
      while (j + 1 < due.length && due[j + 1]!.kind === 'quote') j++;
      const run = due.slice(i, j + 1).map((x) => x.id);
      i = j;
      const r = await setQuoteStatus(tx, names, run, 'expired', ['open'], { eventOrder: run });
      out.quotesExpired += r.rows.length;
      out.events.push(...r.events);
      continue;
    }
    if (t.kind === 'referral') {
      const r = await tx.query(
        prepared(`UPDATE quotes SET referral_overdue_at = $2 WHERE quote_id = $1 AND status = 'referred' AND referral_overdue_at IS NULL`, [t.id, t.at]),
      );
      out.referralsOverdue += r.rowCount ?? 0;
      continue;
    }
    const row = (
      await tx.query<PolicyRow & { tenant_id: string; partner_id: string }>(
        prepared(`UPDATE policies SET status = $2, updated_at = date_trunc('milliseconds', now()) WHERE policy_id = $1 AND status = $3 RETURNING ${COLUMNS}, tenant_id, partner_id`, [
          t.id,
          t.to,
          t.from,
        ]),
      )
    ).rows[0];
    if (!row) continue;
    if (t.to === 'active') out.activated++;
    else out.expired++;
    out.events.push(await recordEvent(tx, names, { tenantId: row.tenant_id, partnerId: row.partner_id }, 'policy.updated', iso(row.updated_at), policyRecord(row)));
  }
  return out;
}
