// Clearance in the submission service (docs/api.md "Clearance"): the decision at intake, made in the
// transaction that creates the submissions; withdrawal and the release of a held risk; operators'
// decisions. Every path that reads which submissions hold a risk first takes that risk's
// transaction-scoped advisory locks (sorted, so batches never deadlock), then reads in a later
// statement, which under READ COMMITTED sees everything the locks' previous holders committed:
// never a read-then-write without the lock.
import type { PoolClient } from '@partner/shared/db/pg';
import { prepared, withTx, sqlIso, type Pool } from '@partner/shared/db/pg';
import { DomainError, notFound } from '@partner/shared/domain/errors';
import { newEventId } from '@partner/shared/domain/events';
import { outboxInsertSql, type RecordedEvent } from '@partner/shared/nats/event-outbox';
import type { natsNames } from '@partner/shared/nats/client';
import {
  clearanceChangeLock,
  daysBetween,
  strongestBasis,
  PROBE_WINDOW_DAYS,
  SAME_RISK_DAYS,
  sameRiskIdentity,
  riskKeyOf,
  sameRisk,
  sortedRiskLocks,
  type ClearanceBasis,
  type ClearanceReason,
  type ClearanceStatus,
  type RiskKey,
  type WithdrawalReason,
} from '@partner/shared/domain/clearance';
import type { Applicant } from '@partner/shared/domain/applicant';
import { SUBMISSION_COLUMNS, SUBMISSION_DATA_SQL, type SubmissionRow } from './submission-row.js';

type Queryable = Pick<PoolClient, 'query'>;
type Names = ReturnType<typeof natsNames>;

/** The clearance columns of a new submission (step 3 of createSubmissions inserts them). */
export interface ClearanceColumns {
  riskName: string;
  riskTaxId: string | null;
  riskCountry: string | null;
  riskPostalCode: string | null;
  clearanceStatus: ClearanceStatus;
  clearanceBasis: ClearanceBasis | null;
  clearanceDuplicateOf: string | null;
  /** Operators only: why (null = on the matches alone). */
  clearanceReason: ClearanceReason | null;
}

/** A live submission of a risk, as the decision compares it. */
interface Holder {
  submissionId: string;
  partnerId: string;
  clearanceStatus: ClearanceStatus;
  key: RiskKey;
}

const NOW_MS = `date_trunc('milliseconds', clock_timestamp())`;

/** Serializes changes to existing submissions' clearance in the key's tenant and product (clearanceChangeLock). */
async function lockClearanceChanges(tx: Queryable, key: RiskKey): Promise<void> {
  await tx.query(prepared('SELECT pg_advisory_xact_lock($1::bigint)', [String(clearanceChangeLock(key.tenantId, key.productId))]));
}

/** Takes the locks of these keys, in ascending order (one statement). */
const RISK_LOCKS = (array: string) => `SELECT pg_advisory_xact_lock(l.k) FROM unnest(${array}) WITH ORDINALITY AS l(k, n) ORDER BY l.n`;

export async function lockRisks(tx: Queryable, keys: RiskKey[]): Promise<void> {
  if (keys.length === 0) return;
  await tx.query(prepared(RISK_LOCKS('$1::bigint[]'), [sortedRiskLocks(keys)]));
}

/**
 * lockRisks as a statement without parameters (the keys are numbers), for withTx's `lead`: the
 * transaction's first round trip takes the locks with its BEGIN.
 */
export function riskLocksSql(keys: RiskKey[]): string[] {
  if (keys.length === 0) return [];
  return [RISK_LOCKS(`'{${sortedRiskLocks(keys).map((k) => BigInt(k).toString()).join(',')}}'::bigint[]`)];
}

