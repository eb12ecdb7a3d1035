// Issuing receipts in the transaction that creates their records (docs/api.md "Signed receipts").
// Each partner's receipts form one chain: seq counts from 1 without gaps, prev is the hex SHA-256 of
// the previous compact JWS. The numbering is decided under the partner's head row lock (lockHeads,
// step 1 of the creating transaction), never by a read-then-write two transactions can interleave;
// the receipts and the advanced heads are written in one statement (writeReceipts).
import { createHash, sign, type KeyObject } from 'node:crypto';
import { prepared, type PoolClient } from '@partner/shared/db/pg';
import { CURRENT_KID_SQL, KEY_LOCK_SQL, type ReceiptKeyring } from './keys.js';

type Queryable = Pick<PoolClient, 'query'>;

export const RECEIPT_TYP = 'receipt+jws';
/** The JWS type of a quote's offer (signed with the same keys, see offers.ts). */
export const OFFER_TYP = 'offer+jws';
export const RECEIPT_KINDS = {
  submission: 'submission.received',
  attachment: 'attachment.received',
  bind: 'bind.received',
  policy: 'policy.issued',
} as const;
export type ReceiptKind = (typeof RECEIPT_KINDS)[keyof typeof RECEIPT_KINDS];

/** What a receipt says about its record (the chain fields are added when it is issued). */
export type ReceiptSubject = {
  tenantId: string;
  partnerId: string;
  submissionId: string;
  jobId: string;
  externalRef: string;
  /** The job's createdAt, ISO 8601. */
  receivedAt: string;
} & (
  | { kind: typeof RECEIPT_KINDS.submission; contentSha256: string | null; attachment?: never }
  | {
      kind: typeof RECEIPT_KINDS.attachment;
      attachment: { attachmentId: string; fileName: string; contentType: string; sizeBytes: number; sha256: string };
      contentSha256?: never;
    }
  | { kind: typeof RECEIPT_KINDS.bind; bind: { quoteId: string; offerSha256: string }; contentSha256?: never; attachment?: never }
  | {
      kind: typeof RECEIPT_KINDS.policy;
      policy: { policyId: string; policyNumber: string; documents: { documentId: string; sha256: string }[] };
      contentSha256?: never;
      attachment?: never;
    }
);

/** The claims a receipt adds to the common ones, by kind (API.md "Signed receipts", "Receipts extend to the deal"). */
function kindClaims(s: ReceiptSubject): Record<string, unknown> {
  switch (s.kind) {
    case RECEIPT_KINDS.attachment:
      return { attachment: s.attachment };
    case RECEIPT_KINDS.bind:
      return { quoteId: s.bind.quoteId, offerSha256: s.bind.offerSha256 };
    case RECEIPT_KINDS.policy:
      return { policyId: s.policy.policyId, policyNumber: s.policy.policyNumber, documents: s.policy.documents };
    default:
      return { content: { canon: 'RFC8785', sha256: s.contentSha256 } };
  }
}

/** What issuing needs: the keys and the issuer (iss, the API's base URL). Absent: receipts are off (bench only). */
export interface ReceiptIssuing {
  keyring: ReceiptKeyring;
  iss: string;
}

export interface Head {
  seq: number;
  jwsSha256: string | null;
}

const partnerKey = (tenantId: string, partnerId: string): string => `${tenantId}\u0000${partnerId}`;

/**
 * The chain heads a transaction locked, by partner, with what its receipts are signed with: the
 * current key's id and the instant they are issued at, both read by the statement that locked the
 * heads (after the receipt-key lock, so a rotation committed before it is seen and none can commit
 * until the transaction ends).
 */
export class LockedHeads extends Map<string, Head> {
  constructor(
    entries: Iterable<[string, Head]>,
    readonly signing: { kid: string | null; issuedAt: Date } | undefined,
  ) {
    super(entries);
  }
}

/**
 * Step 1 of a creating transaction: takes the receipt-key lock (shared) and locks the chain heads of
 * the given partners, one row each, in sorted order (so two batches never deadlock), creating a
 * partner's head on its first receipt. Returns each head as it stands, by partner, and the signing
 * key's id and the issuing instant (read in the same statement: one round trip fewer than reading
 * them when signing).
 */
export async function lockHeads(tx: Queryable, partners: { tenantId: string; partnerId: string }[]): Promise<LockedHeads> {
  await tx.query(KEY_LOCK_SQL);
  const r = await tx.query<HeadRow>(prepared(LOCK_HEADS_SQL('$1', '$2'), headsParams(partners)));
  return lockedHeadsOf(r.rows);
}

/**
 * lockHeads' statement (after KEY_LOCK_SQL, in an earlier statement): its partners are the text
 * arrays named by `tenants` and `partners` (headsParams' two arrays). The no-op update locks an
 * existing head; the insert locks a new one. Rows are taken in input order.
 */
