// Idempotency-Key (draft-ietf-httpapi-idempotency-key-header): an sf-string, accepted quoted or
// bare; 1..255 printable ASCII characters. Malformed keys are refused with validation_error.
import { createHash } from 'node:crypto';
import { DomainError } from '@partner/shared/domain/errors';

export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  let value = header.trim();
  if (value.startsWith('"')) value = unquote(value);
  if (value.length === 0) throw keyError('must not be empty');
  if (value.length > 255) throw keyError('must be at most 255 characters');
  if (!/^[\x20-\x7e]+$/.test(value)) throw keyError('must be printable ASCII');
  return value;
}

/** RFC 8941 sf-string: "..." in which only \" and \\ are escapes and no bare quote appears. */
function unquote(quoted: string): string {
  let out = '';
  for (let i = 1; i < quoted.length; i++) {
    const c = quoted[i]!;
    if (c === '\\') {
      const next = quoted[++i];
      if (next !== '"' && next !== '\\') throw keyError('is not a valid quoted string');
      out += next;
    } else if (c === '"') {
      if (i !== quoted.length - 1) throw keyError('is not a valid quoted string');
      return out;
    } else out += c;
  }
  throw keyError('is not a valid quoted string');
}

function keyError(issue: string): DomainError {
  return new DomainError('validation_error', `Idempotency-Key ${issue}`, { details: [{ field: 'Idempotency-Key', issue }] });
}

/** Stable JSON: object keys sorted, so the same request fingerprints the same however it is spelt. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export const fingerprint = (parts: unknown): string => createHash('sha256').update(canonicalJson(parts)).digest('base64url');