// The live submissions sharing a FEIN or a normalized name with any of the keys, within the tenant,
// the product and ±60 days (sameRisk then decides each pair), earliest first.
const HOLDERS = `WITH k AS (
     SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::date[]) AS k(tenant_id, product_id, tax_id, name, d)
   ), m AS (
     SELECT s.submission_id FROM k JOIN submissions s
         ON s.tenant_id = k.tenant_id AND s.product_id = k.product_id AND s.risk_tax_id = k.tax_id
        AND s.effective_date BETWEEN k.d - 60 AND k.d + 60
      WHERE s.status <> 'withdrawn' AND s.risk_tax_id IS NOT NULL
     UNION
     SELECT s.submission_id FROM k JOIN submissions s
         ON s.tenant_id = k.tenant_id AND s.product_id = k.product_id AND s.risk_name = k.name
        AND s.effective_date BETWEEN k.d - 60 AND k.d + 60
      WHERE s.status <> 'withdrawn' AND s.risk_name IS NOT NULL
   )
   SELECT s.submission_id, s.partner_id, s.tenant_id, s.product_id::text AS product_id, s.risk_tax_id, s.risk_name,
          s.risk_country, s.risk_postal_code, s.effective_date::text AS effective_date, s.clearance_status
     FROM m JOIN submissions s USING (submission_id)
    ORDER BY s.created_at, s.submission_id`;

interface HolderRow {
  submission_id: string;
  partner_id: string;
  tenant_id: string;
  product_id: string;
  risk_tax_id: string | null;
  risk_name: string;
  risk_country: string | null;
  risk_postal_code: string | null;
  effective_date: string;
  clearance_status: ClearanceStatus;
}

const keyOfRow = (r: Omit<HolderRow, 'submission_id' | 'partner_id' | 'clearance_status'>): RiskKey => ({
  tenantId: r.tenant_id,
  productId: r.product_id,
  ...(r.risk_tax_id ? { taxId: r.risk_tax_id } : {}),
  name: r.risk_name,
  ...(r.risk_country ? { country: r.risk_country, postalCode: r.risk_postal_code ?? '' } : {}),
  effectiveDate: r.effective_date,
});

/** Live submissions that may be the same risk as any of the keys (read after their locks), earliest first. */
async function readHolders(tx: Queryable, keys: RiskKey[]): Promise<Holder[]> {
  const { rows } = await tx.query<HolderRow>(
    prepared(HOLDERS, [
      keys.map((k) => k.tenantId),
      keys.map((k) => k.productId),
      keys.map((k) => k.taxId ?? null),
      keys.map((k) => k.name),
      keys.map((k) => k.effectiveDate),
    ]),
  );
  return rows.map((r) => ({ submissionId: r.submission_id, partnerId: r.partner_id, clearanceStatus: r.clearance_status, key: keyOfRow(r) }));
}

/**
 * The clearance of a new submission of `partnerId` with `key`, given the live submissions before it
 * (earliest first): duplicate of the partner's own earliest match (any basis); else blocked by
 * another partner's match on tax_id or name_address; else review for another partner's name_only
 * match; else cleared.
 */
export function decide(key: RiskKey, partnerId: string, earlier: Holder[]): Pick<ClearanceColumns, 'clearanceStatus' | 'clearanceBasis' | 'clearanceDuplicateOf'> {
  let own: { id: string; basis: ClearanceBasis } | undefined;
  let blocked: ClearanceBasis | undefined;
  let review: ClearanceBasis | undefined;
  for (const h of earlier) {
    const basis = sameRisk(key, h.key);
    if (!basis) continue;
    if (h.partnerId === partnerId) own ??= { id: h.submissionId, basis };
    else if (basis === 'name_only') review ??= basis;
    else if (blocked !== 'tax_id') blocked = basis;
  }
  if (own) return { clearanceStatus: 'duplicate', clearanceBasis: own.basis, clearanceDuplicateOf: own.id };
  if (blocked) return { clearanceStatus: 'blocked', clearanceBasis: blocked, clearanceDuplicateOf: null };
  if (review) return { clearanceStatus: 'review', clearanceBasis: review, clearanceDuplicateOf: null };
  return { clearanceStatus: 'cleared', clearanceBasis: null, clearanceDuplicateOf: null };
}

