// `policy import`: policies from JSON Lines, one policy per line, for one partner. Every line is
// validated and every problem reported as `line N: <field> <issue>`; the whole file is imported in
// one transaction or not at all. A policyNumber the partner already has updates that policy (its
// updated_at moves only when a field actually changed), so re-importing a file is harmless.
import type { PoolClient, Pool } from '@partner/shared/db/pg';
import { withTx } from '@partner/shared/db/pg';
import { newUuid } from '@partner/shared/domain/ids';
import type { Owner } from './policies.js';
import {
  AMOUNT,
  CURRENCY,
  POLICY_STATUSES,
  isCalendarDate,
  isPolicyStatus,
  isUuid,
  legalNameIssue,
  policyNumberIssue,
  type PolicyStatusName,
} from './values.js';

export interface PolicyInput {
  policyNumber: string;
  status: PolicyStatusName;
  productId: string;
  insured: { legalName: string };
  effectiveDate: string;
  expirationDate: string;
  premium: { amount: string; currency: string };
  submissionId: string | null;
}

export interface FieldIssue {
  field: string;
  issue: string;
}

export interface LineError extends FieldIssue {
  line: number;
}

const SERVICE_ASSIGNED = new Set(['policyId', 'createdAt', 'updatedAt']);
const FIELDS = new Set(['policyNumber', 'status', 'productId', 'insured', 'effectiveDate', 'expirationDate', 'premium', 'submissionId']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses and validates one line; every problem of the line is reported. */
export function parsePolicyLine(text: string): { ok: true; value: PolicyInput } | { ok: false; errors: FieldIssue[] } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { ok: false, errors: [{ field: '(line)', issue: 'is not valid JSON' }] };
  }
  if (!isObject(doc)) return { ok: false, errors: [{ field: '(line)', issue: 'must be a JSON object' }] };
  const errors: FieldIssue[] = [];
  const bad = (field: string, issue: string) => void errors.push({ field, issue });
  const str = (v: unknown, field: string): string | undefined => {
    if (v === undefined || v === null) bad(field, 'is required');
    else if (typeof v !== 'string') bad(field, 'must be a string');
    else return v;
    return undefined;
  };

  for (const key of Object.keys(doc)) {
    if (SERVICE_ASSIGNED.has(key)) bad(key, 'is assigned by the service and cannot be imported');
    else if (!FIELDS.has(key)) bad(key, 'is not a policy field');
  }

  const policyNumber = str(doc.policyNumber, 'policyNumber');
  if (policyNumber !== undefined) {
    const issue = policyNumberIssue(policyNumber);
    if (issue) bad('policyNumber', issue);
  }
  const status = str(doc.status, 'status');
  if (status !== undefined && !isPolicyStatus(status)) bad('status', `must be one of ${POLICY_STATUSES.join(', ')}`);
  const productId = str(doc.productId, 'productId');
  if (productId !== undefined && !isUuid(productId)) bad('productId', 'must be a UUID');

  let legalName: string | undefined;
  if (!isObject(doc.insured)) bad('insured', doc.insured === undefined || doc.insured === null ? 'is required' : 'must be an object');
  else {
    for (const key of Object.keys(doc.insured)) if (key !== 'legalName') bad(`insured.${key}`, 'is not a field of insured');
    legalName = str(doc.insured.legalName, 'insured.legalName');
    if (legalName !== undefined) {
      const issue = legalNameIssue(legalName);
      if (issue) bad('insured.legalName', issue);
      legalName = legalName.trim();
    }
  }

  const effectiveDate = str(doc.effectiveDate, 'effectiveDate');
  const effectiveOk = effectiveDate !== undefined && isCalendarDate(effectiveDate);
  if (effectiveDate !== undefined && !effectiveOk) bad('effectiveDate', 'must be a calendar date YYYY-MM-DD');
  const expirationDate = str(doc.expirationDate, 'expirationDate');
  const expirationOk = expirationDate !== undefined && isCalendarDate(expirationDate);
  if (expirationDate !== undefined && !expirationOk) bad('expirationDate', 'must be a calendar date YYYY-MM-DD');
  if (effectiveOk && expirationOk && expirationDate! <= effectiveDate!) bad('expirationDate', 'must be after effectiveDate');

  let amount: string | undefined;
  let currency: string | undefined;
  if (!isObject(doc.premium)) bad('premium', doc.premium === undefined || doc.premium === null ? 'is required' : 'must be an object');
  else {
    for (const key of Object.keys(doc.premium)) if (key !== 'amount' && key !== 'currency') bad(`premium.${key}`, 'is not a field of premium');
    if (typeof doc.premium.amount === 'number') bad('premium.amount', 'must be a decimal string such as "1234.50", not a JSON number');
    else {
      amount = str(doc.premium.amount, 'premium.amount');
      if (amount !== undefined && !AMOUNT.test(amount)) {
        bad('premium.amount', 'must be a non-negative decimal string with at most 15 digits before and 4 after the point, such as "1234.50"');
      }
    }
    currency = str(doc.premium.currency, 'premium.currency');
    if (currency !== undefined && !CURRENCY.test(currency)) bad('premium.currency', 'must be an ISO 4217 code such as EUR');
  }

  let submissionId: string | null = null;
  if (doc.submissionId !== undefined && doc.submissionId !== null) {
    if (typeof doc.submissionId !== 'string' || !isUuid(doc.submissionId)) bad('submissionId', 'must be a UUID (or absent)');
    else submissionId = doc.submissionId.toLowerCase();
  }

  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: {
      policyNumber: policyNumber!,
      status: status as PolicyStatusName,
      productId: productId!.toLowerCase(),
      insured: { legalName: legalName! },
      effectiveDate: effectiveDate!,
      expirationDate: expirationDate!,
      premium: { amount: amount!, currency: currency! },
      submissionId,
    },
  };
}

