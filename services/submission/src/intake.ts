// Intake: the transaction that creates submissions (idempotent by job id). In one transaction: the
// clearance decision (clearance.ts, under the risks' locks), the partners' receipt chain heads
// (receipts/issue.ts), the insert with each submission.created event, and the receipts.
import { newUuid } from '@partner/shared/domain/ids';
import { DomainError } from '@partner/shared/domain/errors';
import { prepared, withTx, sqlIso, type Pool, type PoolClient } from '@partner/shared/db/pg';
import { newEventId } from '@partner/shared/domain/events';
import { outboxInsertSql, type RecordedEvent } from '@partner/shared/nats/event-outbox';
import type { natsNames } from '@partner/shared/nats/client';
import type { Applicant } from '@partner/shared/domain/applicant';
import { decideClearance, decideFromFacts, FACTS, factsParams, inputsRiskKeys, riskLocksSql, type ClearanceColumns, type FactsRow } from './clearance.js';
import {
  headsParams,
  issueReceipts,
  LOCK_HEADS_SQL,
  lockedHeadsOf,
  receiptOfJob,
  RECEIPT_KINDS,
  RECEIPTS_WRITE,
  signReceipts,
  type HeadRow,
  type LockedHeads,
  type ReceiptIssuing,
  type ReceiptSubject,
  type SignedReceipts,
} from './receipts/issue.js';
import { KEY_LOCK_SQL } from './receipts/keys.js';
import { SUBMISSION_COLUMN_NAMES, SUBMISSION_COLUMNS, SUBMISSION_DATA_SQL, submissionName, type SubmissionRow } from './submission-row.js';

type Queryable = Pick<PoolClient, 'query'>;

export interface NewSubmission {
  jobId: string;
  tenantId: string;
  partnerId: string;
  principalId: string | null;
  externalRef: string;
  submissionType: string;
  effectiveDate: string;
  productId: string;
  /** As stored and shown: normalizeApplicant's form. */
  applicant: Applicant;
  /** The product's requirements version that judged it, and that version's attachment rules (JSON array). */
  requirementsVersion: number;
  attachmentRulesJson: string;
  /** The create body's risk object as JSON text, or null when it had none. */
  riskJson: string | null;
  /** The receipt's content.sha256 (RFC 8785 hash of the body as sent; null for a job queued before receipts). */
  contentSha256: string | null;
  /** The job's createdAt (ISO 8601): the receipt's receivedAt. */
  receivedAt: string;
  /** The test clock it lives on (issue 44; the job checked it is the partner's), null on the wall clock. */
  testClockId?: string | null;
}

/** CreateSubmission's risk_json as stored: null when empty; a JSON object's text, else validation_error. */
export function riskJsonOf(text: string): string | null {
  if (text === '') return null;
  let risk: unknown;
  try {
    risk = JSON.parse(text);
  } catch {
    risk = undefined;
  }
  if (typeof risk !== 'object' || risk === null || Array.isArray(risk)) throw new DomainError('validation_error', 'risk_json must be the text of a JSON object (or empty)');
  return text;
}

const CREATED_EVENT = {
  type: "'submission.created'",
  timestampSql: sqlIso('s.created_at'),
  dataSql: SUBMISSION_DATA_SQL,
};

// One statement, so one round trip and one commit: insert the submission unless this job made one
// already, and record its submission.created event (data: the submission as its GET shows it).
const CREATE_SQL = (extra: string) => `WITH ins AS (
     INSERT INTO submissions (submission_id, job_id, tenant_id, partner_id, principal_id, external_ref, submission_type,
                              effective_date, product_id, applicant, submission_name, status,
                              risk_name, risk_tax_id, risk_country, risk_postal_code, clearance_status, clearance_basis, clearance_duplicate_of,
                              requirements_version, attachment_rules, currently_due, clearance_reason, risk_data, test_clock_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'submitted', $14, $15, $16, $17, $18, $19, $20,
             $21, $22::jsonb, initially_due($22::jsonb), $23, $24::jsonb, $25)
     ON CONFLICT (job_id) DO NOTHING
     RETURNING ${SUBMISSION_COLUMNS}
   ), event AS (
     ${outboxInsertSql({ source: 'ins', eventId: '$12', subject: '$13', ...CREATED_EVENT })}
   )${extra}
   SELECT ins.*, event.id AS outbox_id, event.body AS event_body FROM ins, event`;

