// Signed receipts (docs/partners.md "Proving what you sent"): listing them (client.receipts: GET /v1/receipts,
// GET /v1/submissions/{id}/receipts) and verifying them offline with jose, against a copy of
// /.well-known/receipt-keys.json: one receipt's signature and claims (verifyReceipt), and a chain of
// them (verifyChain: from seq 1 or a declared start, seq without gaps, each prev the SHA-256 of the
// JWS before it).
import { createHash } from 'node:crypto';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import type { Connection } from './connection.js';
import type { CallOptions } from './options.js';
import { paginate, seg } from './transport.js';
import type { Page } from './types.js';
import type { ListReceiptsQuery, Receipt } from './wire-types.js';

export const RECEIPT_TYP = 'receipt+jws';

/** A receipt as the lists show it (the document's `Receipt`, generated: wire-types.ts). */
export type ReceiptItem = Receipt;

/** GET /v1/receipts's query: `afterSeq` only the receipts after that seq (e.g. the last one you stored). */
export type ReceiptListParams = ListReceiptsQuery;

/**
 * The signed claims of a receipt (docs/api.md "Signed receipts"). Written here: the document describes
 * the payload of the JWS in prose only (its `ReceiptJws`).
 */
export interface ReceiptClaims {
  iss: string;
  tenant: string;
  partnerId: string;
  seq: number;
  /** Lowercase hex SHA-256 of the previous receipt's compact JWS; null for seq 1. */
  prev: string | null;
  kind: 'submission.received' | 'attachment.received' | 'bind.received' | 'policy.issued';
  submissionId: string;
  jobId: string;
  externalRef: string;
  receivedAt: string;
  iat: number;
  /** submission.received: the RFC 8785 hash of the create body as sent. */
  content?: { canon: 'RFC8785'; sha256: string | null };
  /** attachment.received: the file. */
  attachment?: { attachmentId: string; fileName: string; contentType: string; sizeBytes: number; sha256: string };
  /** bind.received: the quote bound and the hash of the offer JWS accepted. */
  quoteId?: string;
  offerSha256?: string;
  /** policy.issued: the policy and its documents' hashes. */
  policyId?: string;
  policyNumber?: string;
  documents?: { documentId: string; sha256: string }[];
}

/** Every receipt kind, and the claims each must carry beside the common ones. */
const KIND_CLAIMS: Record<ReceiptClaims['kind'], (c: ReceiptClaims) => boolean> = {
  'submission.received': (c) => typeof c.content === 'object' && c.content !== null,
  'attachment.received': (c) => typeof c.attachment === 'object' && c.attachment !== null,
  'bind.received': (c) => typeof c.quoteId === 'string' && typeof c.offerSha256 === 'string' && /^[0-9a-f]{64}$/.test(c.offerSha256),
  'policy.issued': (c) =>
    typeof c.policyId === 'string' &&
    typeof c.policyNumber === 'string' &&
    Array.isArray(c.documents) &&
    c.documents.every((d) => typeof d?.documentId === 'string' && /^[0-9a-f]{64}$/.test(String(d?.sha256))),
};

/**
 * A receipt key as published: a JWK with the time range it signed. Typed by jose's JWK, which
 * verifyReceipt hands the set to (the document's `ReceiptKeySet` is the same keys, fewer members named).
 */
export type ReceiptKey = JSONWebKeySet['keys'][number] & { signedFrom?: string; signedUntil?: string };
export interface ReceiptKeySet {
  keys: ReceiptKey[];
}

/**
 * A receipt or a chain that does not verify; `seq` names the receipt (or the link) at fault when known,
 * `missing` the receipts missing from a chain (seq fromSeq to toSeq) when that is the fault.
 */
export class ReceiptVerificationError extends Error {
  constructor(
    message: string,
    readonly seq?: number,
    readonly missing?: { fromSeq: number; toSeq: number },
  ) {
    super(message);
    this.name = 'ReceiptVerificationError';
  }
}

/** Lowercase hex SHA-256 of a compact JWS: what the next receipt's prev must be. */
export const receiptHash = (jws: string): string => createHash('sha256').update(jws, 'ascii').digest('hex');

/**
 * Verifies one receipt offline: its ES256 signature by a key of jwks (by kid), its typ, its claims'
 * shape, and that its key was signing at its iat. Resolves with the claims.
 */