// What decides a new submission, per key (step 2 of createSubmissions), each part one index probe
// however many live submissions a risk has: the partner's own earliest live match by FEIN and by name
// (with its basis), and whether another partner has a live match by FEIN, by name and address, or by
// name alone. Parameters are per key: tenant, product, FEIN (or null), name, effective date, partner,
// country and postal code (or null).
const liveInWindow = `s.tenant_id = k.tenant_id AND s.product_id = k.product_id AND s.status <> 'withdrawn'
        AND s.effective_date BETWEEN k.d - ${SAME_RISK_DAYS} AND k.d + ${SAME_RISK_DAYS}`;
const ownBasis = `CASE WHEN s.risk_tax_id = k.tax_id THEN 'tax_id'
                       WHEN s.risk_country = k.country AND s.risk_postal_code = k.postal THEN 'name_address' ELSE 'name_only' END`;
const own = (match: string) => `SELECT s.submission_id, s.created_at, ${ownBasis} AS basis FROM submissions s
      WHERE ${liveInWindow} AND ${match} AND s.partner_id = k.partner_id ORDER BY s.created_at, s.submission_id LIMIT 1`;
// The partner's own earlier submission of the risk (any status, withdrawn too) within
// PROBE_WINDOW_DAYS: a further decision would tell it more about another partner's date.
const probedBy = (match: string, status: string) => `(SELECT 1 FROM submissions s
          WHERE s.tenant_id = k.tenant_id AND s.product_id = k.product_id AND ${match} AND s.partner_id = k.partner_id AND ${status}
            AND s.effective_date BETWEEN k.d - ${PROBE_WINDOW_DAYS} AND k.d + ${PROBE_WINDOW_DAYS} LIMIT 1)`;
// Live and withdrawn apart, so that each branch is one probe of a partial index (0006's live ones,
// 0008's withdrawn ones).
const probed = `SELECT true AS found FROM (
        ${[`s.risk_tax_id = k.tax_id`, `s.risk_name = k.name`]
          .flatMap((m) => [probedBy(m, "s.status <> 'withdrawn'"), probedBy(m, "s.status = 'withdrawn'")])
          .join('\n        UNION ALL\n        ')}) p LIMIT 1`;
// Another partner: partner_id below or above this one (two index ranges; "<>" would read every own row).
const other = (match: string) => `SELECT true AS found FROM (
        (SELECT 1 FROM submissions s WHERE ${liveInWindow} AND ${match} AND s.partner_id < k.partner_id LIMIT 1)
        UNION ALL
        (SELECT 1 FROM submissions s WHERE ${liveInWindow} AND ${match} AND s.partner_id > k.partner_id LIMIT 1)) o LIMIT 1`;
export const FACTS = `SELECT k.ord::int AS ord,
          own_tax.submission_id AS own_tax_id, own_tax.created_at AS own_tax_at, own_tax.basis AS own_tax_basis,
          own_name.submission_id AS own_name_id, own_name.created_at AS own_name_at, own_name.basis AS own_name_basis,
          coalesce(other_tax.found, false) AS other_tax, coalesce(other_address.found, false) AS other_address,
          coalesce(other_name.found, false) AS other_name, coalesce(probed.found, false) AS probed
     FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::date[], $6::text[], $7::text[], $8::text[])
            WITH ORDINALITY AS k(tenant_id, product_id, tax_id, name, d, partner_id, country, postal, ord)
     LEFT JOIN LATERAL (${own('s.risk_tax_id = k.tax_id')}) own_tax ON true
     LEFT JOIN LATERAL (${own('s.risk_name = k.name')}) own_name ON true
     LEFT JOIN LATERAL (${other('s.risk_tax_id = k.tax_id')}) other_tax ON true
     LEFT JOIN LATERAL (${other('s.risk_name = k.name AND s.risk_country = k.country AND s.risk_postal_code = k.postal')}) other_address ON true
     LEFT JOIN LATERAL (${other('s.risk_name = k.name')}) other_name ON true
     LEFT JOIN LATERAL (${probed}) probed ON true
    ORDER BY k.ord`;