/** The file had invalid lines; nothing was imported. `errors` holds the first maxErrors of them. */
export class ImportRejected extends Error {
  constructor(
    readonly errors: LineError[],
    readonly total: number,
    readonly invalidLines: number,
  ) {
    const shown = errors.map((e) => `line ${e.line}: ${e.field} ${e.issue}`);
    if (total > errors.length) shown.push(`... and ${total - errors.length} more`);
    super(`${invalidLines} invalid line${invalidLines === 1 ? '' : 's'}; nothing was imported\n${shown.join('\n')}`);
    this.name = 'ImportRejected';
  }
}

const UPSERT = `
INSERT INTO policies (policy_id, tenant_id, partner_id, policy_number, status, product_id, insured_legal_name,
                      effective_date, expiration_date, premium_amount, premium_currency, submission_id)
SELECT u.policy_id, $1, $2, u.policy_number, u.status, u.product_id, u.legal_name,
       u.effective_date, u.expiration_date, u.amount, u.currency, u.submission_id
  FROM unnest($3::uuid[], $4::text[], $5::text[], $6::uuid[], $7::text[], $8::date[], $9::date[], $10::numeric[], $11::text[], $12::uuid[])
    AS u(policy_id, policy_number, status, product_id, legal_name, effective_date, expiration_date, amount, currency, submission_id)
ON CONFLICT (tenant_id, partner_id, policy_number) DO UPDATE SET
  status = EXCLUDED.status,
  product_id = EXCLUDED.product_id,
  insured_legal_name = EXCLUDED.insured_legal_name,
  effective_date = EXCLUDED.effective_date,
  expiration_date = EXCLUDED.expiration_date,
  premium_amount = EXCLUDED.premium_amount,
  premium_currency = EXCLUDED.premium_currency,
  submission_id = EXCLUDED.submission_id,
  updated_at = now()
WHERE (policies.status, policies.product_id, policies.insured_legal_name, policies.effective_date, policies.expiration_date,
       policies.premium_amount::text, policies.premium_currency, policies.submission_id)
  IS DISTINCT FROM
      (EXCLUDED.status, EXCLUDED.product_id, EXCLUDED.insured_legal_name, EXCLUDED.effective_date, EXCLUDED.expiration_date,
       EXCLUDED.premium_amount::text, EXCLUDED.premium_currency, EXCLUDED.submission_id)
RETURNING (xmax = 0) AS inserted`;