export async function verifyReceipt(jws: string, jwks: ReceiptKeySet): Promise<ReceiptClaims> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    throw new ReceiptVerificationError('not a compact JWS');
  }
  if (header.typ !== RECEIPT_TYP) throw new ReceiptVerificationError(`typ is ${String(header.typ)}, not ${RECEIPT_TYP}`);
  const key = jwks.keys.find((k) => k.kid === header.kid);
  if (!key) throw new ReceiptVerificationError(`no key ${String(header.kid)} in the key set (fetch /.well-known/receipt-keys.json again)`);
  let payload: Uint8Array;
  try {
    ({ payload } = await compactVerify(jws, createLocalJWKSet(jwks as JSONWebKeySet), { algorithms: ['ES256'] }));
  } catch (err) {
    throw new ReceiptVerificationError(`the signature does not verify (${(err as Error).message})`);
  }
  const claims = JSON.parse(new TextDecoder().decode(payload)) as ReceiptClaims;
  if (!Number.isSafeInteger(claims.seq) || claims.seq < 1) throw new ReceiptVerificationError('seq is not a positive integer');
  if (claims.seq === 1 ? claims.prev !== null : !/^[0-9a-f]{64}$/.test(String(claims.prev))) {
    throw new ReceiptVerificationError(`prev is malformed for seq ${claims.seq}`, claims.seq);
  }
  const kindCheck = Object.hasOwn(KIND_CLAIMS, claims.kind) ? KIND_CLAIMS[claims.kind] : undefined;
  if (!kindCheck) throw new ReceiptVerificationError(`unknown kind ${String(claims.kind)}`, claims.seq);
  if (!kindCheck(claims)) throw new ReceiptVerificationError(`a ${claims.kind} receipt lacks the claims of its kind`, claims.seq);
  const second = (iso: string) => Math.floor(Date.parse(iso) / 1000);
  if ((key.signedFrom && claims.iat < second(key.signedFrom)) || (key.signedUntil && claims.iat > second(key.signedUntil))) {
    throw new ReceiptVerificationError(`key ${key.kid} was not signing at iat ${claims.iat}`, claims.seq);
  }
  return claims;
}

/**
 * Where a chain being verified starts when it is not the partner's whole chain: the seq of its first
 * receipt and the `prev` that receipt links to (the hash of the receipt before it, which you verified
 * earlier: the `lastHash` of that check, or receiptHash of that receipt's JWS).
 */
export interface VerifyChainOptions {
  /** The first receipt's seq (default 1: the chain must start at the partner's first receipt). */
  fromSeq?: number;
  /** The first receipt's prev, lowercase hex SHA-256; required when fromSeq is above 1. */
  prev?: string | null;
}

/** The seqs from..to: "3" or "3 to 5". */
const seqRange = (from: number, to: number): string => (from === to ? `${from}` : `${from} to ${to}`);

/**
 * Verifies a chain of receipts offline: each one (verifyReceipt), all of one partner, seq
 * consecutive, and each prev the SHA-256 of the JWS before it. The chain starts at seq 1 (prev null)
 * unless `opts` declares where it starts (`fromSeq` and the `prev` its first receipt links to): a
 * chain whose first receipts are missing is refused, naming them. Throws ReceiptVerificationError
 * naming the first broken link (`seq`; `missing` when receipts are missing); resolves with the claims
 * in order.
 */
