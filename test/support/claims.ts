// Access tokens made by the tests themselves (forged, expired, signed with the service's own key),
// from one set of claims: what the token server puts in a token for a client of the stack.
import { randomUUID } from 'node:crypto';
import { SignJWT, type CryptoKey } from 'jose';
import type { ClientCreds, Stack } from './stack.js';

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * The claims of a valid access token for the client (issuer, audience and scope of the stack; the
 * client's permissions; issued 10 s ago, valid 10 min), with `over` replacing or (as undefined)
 * dropping claims.
 */
export function accessClaims(stack: Stack, client: ClientCreds, over: Record<string, unknown> = {}): Record<string, unknown> {
  const now = nowSeconds();
  return {
    iss: stack.env.AUTH_ISSUER,
    sub: client.clientId,
    aud: stack.env.AUTH_AUDIENCE,
    client_id: client.clientId,
    scope: stack.scope,
    tenant: client.tenant,
    partner_id: client.partnerId,
    permissions: client.permissions,
    iat: now - 10,
    exp: now + 600,
    jti: randomUUID(),
    ...over,
  };
}

/** Signs claims as an `at+jwt` with ES256 (the header can be overridden to forge a bad one). */
export function signAccessToken(claims: Record<string, unknown>, key: CryptoKey | Uint8Array, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', ...header } as never).sign(key);
}
