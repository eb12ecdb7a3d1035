// A product's requirements (API.md "Products and their requirements"): what an operator's file may
// say, how it is checked (every bad part named, nothing half-applied) and its normalized form, which
// the policy service stores, the gateway publishes and the worker and submission service enforce.
//
//   {applicant: {required: ["taxId", "address"]}, effectiveDate: {minDaysAhead, maxDaysAhead},
//    attachments: [{documentType, min, max, mediaTypes: [...], maxBytes}],
//    risk: <JSON Schema of the create body's `risk` object>}                      (all parts optional)

import { Ajv2020 } from 'ajv/dist/2020.js';
import { DOCUMENT_TYPES, isDocumentType } from './attachments.js';

/** Applicant fields a product may require (optional in the generic schema). */
export const REQUIRABLE_APPLICANT_FIELDS = ['taxId', 'address'] as const;
export type RequirableApplicantField = (typeof REQUIRABLE_APPLICANT_FIELDS)[number];

/** Longest day window a product may ask for (about 10 years). */
export const MAX_DAYS_AHEAD = 3660;
/** Most attachment rules one product may have. */
export const MAX_ATTACHMENT_RULES = 50;

export interface AttachmentRule {
  documentType: string;
  /** Attachments of this type a submission needs (0: none). */
  min: number;
  /** At most this many (null: no limit). */
  max: number | null;
  /** Allowed media types (empty: any the generic rules allow). */
  mediaTypes: string[];
  /** Largest file in bytes (null: the generic limit). */
  maxBytes: number | null;
}

export interface DayWindow {
  /** The effective date is at least this many days after today (UTC); null: no lower bound. */
  minDaysAhead: number | null;
  /** At most this many days after today (UTC); null: no upper bound. */
  maxDaysAhead: number | null;
}

/** The normalized requirements document. */
export interface Requirements {
  applicant: { required: RequirableApplicantField[] };
  effectiveDate: DayWindow | null;
  attachments: AttachmentRule[];
  /**
   * The JSON Schema (2020-12, an object schema) of the create body's `risk` (API.md "Risk data"): the
   * published submissionSchema then requires `risk` and embeds it. Null: `risk` is optional and free.
   */
  risk?: Record<string, unknown> | null;
}

export const NO_REQUIREMENTS: Requirements = { applicant: { required: [] }, effectiveDate: null, attachments: [] };

/** Largest risk schema, as JSON text. */
export const MAX_RISK_SCHEMA_BYTES = 64 * 1024;
/**
 * Keywords a risk schema may not hold anywhere: it is embedded in a larger document and compiled once
 * per requirements version, so it must not name itself or point outside (`$id`, `$ref`, …).
 */