export interface FactsRow {
  ord: number;
  own_tax_id: string | null;
  own_tax_at: Date | null;
  own_tax_basis: ClearanceBasis | null;
  own_name_id: string | null;
  own_name_at: Date | null;
  own_name_basis: ClearanceBasis | null;
  other_tax: boolean;
  other_address: boolean;
  other_name: boolean;
  probed: boolean;
}

/** The risk keys of the inputs of decideClearance, in input order. */
export const inputsRiskKeys = (inputs: { tenantId: string; productId: string; effectiveDate: string; applicant: Applicant }[]): RiskKey[] =>
  inputs.map((s) => riskKeyOf(s.tenantId, s.productId, s.effectiveDate, s.applicant));

/**
 * Steps 1 and 2 of createSubmissions: locks the inputs' risks (all of them, sorted), reads what decides
 * each input from the live submissions committed before (FACTS), and decides each input in input order:
 * an earlier input of the batch counts as an earlier submission for the later ones (sameRisk).
 */
export async function decideClearance(
  tx: Queryable,
  inputs: { submissionId: string; tenantId: string; partnerId: string; productId: string; effectiveDate: string; applicant: Applicant }[],
  /** The inputs' keys (inputsRiskKeys), whose locks the caller's transaction took with its BEGIN (riskLocksSql). */
  locked?: RiskKey[],
): Promise<ClearanceColumns[]> {
  const keys = locked ?? inputsRiskKeys(inputs);
  if (!locked) await lockRisks(tx, keys);
  const { rows } = await tx.query<FactsRow>(prepared(FACTS, factsParams(inputs, keys)));
  return decideFromFacts(inputs, keys, rows);
}

/** FACTS' parameters ($1–$8) for these inputs and their keys. */
export function factsParams(inputs: { partnerId: string }[], keys: RiskKey[]): unknown[] {
  return [
    keys.map((k) => k.tenantId),
    keys.map((k) => k.productId),
    keys.map((k) => k.taxId ?? null),
    keys.map((k) => k.name),
    keys.map((k) => k.effectiveDate),
    inputs.map((s) => s.partnerId),
    keys.map((k) => k.country ?? null),
    keys.map((k) => k.postalCode ?? null),
  ];
}

/** Step 2's decision from what FACTS read (its rows in input order), in input order. */
export function decideFromFacts(inputs: { submissionId: string; partnerId: string }[], keys: RiskKey[], rows: FactsRow[]): ClearanceColumns[] {
  const earlier: Holder[] = [];
  return inputs.map((s, i) => {
    const key = keys[i]!;
    const f = rows[i]!;
    // The committed submissions first (they are all earlier than this batch), then the batch's earlier inputs.
    const ownDb = [
      f.own_tax_id ? { id: f.own_tax_id, at: f.own_tax_at!.getTime(), basis: f.own_tax_basis! } : undefined,
      f.own_name_id ? { id: f.own_name_id, at: f.own_name_at!.getTime(), basis: f.own_name_basis! } : undefined,
    ].filter((x) => x !== undefined).sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1))[0];
    const fromBatch = decide(key, s.partnerId, earlier);
    // An earlier submission of this risk by this partner, committed or earlier in the batch, within
    // PROBE_WINDOW_DAYS: this one is reviewed by a person, whatever the matches.
    const probe =
      f.probed || earlier.some((h) => h.partnerId === s.partnerId && sameRiskIdentity(key, h.key) && daysBetween(key.effectiveDate, h.key.effectiveDate) <= PROBE_WINDOW_DAYS);
    let decision: Pick<ClearanceColumns, 'clearanceStatus' | 'clearanceBasis' | 'clearanceDuplicateOf' | 'clearanceReason'>;
    if (ownDb) decision = { clearanceStatus: 'duplicate', clearanceBasis: ownDb.basis, clearanceDuplicateOf: ownDb.id, clearanceReason: null };
    else if (fromBatch.clearanceStatus === 'duplicate') decision = { ...fromBatch, clearanceReason: null };
    else if (probe) decision = { clearanceStatus: 'review', clearanceBasis: strongestBasis(key), clearanceDuplicateOf: null, clearanceReason: 'repeated_submission' };
    else if (f.other_tax || (fromBatch.clearanceStatus === 'blocked' && fromBatch.clearanceBasis === 'tax_id')) {
      decision = { clearanceStatus: 'blocked', clearanceBasis: 'tax_id', clearanceDuplicateOf: null, clearanceReason: null };
    } else if (f.other_address || fromBatch.clearanceStatus === 'blocked') {
      decision = { clearanceStatus: 'blocked', clearanceBasis: 'name_address', clearanceDuplicateOf: null, clearanceReason: null };
    } else if (f.other_name || fromBatch.clearanceStatus === 'review') {
      decision = { clearanceStatus: 'review', clearanceBasis: 'name_only', clearanceDuplicateOf: null, clearanceReason: null };
    } else decision = { clearanceStatus: 'cleared', clearanceBasis: null, clearanceDuplicateOf: null, clearanceReason: null };
    earlier.push({ submissionId: s.submissionId, partnerId: s.partnerId, clearanceStatus: decision.clearanceStatus, key });
    return {
      riskName: key.name,
      riskTaxId: key.taxId ?? null,
      riskCountry: key.country ?? null,
      riskPostalCode: key.postalCode ?? null,
      ...decision,
    };
  });
}

