// The one rule for text a request carries, applied where every route's input is read: each string
// of a JSON body (values and member names, at any depth; checked in the scan of the body's text,
// http/json-scan.ts) and each query parameter name and value (middleware/pipeline.ts). No route documents control characters, so a string with NUL,
// another C0 control character or DEL, or an unpaired UTF-16 surrogate (which has no UTF-8 form
// and no place in the database) is a 400 validation_error naming the field, before any route sees it.
import { DomainError, type ErrorDetail } from '@partner/shared/domain/errors';

// C0 controls, DEL and lone surrogates (under the u flag a paired surrogate is one code point, not Cs).
// Finding control characters is the point here.
/* eslint-disable no-control-regex */
const UNSAFE = /[\u0000-\u001f\u007f]|\p{Cs}/u;
const CONTROL = /[\u0000-\u001f\u007f]/;
/* eslint-enable no-control-regex */

export const CONTROL_ISSUE = 'must not contain control characters (U+0000–U+001F, U+007F)';
export const SURROGATE_ISSUE = 'must not contain unpaired UTF-16 surrogates';

/** What is wrong with the text, or undefined when it may be used as it is. */
export function textIssue(s: string): string | undefined {
  if (!UNSAFE.test(s)) return undefined;
  return CONTROL.test(s) ? CONTROL_ISSUE : SURROGATE_ISSUE;
}

/** Fields a text error names at most. */
export const MAX_TEXT_DETAILS = 20;

/** Throws validation_error naming each bad query parameter (name or value). */
export function checkQueryText(querystring: string): void {
  const details: ErrorDetail[] = [];
  for (const [name, value] of new URLSearchParams(querystring)) {
    if (details.length >= MAX_TEXT_DETAILS) break;
    const nameIssue = textIssue(name);
    if (nameIssue) details.push({ field: JSON.stringify(name), issue: `(a parameter name) ${nameIssue}` });
    else {
      const issue = textIssue(value);
      if (issue) details.push({ field: name, issue });
    }
  }
  if (details.length > 0) throw new DomainError('validation_error', 'invalid query parameters', { details });
}