export const LOCK_HEADS_SQL = (tenants: string, partners: string): string => `INSERT INTO receipt_heads (tenant_id, partner_id, seq, jws_sha256)
       SELECT t, p, 0, NULL FROM unnest(${tenants}::text[], ${partners}::text[]) WITH ORDINALITY AS x(t, p, n) ORDER BY n
       ON CONFLICT (tenant_id, partner_id) DO UPDATE SET seq = receipt_heads.seq
       RETURNING tenant_id, partner_id, seq, jws_sha256, (${CURRENT_KID_SQL}) AS kid, clock_timestamp() AS at`;

/** LOCK_HEADS_SQL's parameters: the partners' tenants and ids, each partner once, sorted. */
export function headsParams(partners: { tenantId: string; partnerId: string }[]): [string[], string[]] {
  const unique = [...new Map(partners.map((p) => [partnerKey(p.tenantId, p.partnerId), p])).values()].sort((a, b) =>
    a.tenantId === b.tenantId ? (a.partnerId < b.partnerId ? -1 : 1) : a.tenantId < b.tenantId ? -1 : 1,
  );
  return [unique.map((p) => p.tenantId), unique.map((p) => p.partnerId)];
}

/** A row LOCK_HEADS_SQL returns: as pg parses it, or as JSON (json_agg) where a larger statement carries it. */
export interface HeadRow {
  tenant_id: string;
  partner_id: string;
  seq: string | number;
  jws_sha256: string | null;
  kid: string | null;
  at: Date | string;
}

/** The LockedHeads of LOCK_HEADS_SQL's rows. */
export function lockedHeadsOf(rows: HeadRow[]): LockedHeads {
  const first = rows[0];
  return new LockedHeads(
    rows.map((h) => [partnerKey(h.tenant_id, h.partner_id), { seq: Number(h.seq), jwsSha256: h.jws_sha256 }]),
    first && { kid: first.kid, issuedAt: new Date(first.at) },
  );
}

const b64url = (s: string | Buffer): string => Buffer.from(s).toString('base64url');

/**
 * A compact JWS (RFC 7515) signed with ES256. node:crypto signs synchronously: the receipts of a
 * partner are signed one after the other inside the transaction holding its chain head (each prev
 * needs the JWS before it), so the per-receipt cost is what bounds one partner's throughput. The
 * JWS is verified by jose in the tests and the SDK.
 */
