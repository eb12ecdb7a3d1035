// UAT sandbox directives in a submission's externalRef (README.md, "Sandbox directives (UAT only)"):
// `sandbox:delay=<1..60>`, `sandbox:fail=<code>` and `sandbox:delay=<n>;fail=<code>`. The gateway
// refuses any other value that looks like a directive; the worker obeys the parsed directive.
import { ERROR_CODES, type ErrorCode } from './errors.js';

/** Codes a job can end with, so the codes `sandbox:fail=<code>` may force. Status and retryable come from ERROR_CODES. */
export const JOB_FAILURE_CODES = ['unknown_product', 'validation_error', 'not_found', 'conflict', 'unavailable', 'internal'] as const satisfies readonly ErrorCode[];
export type JobFailureCode = (typeof JOB_FAILURE_CODES)[number];

export interface SandboxDirective {
  /** Seconds the job takes before it settles (1..60). */
  delayS?: number;
  /** The code the job fails with, with the error table's retryable. */
  fail?: { code: JobFailureCode; retryable: boolean };
}

export const SANDBOX_GRAMMAR = `sandbox:delay=<1..60>, sandbox:fail=<code> or sandbox:delay=<1..60>;fail=<code>, where <code> is one of ${JOB_FAILURE_CODES.join(', ')}`;

/** True when the value is meant as a directive: it begins with `sandbox:` in any case, surrounding spaces ignored. */
export function looksLikeSandbox(externalRef: string): boolean {
  return externalRef.trim().toLowerCase().startsWith('sandbox:');
}

const DIRECTIVE = /^sandbox:(?:delay=([1-9]\d?)(?:;fail=([a-z_]+))?|fail=([a-z_]+))$/;

/**
 * The directive an externalRef carries: undefined for an ordinary reference, null for a value that
 * looks like a directive but is not a valid one (the gateway answers 400 for it).
 */
export function parseSandbox(externalRef: string): SandboxDirective | null | undefined {
  if (!looksLikeSandbox(externalRef)) return undefined;
  const m = DIRECTIVE.exec(externalRef);
  if (!m) return null;
  const directive: SandboxDirective = {};
  if (m[1] !== undefined) {
    const s = Number(m[1]);
    if (s < 1 || s > 60) return null;
    directive.delayS = s;
  }
  const code = m[2] ?? m[3];
  if (code !== undefined) {
    if (!(JOB_FAILURE_CODES as readonly string[]).includes(code)) return null;
    const c = code as JobFailureCode;
    directive.fail = { code: c, retryable: ERROR_CODES[c].retryable };
  }
  return directive;
}