// Several CreateSubmissions as one statement (shared/db/batcher.ts): the same insert and event over the
// rows of the arrays, each event joined back to its submission by its event id. A batch never holds
// one job twice (the batcher keeps such calls apart).
const CREATE_BATCH_SQL = (extra: string) => `WITH input AS (
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                          $9::uuid[], $10::text[], $11::text[], $12::text[],
                          $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[], $20::uuid[], $21::bigint[], $22::text[], $23::text[], $24::text[], $25::text[])
       AS t(submission_id, job_id, tenant_id, partner_id, principal_id, external_ref, submission_type, effective_date,
            product_id, applicant, submission_name, event_id,
            risk_name, risk_tax_id, risk_country, risk_postal_code, clearance_status, clearance_basis, clearance_duplicate_of,
            requirements_version, attachment_rules, clearance_reason, risk_data, test_clock_id)
   ), ins AS (
     INSERT INTO submissions (submission_id, job_id, tenant_id, partner_id, principal_id, external_ref, submission_type,
                              effective_date, product_id, applicant, submission_name, status,
                              risk_name, risk_tax_id, risk_country, risk_postal_code, clearance_status, clearance_basis, clearance_duplicate_of,
                              requirements_version, attachment_rules, currently_due, clearance_reason, risk_data, test_clock_id)
     SELECT submission_id, job_id, tenant_id, partner_id, principal_id, external_ref, submission_type, effective_date::date,
            product_id, applicant::jsonb, submission_name, 'submitted',
            risk_name, risk_tax_id, risk_country, risk_postal_code, clearance_status, clearance_basis, clearance_duplicate_of,
            requirements_version, attachment_rules::jsonb, initially_due(attachment_rules::jsonb), clearance_reason, risk_data::jsonb, test_clock_id
       FROM input
     ON CONFLICT (job_id) DO NOTHING
     RETURNING ${SUBMISSION_COLUMNS}, job_id
   ), created AS (
     SELECT ins.*, input.event_id FROM ins JOIN input USING (job_id)
   ), event AS (
     ${outboxInsertSql({ source: 'created', eventId: 's.event_id', subject: '$13', ...CREATED_EVENT })}
   )${extra}
   SELECT ${SUBMISSION_COLUMN_NAMES.map((c) => `created.${c}`).join(', ')}, event.id AS outbox_id, event.body AS event_body, event_id
     FROM created JOIN event USING (event_id)`;

/** Step 2 and the end of step 1 in one statement: FACTS ($1–$8), and the locked heads ($9, $10) on every row as JSON. */
const FACTS_AND_HEADS = `WITH heads AS (${LOCK_HEADS_SQL('$9', '$10')})
   SELECT f.*, (SELECT json_agg(h) FROM heads h) AS heads FROM (${FACTS}) f ORDER BY f.ord`;

// Both take $1–$25. With receipts, the receipts signed before the insert (RECEIPTS_WRITE, $26–$39)
// are written in the same statement when every row was inserted ($40 rows): none are otherwise.
const RECEIPTS_BESIDE = `, ${RECEIPTS_WRITE(25, '(SELECT count(*) FROM ins) = $40')}`;
const CREATE = CREATE_SQL('');
const CREATE_BATCH = CREATE_BATCH_SQL('');
const CREATE_WITH_RECEIPTS = CREATE_SQL(RECEIPTS_BESIDE);
const CREATE_BATCH_WITH_RECEIPTS = CREATE_BATCH_SQL(RECEIPTS_BESIDE);

/**
 * A submission created by createSubmissions with its event and its receipt ('' with receipts off),
 * or undefined where its job made one already.
 */
export type Created = { row: SubmissionRow; event: RecordedEvent; receipt: string } | undefined;

