// Clearance (API.md "Clearance (duplicate risks across partners)"): the identity of a risk, the
// normalized legal name it rests on, and the clearance and withdrawal a submission shows. The
// decision itself is made by the submission service (services/submission/src/clearance.ts) in the
// transaction that creates the submission.
import { createHash } from 'node:crypto';
import type { Applicant } from './applicant.js';

export const CLEARANCE_STATUSES = ['cleared', 'duplicate', 'blocked', 'review'] as const;
export type ClearanceStatus = (typeof CLEARANCE_STATUSES)[number];
export const CLEARANCE_BASES = ['tax_id', 'name_address', 'name_only'] as const;
export type ClearanceBasis = (typeof CLEARANCE_BASES)[number];
export const isClearanceStatus = (s: string): s is ClearanceStatus => (CLEARANCE_STATUSES as readonly string[]).includes(s);

/** The statuses of a submission (the list's `status` filter, the OpenAPI enum). */
export const SUBMISSION_STATUS_NAMES = ['submitted', 'withdrawn', 'bound'] as const;

export const WITHDRAWAL_REASONS = ['duplicate', 'applicant_withdrew', 'entered_in_error', 'other'] as const;
export type WithdrawalReason = (typeof WITHDRAWAL_REASONS)[number];
export const WITHDRAWAL_NOTE_MAX = 500;

/** Effective dates at most this many days apart are the same risk. */
export const SAME_RISK_DAYS = 60;

/**
 * Two submissions of one partner with effective dates at most this many days apart can both fall
 * within SAME_RISK_DAYS of one earlier submission of another partner: each decision about the second
 * tells the partner something more about that submission's date. So after one decided submission of
 * a risk, a partner's further submissions of it within this many days of it are `review` (a person
 * decides), whatever the matches: a partner learns at most whether a date it chose lies within 60
 * days of another's, never where within those 121 days (API.md: no date of the earlier submission
 * reaches the later partner). Its own live submissions within SAME_RISK_DAYS are still `duplicate`.
 */
export const PROBE_WINDOW_DAYS = 2 * SAME_RISK_DAYS;

/** Why a submission's clearance was decided as it was, for operators only (never shown to partners). */
export const CLEARANCE_REASONS = ['repeated_submission'] as const;
export type ClearanceReason = (typeof CLEARANCE_REASONS)[number];

/** Legal forms dropped from the end of a name (after punctuation is gone, so `L.L.C.` is `llc`). */
export const LEGAL_FORMS: ReadonlySet<string> = new Set([
  'llc', 'inc', 'incorporated', 'corp', 'corporation', 'co', 'company', 'ltd', 'limited', 'lp', 'llp', 'plc',
]);

/**
 * The legal name as clearance compares it:
 *  1. Unicode NFKC (full-width and compatibility forms become their plain letters);
 *  2. case-folded (upper- then lower-cased, so `ß` and `SS` fold alike);
 *  3. punctuation: full stops and apostrophes are deleted, joining what they separate — the dotted-forms
 *     rule: `L.L.C.` is `llc`, `Inc.` is `inc`, `O'Brien` is `obrien`; every other punctuation mark or
 *     symbol (`,` `&` `-` `/` `(` …) becomes a space;
 *  4. white space collapsed to one space and trimmed;
 *  5. trailing legal forms dropped, repeatedly (`Acme Holdings Co Ltd` → `acme holdings`), but never the
 *     whole name (`Company` stays `company`).
 * `Acme, LLC`, `ACME llc.` and ` acme  L.L.C ` are all `acme`; `Acme Holdings` and `Acme Holding` differ.
 */