type RiskRow = SubmissionRow &
  Omit<HolderRow, 'submission_id' | 'partner_id' | 'clearance_status' | 'effective_date' | 'product_id' | 'tenant_id'> & { clearance_reason: ClearanceReason | null };
const RISK_COLUMNS = `${SUBMISSION_COLUMNS}, risk_tax_id, risk_name, risk_country, risk_postal_code, clearance_reason`;
const riskKeyOfRow = (r: RiskRow): RiskKey | undefined =>
  r.risk_name === null ? undefined : keyOfRow({ ...r, product_id: r.product_id, tenant_id: r.tenant_id, effective_date: r.effective_date });

/**
 * One statement: sets `set` on the submission `$1` (when `where` holds), and records `eventType`
 * (data: the submission as the API shows it) for its partner. Parameters from $4 on are the caller's;
 * $2 is the event id, $3 the subject.
 */
const changeSql = (set: string, where: string, eventType: string): string => `WITH clock AS (SELECT ${NOW_MS} AS t), upd AS (
     UPDATE submissions SET ${set}, updated_at = (SELECT t FROM clock)
      WHERE submission_id = $1 AND ${where}
     RETURNING ${SUBMISSION_COLUMNS}
   ), event AS (
     ${outboxInsertSql({ source: 'upd', eventId: '$2', subject: '$3', type: `'${eventType}'`, timestampSql: sqlIso('s.updated_at'), dataSql: SUBMISSION_DATA_SQL })}
   )
   SELECT upd.*, event.id AS outbox_id, event.event_id, event.body AS event_body
     FROM upd, event`;

type Changed = SubmissionRow & { outbox_id: string; event_id: string; event_body: string };

