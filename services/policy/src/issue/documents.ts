// Documents of a policy (the declarations PDF of an issued one): the record, the listing, and the
// bytes read in chunks for the streamed content. Scoped to the owner like every policy read.
import { iso, isUuid } from '@partner/shared/domain/ids';
import { prepared, type Pool } from '@partner/shared/db/pg';
import type { PolicyDocument } from '@partner/shared/generated/partner/policy/v1/PolicyDocument';
import type { Owner, PolicyRow } from '../policies.js';

export interface DocumentRow {
  document_id: string;
  policy_id: string;
  kind: string;
  file_name: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  created_at: Date;
}
export const DOCUMENT_COLUMNS = 'document_id, policy_id, kind, file_name, content_type, size_bytes, sha256, created_at';
export const CHUNK_BYTES = 64 * 1024;

export function documentToProto(d: DocumentRow): PolicyDocument {
  return {
    documentId: d.document_id,
    policyId: d.policy_id,
    kind: d.kind,
    fileName: d.file_name,
    contentType: d.content_type,
    sizeBytes: d.size_bytes,
    sha256: d.sha256,
    createdAt: iso(d.created_at),
  };
}

/** The policy as the API shows it (GET /v1/policies/{id}; the data of policy.issued / policy.updated). */
export function policyRecord(p: PolicyRow): Record<string, unknown> {
  return {
    policyId: p.policy_id,
    policyNumber: p.policy_number,
    status: p.status,
    productId: p.product_id,
    insured: { legalName: p.insured_legal_name },
    effectiveDate: p.effective_date,
    expirationDate: p.expiration_date,
    premium: { amount: p.premium_amount, currency: p.premium_currency },
    ...(p.submission_id ? { submissionId: p.submission_id } : {}),
    ...(p.quote_id ? { quoteId: p.quote_id } : {}),
    ...(p.option_limit !== null && p.option_retention !== null ? { option: { limit: p.option_limit, retention: p.option_retention } } : {}),
    ...(p.test_clock_id ? { testClockId: p.test_clock_id } : {}),
    createdAt: iso(p.created_at),
    updatedAt: iso(p.updated_at),
  };
}

/** The documents of the owner's policy; undefined when the policy is not the owner's. */
export async function listDocuments(pool: Pool, owner: Owner, policyId: string): Promise<DocumentRow[] | undefined> {
  if (!isUuid(policyId)) return undefined;
  const r = await pool.query<DocumentRow & { found: boolean }>(
    prepared(
      `SELECT p.policy_id IS NOT NULL AS found, d.document_id, d.policy_id, d.kind, d.file_name, d.content_type, d.size_bytes, d.sha256, d.created_at
         FROM (SELECT policy_id FROM policies WHERE policy_id = $1 AND tenant_id = $2 AND partner_id = $3) p
         LEFT JOIN policy_documents d ON d.policy_id = p.policy_id
        ORDER BY d.created_at, d.document_id`,
      [policyId.toLowerCase(), owner.tenantId, owner.partnerId],
    ),
  );
  if (r.rows.length === 0) return undefined;
  return r.rows.filter((d) => d.document_id !== null).map(({ found: _f, ...d }) => d);
}

export async function getDocument(pool: Pool, owner: Owner, policyId: string, documentId: string): Promise<DocumentRow | undefined> {
  if (!isUuid(policyId) || !isUuid(documentId)) return undefined;
  const r = await pool.query<DocumentRow>(
    prepared(`SELECT ${DOCUMENT_COLUMNS} FROM policy_documents WHERE document_id = $1 AND policy_id = $2 AND tenant_id = $3 AND partner_id = $4`, [
      documentId.toLowerCase(),
      policyId.toLowerCase(),
      owner.tenantId,
      owner.partnerId,
    ]),
  );
  return r.rows[0];
}

/** One chunk of a document's bytes (offset in bytes), read from the database without loading the rest. */
export async function readChunk(pool: Pool, documentId: string, offset: number, length = CHUNK_BYTES): Promise<Buffer> {
  const r = await pool.query<{ chunk: Buffer }>(prepared('SELECT substring(bytes FROM $2 FOR $3) AS chunk FROM policy_documents WHERE document_id = $1', [documentId, offset + 1, length]));
  return r.rows[0]?.chunk ?? Buffer.alloc(0);
}