const SELF_CONTAINED = ['$id', '$schema', '$ref', '$dynamicRef', '$anchor', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor'];

/** The problems of a risk schema: not an object schema, not self-contained, or not compilable by Ajv 2020 in strict mode. */
export function riskSchemaProblems(risk: unknown): { path: string; issue: string }[] {
  if (!isObject(risk)) return [{ path: 'risk', issue: 'must be a JSON Schema object' }];
  if (risk.type !== 'object') return [{ path: 'risk.type', issue: 'must be "object": the schema describes the create body\'s risk object' }];
  if (JSON.stringify(risk).length > MAX_RISK_SCHEMA_BYTES) return [{ path: 'risk', issue: `must be at most ${MAX_RISK_SCHEMA_BYTES} bytes of JSON` }];
  const problems: { path: string; issue: string }[] = [];
  const walk = (v: unknown, at: string): void => {
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${at}[${i}]`));
    if (!isObject(v)) return;
    for (const [k, x] of Object.entries(v)) {
      if (SELF_CONTAINED.includes(k)) problems.push({ path: `${at}.${k}`, issue: `is not allowed: a risk schema is embedded in the submissionSchema and must be self-contained (no ${SELF_CONTAINED.join(', ')})` });
      else walk(x, `${at}.${k}`);
    }
  };
  walk(risk, 'risk');
  if (problems.length > 0) return problems;
  try {
    // Ajv 2020 in strict mode, as the server and a partner compile the published schema.
    new Ajv2020({ strict: true, allErrors: true }).compile(risk);
  } catch (err) {
    return [{ path: 'risk', issue: `is not a schema Ajv 2020 compiles in strict mode: ${(err as Error).message}` }];
  }
  return [];
}

/** A requirements file that breaks the rules: `problems` names each bad part (`attachments[1].max`). */
export class RequirementsError extends Error {
  constructor(readonly problems: { path: string; issue: string }[]) {
    super(`invalid requirements: ${problems.map((p) => `${p.path} ${p.issue}`).join('; ')}`);
  }
}

/** RFC 6838 type/subtype (restricted-name), lower case: `application/pdf`. */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;
/** The document types attachments use (the gateway's multipart field). */
const DOCUMENT_TYPE = /^[a-z][a-z0-9_]{0,63}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/**
 * Checks a requirements document (parsed JSON) and returns its normalized form; throws
 * RequirementsError naming every bad part: an unknown key or applicant field, a negative or inverted
 * day window, min > max, a media type that is not `type/subtype`, a repeated document type.
 */
export function parseRequirements(doc: unknown): Requirements {
  const problems: { path: string; issue: string }[] = [];
  const bad = (path: string, issue: string) => problems.push({ path, issue });
  const unknownKeys = (o: Record<string, unknown>, known: string[], at: string) => {
    for (const k of Object.keys(o)) if (!known.includes(k)) bad(at ? `${at}.${k}` : k, `is not a known part (expected one of: ${known.join(', ')})`);
  };
  const out: Requirements = { applicant: { required: [] }, effectiveDate: null, attachments: [] };
  if (!isObject(doc)) throw new RequirementsError([{ path: '(document)', issue: 'must be a JSON object' }]);
  unknownKeys(doc, ['applicant', 'effectiveDate', 'attachments', 'risk'], '');

  if (doc.applicant !== undefined) {
    const a = doc.applicant;
    if (!isObject(a)) bad('applicant', 'must be an object');
    else {
      unknownKeys(a, ['required'], 'applicant');
      if (a.required !== undefined) {
        if (!Array.isArray(a.required)) bad('applicant.required', 'must be an array of applicant field names');
        else {
          a.required.forEach((f, i) => {
            if (typeof f !== 'string' || !(REQUIRABLE_APPLICANT_FIELDS as readonly string[]).includes(f)) {
              bad(`applicant.required[${i}]`, `is not an applicant field a product may require (${JSON.stringify(f)}; expected one of: ${REQUIRABLE_APPLICANT_FIELDS.join(', ')})`);
            } else if (out.applicant.required.includes(f as RequirableApplicantField)) bad(`applicant.required[${i}]`, `repeats ${f}`);
            else out.applicant.required.push(f as RequirableApplicantField);
          });
        }
      }
    }
  }

  if (doc.effectiveDate !== undefined && doc.effectiveDate !== null) {
    const w = doc.effectiveDate;
    if (!isObject(w)) bad('effectiveDate', 'must be an object {minDaysAhead, maxDaysAhead}');
    else {
      unknownKeys(w, ['minDaysAhead', 'maxDaysAhead'], 'effectiveDate');
      const day = (k: 'minDaysAhead' | 'maxDaysAhead'): number | null => {
        const v = w[k];
        if (v === undefined || v === null) return null;
        if (!isCount(v)) bad(`effectiveDate.${k}`, 'must be a whole number of days');
        else if (v < 0) bad(`effectiveDate.${k}`, 'must not be negative');
        else if (v > MAX_DAYS_AHEAD) bad(`effectiveDate.${k}`, `must be at most ${MAX_DAYS_AHEAD}`);
        else return v;
        return null;
      };
      const window = { minDaysAhead: day('minDaysAhead'), maxDaysAhead: day('maxDaysAhead') };
      if (window.minDaysAhead !== null && window.maxDaysAhead !== null && window.minDaysAhead > window.maxDaysAhead) {
        bad('effectiveDate', `is an inverted window: minDaysAhead (${window.minDaysAhead}) is greater than maxDaysAhead (${window.maxDaysAhead})`);
      }
      if (window.minDaysAhead !== null || window.maxDaysAhead !== null) out.effectiveDate = window;
    }
  }

  if (doc.attachments !== undefined) {
    if (!Array.isArray(doc.attachments)) bad('attachments', 'must be an array of attachment rules');
    else {
      if (doc.attachments.length > MAX_ATTACHMENT_RULES) bad('attachments', `may hold at most ${MAX_ATTACHMENT_RULES} rules`);
      const seen = new Set<string>();
      doc.attachments.forEach((r, i) => {
        const at = `attachments[${i}]`;
        if (!isObject(r)) return void bad(at, 'must be an object');
        unknownKeys(r, ['documentType', 'min', 'max', 'mediaTypes', 'maxBytes'], at);
        const rule: AttachmentRule = { documentType: '', min: 0, max: null, mediaTypes: [], maxBytes: null };
        if (typeof r.documentType !== 'string' || !DOCUMENT_TYPE.test(r.documentType)) bad(`${at}.documentType`, 'must be a document type: lower-case letters, digits and _ (e.g. loss_run)');
        // A type partners cannot upload would stay due for ever.
        else if (!isDocumentType(r.documentType)) bad(`${at}.documentType`, `is not a document type an upload can have (${DOCUMENT_TYPES.join(', ')})`);
        else if (seen.has(r.documentType)) bad(`${at}.documentType`, `repeats ${r.documentType}`);
        else seen.add((rule.documentType = r.documentType));
        for (const k of ['min', 'max'] as const) {
          const v = r[k];
          if (v === undefined || v === null) continue;
          if (!isCount(v) || v < 0 || v > 1000) bad(`${at}.${k}`, 'must be a whole number from 0 to 1000');
          else if (k === 'min') rule.min = v;
          else rule.max = v;
        }
        if (rule.max !== null && rule.min > rule.max) bad(`${at}`, `has min (${rule.min}) greater than max (${rule.max})`);
        if (r.mediaTypes !== undefined) {
          if (!Array.isArray(r.mediaTypes)) bad(`${at}.mediaTypes`, 'must be an array of media types');
          else {
            r.mediaTypes.forEach((m, j) => {
              if (typeof m !== 'string' || !MEDIA_TYPE.test(m)) bad(`${at}.mediaTypes[${j}]`, `is not a media type of the form type/subtype in lower case (${JSON.stringify(m)})`);
              else if (!rule.mediaTypes.includes(m)) rule.mediaTypes.push(m);
            });
          }
        }
        if (r.maxBytes !== undefined && r.maxBytes !== null) {
          if (!isCount(r.maxBytes) || r.maxBytes < 1) bad(`${at}.maxBytes`, 'must be a whole number of bytes, at least 1');
          else rule.maxBytes = r.maxBytes;
        }
        out.attachments.push(rule);
      });
    }
  }
  if (doc.risk !== undefined && doc.risk !== null) {
    const found = riskSchemaProblems(doc.risk);
    if (found.length > 0) problems.push(...found);
    else out.risk = structuredClone(doc.risk) as Record<string, unknown>;
  }
  if (problems.length > 0) throw new RequirementsError(problems);
  return out;
}

/** The stored form back into Requirements (trusted: it was parsed before it was stored). */
export function requirementsFromJson(json: string | null | undefined): Requirements {
  if (!json) return NO_REQUIREMENTS;
  const r = JSON.parse(json) as Partial<Requirements>;
  return {
    applicant: { required: r.applicant?.required ?? [] },
    effectiveDate: r.effectiveDate ?? null,
    attachments: r.attachments ?? [],
    ...(r.risk ? { risk: r.risk } : {}),
  };
}

/** The attachment types whose `min` is not met by these counts of active attachments per type. */
export function currentlyDue(rules: readonly Pick<AttachmentRule, 'documentType' | 'min'>[], counts: Readonly<Record<string, number>>): string[] {
  return rules.filter((r) => r.min > 0 && (counts[r.documentType] ?? 0) < r.min).map((r) => `attachments.${r.documentType}`);
}