export function signCompact(key: KeyObject, kid: string, payload: object, typ: string = RECEIPT_TYP): string {
  const input = `${b64url(JSON.stringify({ alg: 'ES256', kid, typ }))}.${b64url(JSON.stringify(payload))}`;
  const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${b64url(signature)}`;
}

export const sha256Hex = (s: string): string => createHash('sha256').update(s).digest('hex');

export interface IssuedReceipt {
  subject: ReceiptSubject;
  seq: number;
  jws: string;
}

/** Receipts signed (signReceipts) and not yet written: RECEIPTS_WRITE's parameters with them. */
export interface SignedReceipts {
  issued: IssuedReceipt[];
  /** RECEIPTS_WRITE's 14 parameters, in order. */
  params: unknown[];
}

/**
 * Signs the receipts of newly created records, in order per partner, continuing each partner's chain
 * from heads (as lockHeads returned them, in this transaction). Nothing is written: RECEIPTS_WRITE
 * writes them and advances the heads, in one statement (issueReceipts, or the caller's own).
 */
export async function signReceipts(tx: PoolClient, { keyring, iss }: ReceiptIssuing, heads: LockedHeads, subjects: ReceiptSubject[]): Promise<SignedReceipts> {
  const { key, issuedAt } = await keyring.forTx(tx, heads.signing);
  const iat = Math.floor(issuedAt.getTime() / 1000);
  const issued: IssuedReceipt[] = [];
  const advanced = new Map<string, Head & { tenantId: string; partnerId: string }>();
  for (const s of subjects) {
    const k = partnerKey(s.tenantId, s.partnerId);
    const head = advanced.get(k) ?? heads.get(k);
    if (!head) throw new Error(`the chain head of partner ${s.partnerId} was not locked`);
    const seq = head.seq + 1;
    const claims = {
      iss,
      tenant: s.tenantId,
      partnerId: s.partnerId,
      seq,
      prev: head.jwsSha256,
      kind: s.kind,
      submissionId: s.submissionId,
      jobId: s.jobId,
      externalRef: s.externalRef,
      receivedAt: s.receivedAt,
      iat,
      ...kindClaims(s),
    };
    const jws = signCompact(key.key, key.kid, claims);
    issued.push({ subject: s, seq, jws });
    advanced.set(k, { tenantId: s.tenantId, partnerId: s.partnerId, seq, jwsSha256: sha256Hex(jws) });
  }
  const col = <T>(f: (r: IssuedReceipt) => T) => issued.map(f);
  const hs = [...advanced.values()];
  return {
    issued,
    params: [
      col((r) => r.subject.tenantId),
      col((r) => r.subject.partnerId),
      col((r) => r.seq),
      col((r) => r.subject.kind),
      col((r) => r.subject.submissionId),
      col((r) => (r.subject.kind === RECEIPT_KINDS.attachment ? r.subject.attachment.attachmentId : null)),
      col((r) => r.subject.jobId),
      col((r) => r.jws),
      hs.map((h) => h.tenantId),
      key.kid,
      issuedAt,
      hs.map((h) => h.partnerId),
      hs.map((h) => h.seq),
      hs.map((h) => h.jwsSha256),
    ],
  };
}

/**
 * Two CTEs (receipts_written, heads_advanced) writing signed receipts and advancing their partners'
 * heads, from SignedReceipts.params as parameters $(offset+1)…$(offset+14), only where `guard` (an SQL
 * condition) holds: a statement that writes receipts beside their records writes neither when a
 * record was not written after all.
 */
export const RECEIPTS_WRITE = (offset: number, guard = 'true'): string => {
  const $ = (n: number) => `$${offset + n}`;
  return `receipts_written AS (
         INSERT INTO receipts (tenant_id, partner_id, seq, kind, submission_id, attachment_id, job_id, kid, jws, issued_at)
         SELECT t, p, seq, kind, sub, att, job, ${$(10)}, jws, ${$(11)}
           FROM unnest(${$(1)}::text[], ${$(2)}::text[], ${$(3)}::bigint[], ${$(4)}::text[], ${$(5)}::uuid[], ${$(6)}::uuid[], ${$(7)}::text[], ${$(8)}::text[])
             AS x(t, p, seq, kind, sub, att, job, jws)
          WHERE ${guard}
         RETURNING 1
       ), heads_advanced AS (
         UPDATE receipt_heads h SET seq = y.seq, jws_sha256 = y.sha
           FROM unnest(${$(9)}::text[], ${$(12)}::text[], ${$(13)}::bigint[], ${$(14)}::text[]) AS y(t, p, seq, sha)
          WHERE h.tenant_id = y.t AND h.partner_id = y.p AND ${guard}
         RETURNING 1
       )`;
};

/**
 * Signs the receipts of newly created records (signReceipts), then writes them and advances the heads
 * in one statement.
 */
export async function issueReceipts(tx: PoolClient, issuing: ReceiptIssuing, heads: LockedHeads, subjects: ReceiptSubject[]): Promise<IssuedReceipt[]> {
  if (subjects.length === 0) return [];
  const signed = await signReceipts(tx, issuing, heads, subjects);
  await tx.query(prepared(`WITH ${RECEIPTS_WRITE(0)} SELECT (SELECT count(*) FROM receipts_written) AS n`, signed.params));
  return signed.issued;
}

/** The receipt a job's record got (a redelivered job answers it), or '' when it has none. */
export async function receiptOfJob(db: Queryable, jobId: string, kind?: ReceiptKind): Promise<string> {
  const r = kind
    ? await db.query<{ jws: string }>(prepared('SELECT jws FROM receipts WHERE job_id = $1 AND kind = $2', [jobId, kind]))
    : await db.query<{ jws: string }>(prepared('SELECT jws FROM receipts WHERE job_id = $1', [jobId]));
  return r.rows[0]?.jws ?? '';
}

/**
 * The receipt of an attachment just promoted in this transaction (after lockHeads for its owner).
 * The receipt names the submission's externalRef.
 */
export async function issueAttachmentReceipt(
  tx: PoolClient,
  issuing: ReceiptIssuing,
  heads: LockedHeads,
  a: {
    tenantId: string;
    partnerId: string;
    jobId: string;
    receivedAt: string;
    attachment: { attachmentId: string; submissionId: string; fileName: string; contentType: string; sizeBytes: number; sha256: string };
  },
): Promise<string> {
  const sub = await tx.query<{ external_ref: string }>(prepared('SELECT external_ref FROM submissions WHERE submission_id = $1', [a.attachment.submissionId]));
  const { submissionId, ...attachment } = a.attachment;
  const [issued] = await issueReceipts(tx, issuing, heads, [
    {
      kind: RECEIPT_KINDS.attachment,
      tenantId: a.tenantId,
      partnerId: a.partnerId,
      submissionId,
      jobId: a.jobId,
      externalRef: sub.rows[0]?.external_ref ?? '',
      receivedAt: a.receivedAt,
      attachment,
    },
  ]);
  return issued!.jws;
}