/** Upserts a batch; returns how many policies were new. Unchanged policies are not rewritten. */
async function upsertBatch(c: PoolClient, owner: Owner, batch: PolicyInput[]): Promise<number> {
  const r = await c.query<{ inserted: boolean }>(UPSERT, [
    owner.tenantId,
    owner.partnerId,
    batch.map(() => newUuid()),
    batch.map((p) => p.policyNumber),
    batch.map((p) => p.status),
    batch.map((p) => p.productId),
    batch.map((p) => p.insured.legalName),
    batch.map((p) => p.effectiveDate),
    batch.map((p) => p.expirationDate),
    batch.map((p) => p.premium.amount),
    batch.map((p) => p.premium.currency),
    batch.map((p) => p.submissionId),
  ]);
  return r.rows.filter((row) => row.inserted).length;
}

export interface ImportResult {
  /** New policies. */
  imported: number;
  /** Lines whose policyNumber the partner already had (now holding the line's values). */
  updated: number;
}

/**
 * Imports the lines (streamed, so a large file is never held in memory) in one transaction: valid
 * lines are written in batches while the file is read, and any invalid line rolls everything back.
 */
export async function importPolicies(
  pool: Pool,
  owner: Owner,
  lines: AsyncIterable<string>,
  opts: { batchSize?: number; maxErrors?: number } = {},
): Promise<ImportResult> {
  const batchSize = opts.batchSize ?? 1000;
  const maxErrors = opts.maxErrors ?? 100;
  return withTx(pool, async (c) => {
    const errors: LineError[] = [];
    let total = 0;
    const invalid = new Set<number>();
    const fail = (line: number, field: string, issue: string) => {
      total++;
      invalid.add(line);
      if (errors.length < maxErrors) errors.push({ line, field, issue });
    };
    const firstLineOf = new Map<string, number>();
    const knownProducts = new Map<string, boolean>();
    let batch: { line: number; policy: PolicyInput }[] = [];
    const result: ImportResult = { imported: 0, updated: 0 };

    const flush = async () => {
      const unknown = [...new Set(batch.map((b) => b.policy.productId))].filter((id) => !knownProducts.has(id));
      if (unknown.length > 0) {
        const found = await c.query<{ product_id: string }>('SELECT product_id FROM products WHERE product_id = ANY($1::uuid[])', [unknown]);
        for (const id of unknown) knownProducts.set(id, false);
        for (const row of found.rows) knownProducts.set(row.product_id, true);
      }
      for (const b of batch) {
        if (!knownProducts.get(b.policy.productId)) fail(b.line, 'productId', 'is not a product of the catalogue (add it with `product add`)');
      }
      // After the first invalid line the rest is only validated: the transaction will be rolled back.
      if (total === 0 && batch.length > 0) {
        const inserted = await upsertBatch(c, owner, batch.map((b) => b.policy));
        result.imported += inserted;
        result.updated += batch.length - inserted;
      }
      batch = [];
    };

    let n = 0;
    for await (const raw of lines) {
      n++;
      const text = n === 1 ? raw.replace(/^\uFEFF/, '') : raw;
      if (text.trim() === '') continue;
      const parsed = parsePolicyLine(text);
      if (!parsed.ok) {
        for (const e of parsed.errors) fail(n, e.field, e.issue);
        continue;
      }
      const first = firstLineOf.get(parsed.value.policyNumber);
      if (first !== undefined) {
        fail(n, 'policyNumber', `repeats the policy of line ${first}`);
        continue;
      }
      firstLineOf.set(parsed.value.policyNumber, n);
      batch.push({ line: n, policy: parsed.value });
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    if (total > 0) throw new ImportRejected(errors.sort((a, b) => a.line - b.line), total, invalid.size);
    return result;
  });
}
