// UAT sandbox directives in a submission's externalRef (README.md, "Sandbox directives (UAT only)"):
// `sandbox:delay=<1..60>`, `sandbox:fail=<code>`, `sandbox:hold=<1..60>` and any of them combined with
// `;` in any order, each at most once (`sandbox:hold=5;delay=2;fail=conflict`). The gateway refuses
// any other value that looks like a directive; the worker obeys the parsed directive.
import { ERROR_CODES, type ErrorCode } from './errors.js';

/** Codes a job can end with, so the codes `sandbox:fail=<code>` may force. Status and retryable come from ERROR_CODES. */
export const JOB_FAILURE_CODES = ['unknown_product', 'requirements_not_met', 'validation_error', 'not_found', 'conflict', 'unavailable', 'internal'] as const satisfies readonly ErrorCode[];
export type JobFailureCode = (typeof JOB_FAILURE_CODES)[number];

export interface SandboxDirective {
  /** Seconds the job takes before it settles (1..60). */
  delayS?: number;
  /** Seconds the job stays accepted (unclaimed) before a worker claims it (1..60), so it can be cancelled. */
  holdS?: number;
  /** The code the job fails with, with the error table's retryable. */
  fail?: { code: JobFailureCode; retryable: boolean };
}

/** The seconds `delay` and `hold` take: whole numbers in this range. */
export const SANDBOX_SECONDS = { min: 1, max: 60 } as const;

/**
 * The directives, each once in a value, in any order: what the parser accepts and what README.md's
 * sandbox table says (scripts/gen-doc-tables.mjs writes it from this list).
 */
export const SANDBOX_DIRECTIVES = [
  { key: 'delay', value: `<${SANDBOX_SECONDS.min}..${SANDBOX_SECONDS.max}>`, effect: 'the job takes that many seconds once a worker has it, then settles (succeeds, unless `fail` is given too)' },
  {
    key: 'hold',
    value: `<${SANDBOX_SECONDS.min}..${SANDBOX_SECONDS.max}>`,
    effect: 'the job stays `accepted` (unclaimed) that many seconds before a worker takes it, so it can be cancelled (`POST /v1/jobs/{id}/cancel`)',
  },
  { key: 'fail', value: '<code>', effect: 'the job fails with that error code, answered exactly as a real failure with that code: the status and `retryable` of the error table' },
] as const;
export type SandboxDirectiveKey = (typeof SANDBOX_DIRECTIVES)[number]['key'];

/** A value combining every directive, as the docs show it. */
export const SANDBOX_EXAMPLE = 'sandbox:hold=5;delay=2;fail=conflict';

const forms = SANDBOX_DIRECTIVES.map((d) => `sandbox:${d.key}=${d.value}`);
export const SANDBOX_GRAMMAR = `${forms.slice(0, -1).join(', ')} or ${forms.at(-1)}, or several of them joined by ; (each once, any order, e.g. ${SANDBOX_EXAMPLE}), where <code> is one of ${JOB_FAILURE_CODES.join(', ')}`;

/** True when the value is meant as a directive: it begins with `sandbox:` in any case, surrounding spaces ignored. */
export function looksLikeSandbox(externalRef: string): boolean {
  return externalRef.trim().toLowerCase().startsWith('sandbox:');
}

/** One directive, `key=value`, built from SANDBOX_DIRECTIVES (test/regex-safety.test.ts checks it as built). */
export const SANDBOX_PART = new RegExp(`^(${SANDBOX_DIRECTIVES.map((d) => d.key).join('|')})=([a-z0-9_]+)$`);
const SECONDS = /^[1-9]\d?$/;

/** What is wrong with a reference that looks like a sandbox directive and is not one (else undefined). */
export function sandboxIssue(externalRef: string): string | undefined {
  return parseSandbox(externalRef) === null ? `is not a valid sandbox directive; expected ${SANDBOX_GRAMMAR}` : undefined;
}

/**
 * The directive an externalRef carries: undefined for an ordinary reference, null for a value that
 * looks like a directive but is not a valid one (the gateway answers 400 for it).
 */
export function parseSandbox(externalRef: string): SandboxDirective | null | undefined {
  if (!looksLikeSandbox(externalRef)) return undefined;
  if (!externalRef.startsWith('sandbox:')) return null;
  const directive: SandboxDirective = {};
  const seen = new Set<string>();
  for (const part of externalRef.slice('sandbox:'.length).split(';')) {
    const m = SANDBOX_PART.exec(part);
    if (!m || seen.has(m[1]!)) return null;
    const [, key, value] = m as unknown as [string, SandboxDirectiveKey, string];
    seen.add(key);
    if (key === 'fail') {
      if (!(JOB_FAILURE_CODES as readonly string[]).includes(value)) return null;
      const c = value as JobFailureCode;
      directive.fail = { code: c, retryable: ERROR_CODES[c].retryable };
      continue;
    }
    if (!SECONDS.test(value)) return null;
    const n = Number(value);
    if (n < SANDBOX_SECONDS.min || n > SANDBOX_SECONDS.max) return null;
    if (key === 'delay') directive.delayS = n;
    else directive.holdS = n;
  }
  return directive;
}

/** The seconds a job's payload asks to stay unclaimed (sandbox:hold), when it asks; 0 otherwise. */
export function sandboxHoldS(payload: unknown): number {
  const ref = (payload as { externalRef?: unknown } | null)?.externalRef;
  if (typeof ref !== 'string') return 0;
  return parseSandbox(ref)?.holdS ?? 0;
}