/** The three changes of an existing submission's status or clearance, each with its event. */
const SQL: Record<'withdraw' | 'release' | 'decide' | 'bind', string> = {
  // Only a submission no bind holds (bind_job_id, taken by ReserveBind under the same locks): of a
  // bind and a withdraw, exactly one wins (bind.ts).
  withdraw: changeSql(
    `status = 'withdrawn', withdraw_job_id = $4,
     withdrawal = jsonb_build_object('reason', $5::text, 'withdrawnAt', ${sqlIso('(SELECT t FROM clock)')})
                  || CASE WHEN $6::text IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('note', $6::text) END`,
    `status = 'submitted' AND bind_job_id IS NULL`,
    'submission.withdrawn',
  ),
  // The reserved submission becomes bound by its bind job (CompleteBind), with submission.updated.
  bind: changeSql(`status = 'bound'`, `status = 'submitted' AND bind_job_id = $4`, 'submission.updated'),
  release: changeSql(
    `clearance_status = 'cleared', clearance_basis = NULL, clearance_decided_at = (SELECT t FROM clock)`,
    `status <> 'withdrawn' AND clearance_status = 'blocked'`,
    'submission.clearance_changed',
  ),
  decide: changeSql(
    `clearance_status = $4::text, clearance_basis = CASE WHEN $4::text = 'cleared' THEN NULL ELSE clearance_basis END,
     clearance_duplicate_of = NULL, clearance_decided_at = (SELECT t FROM clock),
     clearance_log = clearance_log || jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
       'status', $4::text, 'by', $5::text, 'at', ${sqlIso('(SELECT t FROM clock)')}, 'note', $6::text, 'force', $7::boolean)))`,
    `status <> 'withdrawn'`,
    'submission.clearance_changed',
  ),
};

function recorded(names: Names, type: string, r: Changed): { row: SubmissionRow; event: RecordedEvent } {
  const { outbox_id: outboxId, event_id: msgId, event_body: body, ...row } = r;
  return { row, event: { outboxId, msgId, subject: names.eventSubject(type as never), body } };
}

export async function change(tx: Queryable, names: Names, which: 'withdraw' | 'release' | 'decide' | 'bind', type: string, id: string, args: unknown[]) {
  const { rows } = await tx.query<Changed>(prepared(SQL[which]!, [id, newEventId(), names.eventSubject(type as never), ...args]));
  return rows[0] ? recorded(names, type, rows[0]) : undefined;
}

export interface WithdrawOutcome {
  row: SubmissionRow;
  /** submission.withdrawn, and submission.clearance_changed of a released submission: to publish after the commit. */
  events: RecordedEvent[];
  /** The submission that became cleared, when the withdrawn one held its risk. */
  released?: SubmissionRow;
}

/**
 * Withdraws a live submission of the owner (job submission.withdraw; idempotent by job id): under its
 * risk's locks, marks it withdrawn with submission.withdrawn; when it held its risk (cleared) and no
 * other live submission of the risk is cleared, the earliest blocked one becomes cleared with
 * submission.clearance_changed to its partner, all in one transaction.
 */
export async function withdrawSubmission(
  pool: Pool,
  names: Names,
  w: { jobId: string; owner: { tenantId: string; partnerId: string }; submissionId: string; reason: WithdrawalReason; note: string | null },
): Promise<WithdrawOutcome> {
  return withTx(pool, async (tx) => {
    const read = async (where: string, values: unknown[]) => (await tx.query<RiskRow>(prepared(`SELECT ${RISK_COLUMNS} FROM submissions WHERE ${where}`, values))).rows[0];
    const done = await read('withdraw_job_id = $1', [w.jobId]);
    if (done) return { row: done, events: [] };
    const row = await read('submission_id = $1 AND tenant_id = $2 AND partner_id = $3', [w.submissionId, w.owner.tenantId, w.owner.partnerId]);
    if (!row) throw notFound('submission');
    const key = riskKeyOfRow(row);
    // Step 1: the tenant and product's clearance-change lock (a release looks beyond this risk), then
    // the risk's locks (the same a create of this risk takes).
    if (key) {
      await lockClearanceChanges(tx, key);
      await lockRisks(tx, [key]);
    }
    const withdrawn = await change(tx, names, 'withdraw', 'submission.withdrawn', row.submission_id, [w.jobId, w.reason, w.note]);
    if (!withdrawn) {
      // Withdrawn already: by this job (a concurrent delivery) or by another.
      const again = await read('withdraw_job_id = $1', [w.jobId]);
      if (again) return { row: again, events: [] };
      const now = await read('submission_id = $1', [row.submission_id]);
      if (now?.status === 'withdrawn') throw new DomainError('not_withdrawable', 'the submission is withdrawn already', { retryable: false });
      throw new DomainError('not_withdrawable', 'the submission is bound (or a bind of one of its quotes is issuing its policy)', {
        retryable: false,
        details: [{ field: 'status', issue: now?.status === 'bound' ? 'bound' : 'binding' }],
      });
    }
    const events = [withdrawn.event];
    let released: SubmissionRow | undefined;
    // Whether it held the risk as of now, under the locks (a release or an operator may have changed it since the read above).
    if (key && withdrawn.row.clearance_status === 'cleared') {
      // Step 2, after the locks and the withdrawal: the risk's live submissions without it.
      const live = await readHolders(tx, [key]);
      const ofRisk = live.filter((h) => sameRisk(key, h.key) !== undefined);
      const next = ofRisk.find((h) => h.clearanceStatus === 'blocked');
      if (next && !ofRisk.some((h) => h.clearanceStatus === 'cleared')) {
        // Anything the next one matches that still holds it keeps it blocked (an operator's forced clear).
        const itsRisk = (await readHolders(tx, [next.key])).filter((h) => h.submissionId !== next.submissionId && sameRisk(next.key, h.key) !== undefined);
        if (!itsRisk.some((h) => h.clearanceStatus === 'cleared')) {
          const r = await change(tx, names, 'release', 'submission.clearance_changed', next.submissionId, []);
          if (r) {
            released = r.row;
            events.push(r.event);
          }
        }
      }
    }
    return { row: withdrawn.row, events, ...(released ? { released } : {}) };
  });
}