export async function verifyChain(
  receipts: readonly (string | Pick<ReceiptItem, 'jws'>)[],
  jwks: ReceiptKeySet,
  opts: VerifyChainOptions = {},
): Promise<ReceiptClaims[]> {
  const start = chainStart(opts);
  const out: ReceiptClaims[] = [];
  let before: { jws: string; claims: ReceiptClaims } | undefined;
  for (const [i, r] of receipts.entries()) {
    const jws = typeof r === 'string' ? r : r.jws;
    let claims: ReceiptClaims;
    try {
      claims = await verifyReceipt(jws, jwks);
    } catch (err) {
      // Only a receipt that does not verify is named by its place; anything else (a malformed key set) is the caller's.
      if (!(err instanceof ReceiptVerificationError)) throw err;
      const e = err;
      throw new ReceiptVerificationError(`receipt ${i + 1} of ${receipts.length}${before ? ` (after seq ${before.claims.seq})` : ''}: ${e.message}`, e.seq ?? (before ? before.claims.seq + 1 : undefined));
    }
    if (!before) {
      if (claims.seq > start.fromSeq) {
        const missing = { fromSeq: start.fromSeq, toSeq: claims.seq - 1 };
        const hint = start.declared
          ? ''
          : ' (to check a chain that starts later, declare its start: the seq of its first receipt and the prev it links to)';
        throw new ReceiptVerificationError(
          `the chain starts at seq ${claims.seq}, not at ${start.declared ? 'the declared' : 'the first,'} seq ${start.fromSeq}: missing seq ${seqRange(missing.fromSeq, missing.toSeq)}${hint}`,
          start.fromSeq,
          missing,
        );
      }
      if (claims.seq < start.fromSeq) {
        throw new ReceiptVerificationError(`the chain starts at seq ${claims.seq}, before the declared seq ${start.fromSeq}`, claims.seq);
      }
      if (claims.prev !== start.prev) {
        throw new ReceiptVerificationError(`broken link: seq ${claims.seq}'s prev is ${String(claims.prev)}, not the declared prev ${String(start.prev)}`, claims.seq);
      }
    } else {
      if (claims.tenant !== before.claims.tenant || claims.partnerId !== before.claims.partnerId) {
        throw new ReceiptVerificationError(`seq ${claims.seq} belongs to another partner's chain`, claims.seq);
      }
      if (claims.seq !== before.claims.seq + 1) {
        if (claims.seq > before.claims.seq + 1) {
          const missing = { fromSeq: before.claims.seq + 1, toSeq: claims.seq - 1 };
          throw new ReceiptVerificationError(
            `broken link: seq ${before.claims.seq} is followed by seq ${claims.seq} (missing ${seqRange(missing.fromSeq, missing.toSeq)})`,
            missing.fromSeq,
            missing,
          );
        }
        throw new ReceiptVerificationError(`broken link: seq ${before.claims.seq} is followed by seq ${claims.seq}`, before.claims.seq + 1);
      }
      if (claims.prev !== receiptHash(before.jws)) {
        throw new ReceiptVerificationError(`broken link: seq ${claims.seq}'s prev is not the hash of seq ${before.claims.seq}`, claims.seq);
      }
    }
    out.push(claims);
    before = { jws, claims };
  }
  return out;
}

/** The declared start of a chain, checked: a programming error (TypeError) when it cannot be one. */
function chainStart(opts: VerifyChainOptions): { fromSeq: number; prev: string | null; declared: boolean } {
  if (opts.fromSeq === undefined) {
    if (opts.prev !== undefined && opts.prev !== null) throw new TypeError('verifyChain: prev needs fromSeq (the seq of the receipt that links to it)');
    return { fromSeq: 1, prev: null, declared: false };
  }
  if (!Number.isSafeInteger(opts.fromSeq) || opts.fromSeq < 1) throw new TypeError(`verifyChain: fromSeq must be a whole number from 1, got ${String(opts.fromSeq)}`);
  if (opts.fromSeq === 1) {
    if (opts.prev !== undefined && opts.prev !== null) throw new TypeError('verifyChain: seq 1 links to nothing: give no prev with fromSeq 1');
    return { fromSeq: 1, prev: null, declared: true };
  }
  const prev = typeof opts.prev === 'string' ? opts.prev.toLowerCase() : opts.prev;
  if (typeof prev !== 'string' || !/^[0-9a-f]{64}$/.test(prev)) {
    throw new TypeError(`verifyChain: fromSeq ${opts.fromSeq} needs prev, the hex SHA-256 of receipt ${opts.fromSeq - 1} (receiptHash of its JWS)`);
  }
  return { fromSeq: opts.fromSeq, prev, declared: true };
}

export class Receipts {
  constructor(private readonly connection: Connection) {}

  /** GET /v1/receipts: one page of the partner's receipt chain, in seq order. */
  async list(params: ReceiptListParams = {}, opts: CallOptions = {}): Promise<Page<ReceiptItem>> {
    return (await this.connection.transport.request<Page<ReceiptItem>>({ method: 'GET', path: '/v1/receipts', query: { ...params }, ...opts })).body;
  }

  /** The partner's whole receipt chain (or from afterSeq on), page after page. */
  iterate(params: Omit<ReceiptListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<ReceiptItem> {
    return paginate(params, (p) => this.list(p, opts));
  }

  /** GET /v1/submissions/{id}/receipts: the submission's and its attachments' receipts. */
  async ofSubmission(submissionId: string, params: Omit<ReceiptListParams, 'afterSeq'> = {}, opts: CallOptions = {}): Promise<Page<ReceiptItem>> {
    return (
      await this.connection.transport.request<Page<ReceiptItem>>({ method: 'GET', path: `/v1/submissions/${seg(submissionId)}/receipts`, query: { ...params }, ...opts })
    ).body;
  }

  /** GET /.well-known/receipt-keys.json: every receipt public key ever used (keep a copy to verify offline). */
  async keys(opts: CallOptions = {}): Promise<ReceiptKeySet> {
    return (await this.connection.transport.request<ReceiptKeySet>({ method: 'GET', path: '/.well-known/receipt-keys.json', ...opts })).body;
  }
}
