// Per-operation authorization, applied by each route before it reads a body: the client must be
// provisioned with the operation's permission (403 forbidden), and an x-principal-id, when sent,
// must name a principal registered for the partner (403 principal_not_registered). Principal lookups
// go to the auth service and are cached briefly.
import { DomainError } from '@partner/shared/errors';
import type { Permission } from '@partner/shared/permissions';
import { callerOf, remainingMs, type Caller, type GatewayContext, type GatewayMiddleware } from '../context.js';

export interface PrincipalResolver {
  (tenant: string, partnerId: string, principalId: string, timeoutMs: number): Promise<boolean>;
}

const PRINCIPAL_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

/** Caches the resolver's answers: positive ones for ttlMs, negative ones for a fifth of it. */
export function cachedResolver(resolve: PrincipalResolver, ttlMs: number, maxEntries = 50_000): PrincipalResolver {
  const cache = new Map<string, { registered: boolean; until: number }>();
  return async (tenant, partnerId, principalId, timeoutMs) => {
    const key = `${tenant}\u0000${partnerId}\u0000${principalId}`;
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) return hit.registered;
    const registered = await resolve(tenant, partnerId, principalId, timeoutMs);
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
    cache.set(key, { registered, until: Date.now() + (registered ? ttlMs : ttlMs / 5) });
    return registered;
  };
}

export function guard(permission: Permission, resolvePrincipal: PrincipalResolver): GatewayMiddleware {
  const withPrincipal = async (ctx: GatewayContext, caller: Caller, header: string | string[], next: () => Promise<unknown>) => {
    const principalId = Array.isArray(header) ? '' : header.trim();
    const registered =
      PRINCIPAL_ID.test(principalId) && (await resolvePrincipal(caller.tenant, caller.partnerId, principalId, remainingMs(ctx)));
    if (!registered) {
      throw new DomainError('principal_not_registered', 'x-principal-id does not name a principal registered for this partner');
    }
    caller.principalId = principalId;
    await next();
  };
  // Not async: most requests name no principal, and then there is nothing to wait for.
  return (ctx, next) => {
    const caller = callerOf(ctx);
    if (!caller.permissions.has(permission)) {
      throw new DomainError('forbidden', `this client is not provisioned for ${permission}`);
    }
    const principalHeader = ctx.headers['x-principal-id'];
    return principalHeader === undefined ? next() : withPrincipal(ctx, caller, principalHeader, next);
  };
}
