// The content hash a submission's receipt carries (docs/api.md "Signed receipts"): the lowercase hex
// SHA-256 of the RFC 8785 (JSON Canonicalization Scheme) form of the create body exactly as the
// partner sent it (parsed, never normalized), so the partner can recompute it from what it sent.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

export function contentSha256(body: unknown): string {
  const canonical = canonicalize(body);
  if (canonical === undefined) throw new Error('the body has no JSON canonical form');
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
