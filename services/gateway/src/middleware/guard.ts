// Per-operation authorization, applied by each route before it reads a body: the client must be
// provisioned with the operation's permission (403 forbidden), and an x-principal-id, when sent,
// must name a principal registered for the partner (403 principal_not_registered). Principal lookups
// go to the auth service and are cached briefly.
import { DomainError } from '@partner/shared/domain/errors';
import type { Permission } from '@partner/shared/domain/permissions';
import { callerOf, remainingMs, type Caller, type GatewayMiddleware } from '../context.js';

const PRINCIPAL_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

/** Whether a principal is registered for the partner: an answer at once (cached), or a lookup. */
export interface PrincipalResolver {
  (tenant: string, partnerId: string, principalId: string, timeoutMs: number): boolean | Promise<boolean>;
}

/**
 * Caches the resolver's answers: positive ones for ttlMs, negative ones for a fifth of it. A cached
 * answer is returned as is, not as a promise: most requests that name a principal name a cached one.
 */
export function cachedResolver(
  resolve: (tenant: string, partnerId: string, principalId: string, timeoutMs: number) => Promise<boolean>,
  ttlMs: number,
  maxEntries = 50_000,
): PrincipalResolver {
  const cache = new Map<string, { registered: boolean; until: number }>();
  return (tenant, partnerId, principalId, timeoutMs) => {
    const key = `${tenant}\u0000${partnerId}\u0000${principalId}`;
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) return hit.registered;
    return resolve(tenant, partnerId, principalId, timeoutMs).then((registered) => {
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
      cache.set(key, { registered, until: Date.now() + (registered ? ttlMs : ttlMs / 5) });
      return registered;
    });
  };
}

export function guard(permission: Permission, resolvePrincipal: PrincipalResolver): GatewayMiddleware {
  const admit = (caller: Caller, principalId: string, registered: boolean, next: () => Promise<unknown>) => {
    if (!registered) {
      throw new DomainError('principal_not_registered', 'x-principal-id does not name a principal registered for this partner');
    }
    caller.principalId = principalId;
    return next();
  };
  // Not async: most requests name no principal or a cached one, and then there is nothing to wait for.
  return (ctx, next) => {
    const caller = callerOf(ctx);
    if (!caller.permissions.has(permission)) {
      throw new DomainError('forbidden', `this client is not provisioned for ${permission}`);
    }
    const header = ctx.headers['x-principal-id'];
    if (header === undefined) return next();
    const principalId = Array.isArray(header) ? '' : header.trim();
    const registered = PRINCIPAL_ID.test(principalId) && resolvePrincipal(caller.tenant, caller.partnerId, principalId, remainingMs(ctx));
    return typeof registered === 'boolean'
      ? admit(caller, principalId, registered, next)
      : registered.then((ok) => admit(caller, principalId, ok, next));
  };
}