/** An operator's decision (admin CLI `clearance decide`). */
export interface OperatorDecision {
  submissionId: string;
  status: 'cleared' | 'blocked';
  by: string;
  note: string | null;
  force: boolean;
}

export class DecisionRefused extends Error {}

/**
 * Records an operator's decision on a live submission under its risk's locks, with
 * submission.clearance_changed to its partner. Clearing a submission of a risk another live
 * submission already holds (cleared) is refused unless forced; `blocked` applies to blocked and
 * review submissions (it keeps their basis).
 */
export async function decideByOperator(pool: Pool, names: Names, d: OperatorDecision): Promise<{ row: SubmissionRow; event: RecordedEvent; heldBy: string[] }> {
  return withTx(pool, async (tx) => {
    const read = async () => (await tx.query<RiskRow>(prepared(`SELECT ${RISK_COLUMNS} FROM submissions WHERE submission_id = $1`, [d.submissionId]))).rows[0];
    const before = await read();
    if (!before) throw new DecisionRefused(`no submission ${d.submissionId}`);
    const key = riskKeyOfRow(before);
    if (key) {
      await lockClearanceChanges(tx, key);
      await lockRisks(tx, [key]);
    }
    // Read again under the locks: what the decision is checked against.
    const row = (await read())!;
    if (row.status === 'withdrawn') throw new DecisionRefused('the submission is withdrawn');
    if (d.status === 'blocked' && row.clearance_status !== 'blocked' && row.clearance_status !== 'review') {
      throw new DecisionRefused(`only a blocked or review submission can be blocked (this one is ${row.clearance_status})`);
    }
    const heldBy = key
      ? (await readHolders(tx, [key])).filter((h) => h.submissionId !== row.submission_id && h.clearanceStatus === 'cleared' && sameRisk(key, h.key)).map((h) => h.submissionId)
      : [];
    if (d.status === 'cleared' && heldBy.length > 0 && !d.force) {
      throw new DecisionRefused(`the risk is already held by ${heldBy.join(', ')}; pass --force to clear a second submission of it`);
    }
    const r = await change(tx, names, 'decide', 'submission.clearance_changed', row.submission_id, [d.status, d.by, d.note, d.force || null]);
    if (!r) throw new DecisionRefused('the submission changed meanwhile; try again');
    return { ...r, heldBy };
  });
}

