// Client identifiers and secrets: generated here (256 bits of randomness), shown once, stored as a hash.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const newClientId = (): string => `cli_${randomBytes(12).toString('hex')}`;
export const newClientSecret = (): string => `sk_${randomBytes(32).toString('base64url')}`;
export const hashSecret = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

export function secretMatches(secret: string, hash: Buffer): boolean {
  const h = hashSecret(secret);
  return h.length === hash.length && timingSafeEqual(h, hash);
}