/**
 * Creates the submissions of jobs with their submission.created events, in one transaction of three
 * steps (one input runs the single-row statement in step 3; several run CREATE_BATCH):
 *  1. Locks, taken in one fixed order by every transaction that needs more than one, so batches never
 *     deadlock: the risk keys clearance decides on (sorted), then the partners' receipt chains (sorted).
 *  2. Reads made after the locks. Under READ COMMITTED each statement sees what committed before it
 *     began, so a read in a later statement than the lock sees everything the lock's previous holder
 *     wrote: that is what makes "decide, then write" safe here (never a read-then-write without a lock).
 *  3. One statement inserting the new submissions with their events.
 * Round trips: BEGIN with the advisory locks (withTx's `lead`); the clearance read with the heads'
 * row locks (FACTS_AND_HEADS); the insert with the receipts signed before it (a fifth, the receipts
 * alone, only when a row was not inserted); COMMIT. Eight before issue 47's sixth round.
 * Answers per input, in order: undefined for a job whose submission exists already.
 */
export async function createSubmissions(
  pool: Pool,
  names: ReturnType<typeof natsNames>,
  inputs: NewSubmission[],
  receipts?: ReceiptIssuing,
): Promise<Created[]> {
  const subject = names.eventSubject('submission.created');
  const rows = inputs.map((s) => ({
    ...s,
    submissionId: newUuid(),
    eventId: newEventId(),
    name: submissionName(s.applicant.legalName),
    applicantJson: JSON.stringify(s.applicant),
  }));
  // Step 1's advisory locks go with BEGIN (one round trip): the risk keys' (sorted), then the
  // receipt key's (shared), the order every path takes them in.
  const keys = inputsRiskKeys(rows);
  const lead = [...riskLocksSql(keys), ...(receipts ? [KEY_LOCK_SQL] : [])];
  return withTx(pool, async (tx) => {
    // Step 2 (the live submissions of the risk keys, read after their locks): each input's
    // clearance, decided in input order (clearance.ts). With receipts, the same statement ends step 1
    // (after the locks, so every path takes them in one order): it locks the partners' receipt chain
    // heads (a data-modifying CTE runs whole whatever reads it).
    let decisions: ClearanceColumns[];
    let heads: LockedHeads | undefined;
    if (receipts) {
      const r = await tx.query<FactsRow & { heads: HeadRow[] }>(prepared(FACTS_AND_HEADS, [...factsParams(rows, keys), ...headsParams(rows)]));
      decisions = decideFromFacts(rows, keys, r.rows);
      heads = lockedHeadsOf(r.rows[0]!.heads);
    } else decisions = await decideClearance(tx, rows, keys);
    // The receipts every row gets if it is inserted (a redelivered job's submission has its receipt
    // already), in input order per partner, signed before the insert so that one statement writes
    // the rows, their events, the receipts and the advanced heads.
    const subjectOf = (x: (typeof rows)[number]): ReceiptSubject => ({
      kind: RECEIPT_KINDS.submission,
      tenantId: x.tenantId,
      partnerId: x.partnerId,
      submissionId: x.submissionId,
      jobId: x.jobId,
      externalRef: x.externalRef,
      receivedAt: x.receivedAt,
      contentSha256: x.contentSha256,
    });
    const signed = receipts && heads ? await signReceipts(tx, receipts, heads, rows.map(subjectOf)) : undefined;
    // Step 3: insert.
    const found = await insertSubmissions(
      tx,
      rows.map((r, i) => ({ ...r, ...decisions[i]! })),
      subject,
      signed,
    );
    // The single statement answers its one row (or none); the batch names each row's event.
    const byEvent = new Map(found.map((r) => [r.event_id ?? rows[0]!.eventId, r]));
    // The statement wrote the signed receipts only when it inserted every row.
    const written = signed && found.length === rows.length ? signed.issued : undefined;
    const created = rows.map((x, i) => {
      const c = byEvent.get(x.eventId);
      if (!c) return undefined;
      const { outbox_id: outboxId, event_body: body, event_id: _eventId, ...row } = c;
      return { row, event: { outboxId, msgId: x.eventId, subject, body }, receipt: written?.[i]!.jws ?? '', input: x };
    });
    // A row not inserted (its job's submission exists): the statement wrote no receipt and left the
    // heads as they were. Those of the rows really inserted are signed again, in input order per
    // partner, and written with the advanced heads in one statement.
    const made = created.filter((c) => c !== undefined);
    if (receipts && heads && !written && made.length > 0) {
      const issued = await issueReceipts(
        tx,
        receipts,
        heads,
        made.map(({ input }) => subjectOf(input)),
      );
      issued.forEach((r, i) => (made[i]!.receipt = r.jws));
    }
    return created.map((c) => c && { row: c.row, event: c.event, receipt: c.receipt });
    // Generic plans: the clearance read (FACTS) is otherwise planned again on every create, which cost
    // more than running it (withTx's TxOptions).
  }, { genericPlans: true, lead });
}