export interface QueueItem {
  submissionId: string;
  partnerId: string;
  status: string;
  basis: string | null;
  /** Why it waits beyond its matches: 'repeated_submission' (its partner's earlier submission of the risk within PROBE_WINDOW_DAYS), or null. */
  reason: ClearanceReason | null;
  submissionName: string;
  productId: string;
  effectiveDate: string;
  createdAt: string;
  /** The live submissions of the same risk (operators see every partner). */
  matches: { submissionId: string; partnerId: string; status: string; basis: string }[];
}

/** The operators' queue: a tenant's live blocked and review submissions, oldest first. */
export async function clearanceQueue(pool: Pool, tenantId: string, status: 'blocked' | 'review' | undefined, limit: number): Promise<QueueItem[]> {
  const { rows } = await pool.query<RiskRow>(
    prepared(
      `SELECT ${RISK_COLUMNS} FROM submissions
        WHERE tenant_id = $1 AND status <> 'withdrawn' AND clearance_status = ANY($2::text[])
        ORDER BY created_at, submission_id LIMIT $3`,
      [tenantId, status ? [status] : ['blocked', 'review'], limit],
    ),
  );
  const out: QueueItem[] = [];
  for (const r of rows) {
    const key = riskKeyOfRow(r);
    const holders = key ? await readHolders(pool, [key]) : [];
    out.push({
      submissionId: r.submission_id,
      partnerId: r.partner_id,
      status: r.clearance_status,
      basis: r.clearance_basis,
      reason: r.clearance_reason,
      submissionName: r.submission_name,
      productId: r.product_id,
      effectiveDate: r.effective_date,
      createdAt: r.created_at.toISOString(),
      matches: holders.flatMap((h) => {
        const basis = key && h.submissionId !== r.submission_id ? sameRisk(key, h.key) : undefined;
        return basis ? [{ submissionId: h.submissionId, partnerId: h.partnerId, status: h.clearanceStatus, basis }] : [];
      }),
    });
  }
  return out;
}

/** Seconds the oldest live `review` submission has waited (0 when none): the gauge behind the alert. */
export async function oldestReviewAgeSeconds(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ age: number | null }>(
    `SELECT extract(epoch FROM now() - min(created_at))::float8 AS age FROM submissions WHERE clearance_status = 'review' AND status <> 'withdrawn'`,
  );
  return Math.max(0, rows[0]?.age ?? 0);
}

/**
 * Fails with not_withdrawable when the owner's submission is withdrawn (an attachment cannot be added
 * to it). Takes a share lock on the submission's row, so a withdrawal (which updates the row) waits
 * for the caller's transaction, and the caller's waits for a withdrawal in progress.
 */
export async function refuseWithdrawn(tx: Queryable, submissionId: string, owner: { tenantId: string; partnerId: string }): Promise<void> {
  const { rows } = await tx.query<{ status: string }>(
    prepared('SELECT status FROM submissions WHERE submission_id = $1 AND tenant_id = $2 AND partner_id = $3 FOR SHARE', [
      submissionId,
      owner.tenantId,
      owner.partnerId,
    ]),
  );
  if (rows[0]?.status === 'withdrawn') {
    throw new DomainError('not_withdrawable', 'the submission is withdrawn: its attachments can be read, not added', { retryable: false });
  }
}

/**
 * Takes the risk locks of an owner's submission, the same a create or a withdraw of its risk takes
 * (a bind meets a withdraw here), then locks and reads its row. Undefined when it is not the owner's.
 */
export async function lockSubmissionRisk(tx: PoolClient, owner: { tenantId: string; partnerId: string }, submissionId: string): Promise<SubmissionRow | undefined> {
  const read = async (lock: string) =>
    (await tx.query<RiskRow>(prepared(`SELECT ${RISK_COLUMNS} FROM submissions WHERE submission_id = $1 AND tenant_id = $2 AND partner_id = $3${lock}`, [submissionId, owner.tenantId, owner.partnerId]))).rows[0];
  const row = await read('');
  if (!row) return undefined;
  const key = riskKeyOfRow(row);
  if (key) await lockRisks(tx, [key]);
  return read(' FOR UPDATE');
}