export function normalizeLegalName(name: string): string {
  const folded = name.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
  const words = folded
    .replace(/[.'\u2019\u02bc]/gu, '')
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .split(/\s+/u)
    .filter((w) => w !== '');
  while (words.length > 1 && LEGAL_FORMS.has(words[words.length - 1]!)) words.pop();
  return words.join(' ');
}

/** What a submission's risk is compared on. */
export interface RiskKey {
  tenantId: string;
  productId: string;
  /** 9 digits, or undefined. */
  taxId?: string;
  /** normalizeLegalName of the applicant's legal name. */
  name: string;
  country?: string;
  postalCode?: string;
  /** YYYY-MM-DD. */
  effectiveDate: string;
}

/** Postal codes compare without case and white space (`sw1a 1aa` = `SW1A1AA`). */
const postal = (p: string | undefined): string | undefined => (p === undefined ? undefined : p.normalize('NFKC').toUpperCase().replace(/\s+/gu, ''));

export function riskKeyOf(tenantId: string, productId: string, effectiveDate: string, applicant: Applicant): RiskKey {
  return {
    tenantId,
    productId: productId.toLowerCase(),
    ...(applicant.taxId ? { taxId: applicant.taxId } : {}),
    name: normalizeLegalName(applicant.legalName),
    ...(applicant.address ? { country: applicant.address.country, postalCode: postal(applicant.address.postalCode) } : {}),
    effectiveDate,
  };
}

const dayNumber = (date: string): number => Math.round(Date.parse(`${date}T00:00:00Z`) / 86_400_000);

/**
 * The basis on which two submissions are the same risk, or undefined when they are not: the same
 * tenant and product, effective dates within SAME_RISK_DAYS; then the same taxId (`tax_id`); else the
 * same normalized name and the same country and postal code (`name_address`); else the same normalized
 * name (`name_only`).
 */
export function sameRisk(a: RiskKey, b: RiskKey): ClearanceBasis | undefined {
  if (a.tenantId !== b.tenantId || a.productId !== b.productId) return undefined;
  if (Math.abs(dayNumber(a.effectiveDate) - dayNumber(b.effectiveDate)) > SAME_RISK_DAYS) return undefined;
  if (a.taxId !== undefined && a.taxId === b.taxId) return 'tax_id';
  if (a.name !== b.name) return undefined;
  if (a.country !== undefined && a.country === b.country && a.postalCode === b.postalCode) return 'name_address';
  return 'name_only';
}

/**
 * The same risk apart from the dates: the same tenant and product, and the same taxId or the same
 * normalized name (what a partner's earlier submission must share with a new one to count as a probe
 * of it, PROBE_WINDOW_DAYS).
 */
export function sameRiskIdentity(a: RiskKey, b: RiskKey): boolean {
  if (a.tenantId !== b.tenantId || a.productId !== b.productId) return false;
  return (a.taxId !== undefined && a.taxId === b.taxId) || a.name === b.name;
}

/** Whole days between two YYYY-MM-DD dates. */
export const daysBetween = (a: string, b: string): number => Math.abs(dayNumber(a) - dayNumber(b));

/**
 * The basis a `review` for a repeated submission shows: the strongest the submission's own risk key
 * can be matched on (tax_id with a FEIN, name_address with an address, else name_only). It depends
 * on the submission alone, never on what matched: the partner learns nothing from it.
 */
export function strongestBasis(k: RiskKey): ClearanceBasis {
  return k.taxId !== undefined ? 'tax_id' : k.country !== undefined ? 'name_address' : 'name_only';
}

/**
 * The transaction-scoped advisory locks a submission's risk takes (pg_advisory_xact_lock, signed
 * 64-bit): one on its taxId and one on its normalized name, each within its tenant and product. Any
 * two submissions that sameRisk can match share at least one of them.
 */
export function riskLocks(k: RiskKey): bigint[] {
  const lock = (...parts: string[]) => createHash('sha256').update(JSON.stringify(['clearance', k.tenantId, k.productId, ...parts])).digest().readBigInt64BE(0);
  return [...(k.taxId !== undefined ? [lock('tax', k.taxId)] : []), lock('name', k.name)];
}

/**
 * The lock of every change to an existing submission's clearance within a tenant and product
 * (withdraw and its release, an operator's decision), taken before the risk locks. A release or a
 * decision checks the matches of *another* submission than the one whose risk locks it holds, so two
 * such changes with disjoint risk locks could each see the other's target still blocked and clear
 * both; under this lock they run one after the other. Creates never take it: their decision does not
 * depend on the status of the matches they find, only on their existence.
 */
export function clearanceChangeLock(tenantId: string, productId: string): bigint {
  return createHash('sha256').update(JSON.stringify(['clearance-change', tenantId, productId.toLowerCase()])).digest().readBigInt64BE(0);
}

/** Locks of several keys, each once, in ascending order: every transaction takes them in this order, so none deadlock. */
export function sortedRiskLocks(keys: RiskKey[]): string[] {
  const all = [...new Set(keys.flatMap(riskLocks))];
  all.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return all.map(String);
}

/** A submission's clearance as the API shows it. */
export interface ClearanceView {
  status: ClearanceStatus;
  basis: ClearanceBasis | null;
  /** Only for `duplicate`: the partner's own earlier submission. */
  duplicateOf?: string;
  decidedAt: string;
}

export interface WithdrawalView {
  reason: WithdrawalReason;
  note?: string;
  withdrawnAt: string;
}

/** The gRPC forms (proto3: '' for absent strings). */
export interface ClearanceMessage {
  status?: string;
  basis?: string;
  duplicateOf?: string;
  decidedAt?: string;
}
export interface WithdrawalMessage {
  reason?: string;
  note?: string;
  withdrawnAt?: string;
}

export function clearanceFromMessage(m: ClearanceMessage | null | undefined): ClearanceView {
  return {
    status: (m?.status || 'cleared') as ClearanceStatus,
    basis: (m?.basis || null) as ClearanceBasis | null,
    ...(m?.duplicateOf ? { duplicateOf: m.duplicateOf } : {}),
    decidedAt: m?.decidedAt ?? '',
  };
}

/** `{withdrawal}` for a withdrawn submission, `{}` otherwise (the field is absent until then). */
export function withdrawalFieldFromMessage(m: WithdrawalMessage | null | undefined): { withdrawal?: WithdrawalView } {
  if (!m?.reason) return {};
  return { withdrawal: { reason: m.reason as WithdrawalReason, ...(m.note ? { note: m.note } : {}), withdrawnAt: m.withdrawnAt ?? '' } };
}