interface InsertRow extends NewSubmission, ClearanceColumns {
  submissionId: string;
  eventId: string;
  name: string;
  applicantJson: string;
}
type Inserted = SubmissionRow & { outbox_id: string; event_body: string; event_id?: string };

/**
 * Step 3 of createSubmissions: the submissions and their events, one statement; with `signed`, their
 * receipts and the advanced heads too, when every row is inserted (RECEIPTS_BESIDE).
 */
async function insertSubmissions(tx: Queryable, rows: InsertRow[], subject: string, signed?: SignedReceipts): Promise<Inserted[]> {
  const receiptParams = signed ? [...signed.params, rows.length] : [];
  if (rows.length === 1) {
    const s = rows[0]!;
    return (
      await tx.query<Inserted>(
        prepared(signed ? CREATE_WITH_RECEIPTS : CREATE, [
          s.submissionId,
          s.jobId,
          s.tenantId,
          s.partnerId,
          s.principalId,
          s.externalRef,
          s.submissionType,
          s.effectiveDate,
          s.productId,
          s.applicantJson,
          s.name,
          s.eventId,
          subject,
          s.riskName,
          s.riskTaxId,
          s.riskCountry,
          s.riskPostalCode,
          s.clearanceStatus,
          s.clearanceBasis,
          s.clearanceDuplicateOf,
          s.requirementsVersion,
          s.attachmentRulesJson,
          s.clearanceReason,
          s.riskJson,
          s.testClockId ?? null,
          ...receiptParams,
        ]),
      )
    ).rows;
  }
  const col = <K extends keyof InsertRow>(k: K) => rows.map((x) => x[k]);
  return (
    await tx.query<Inserted>(
      prepared(signed ? CREATE_BATCH_WITH_RECEIPTS : CREATE_BATCH, [
        col('submissionId'),
        col('jobId'),
        col('tenantId'),
        col('partnerId'),
        col('principalId'),
        col('externalRef'),
        col('submissionType'),
        col('effectiveDate'),
        col('productId'),
        col('applicantJson'),
        col('name'),
        col('eventId'),
        subject,
        col('riskName'),
        col('riskTaxId'),
        col('riskCountry'),
        col('riskPostalCode'),
        col('clearanceStatus'),
        col('clearanceBasis'),
        col('clearanceDuplicateOf'),
        col('requirementsVersion'),
        col('attachmentRulesJson'),
        col('clearanceReason'),
        col('riskJson'),
        rows.map((x) => x.testClockId ?? null),
        ...receiptParams,
      ]),
    )
  ).rows;
}

/**
 * Creates the submission for a job, with its submission.created event in the same statement, or
 * returns the one that job already created (and no event). `create` records it (alone by default;
 * the submission service passes its batcher).
 */
export async function createSubmission(
  pool: Pool,
  names: ReturnType<typeof natsNames>,
  s: NewSubmission,
  create: (s: NewSubmission) => Promise<Created> = async (x) => (await createSubmissions(pool, names, [x]))[0],
): Promise<{ row: SubmissionRow; created: boolean; event?: RecordedEvent; receipt: string }> {
  const created = await create(s);
  if (created) return { row: created.row, created: true, event: created.event, receipt: created.receipt };
  const existing = await pool.query<SubmissionRow>(prepared(`SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE job_id = $1`, [s.jobId]));
  return { row: existing.rows[0]!, created: false, receipt: await receiptOfJob(pool, s.jobId) };
}
