// Console sessions as the gateway sees them (API.md "Partner console"): the session cookie's value is
// a session id the auth service stores hashed (services/auth/src/console-sessions.ts); every replica
// resolves it there (GetConsoleSession), so a session is honoured, and ended, on all of them. A
// resolved session is kept for cacheMs (a few seconds) to spare the round trip on every request of a
// page; the client's revocation is checked on every request against the client states the gateway
// already keeps fresh over NATS (client-state.ts), so it takes effect at once.
import type { PromiseClient, serviceDefs } from '@partner/shared/grpc';

type AuthClient = PromiseClient<ReturnType<typeof serviceDefs>['auth']>;

export interface ConsoleSession {
  clientId: string;
  tenant: string;
  partnerId: string;
  readOnly: boolean;
  /** The client's token version when the link was minted: a higher current one means revoked. */
  tokenVersion: number;
  csrfToken: string;
  expiresAt: Date;
}

/** `__Host-` binds the cookie to this origin and path / (it needs Secure, so not in local mode). */
export const consoleCookieName = (secure: boolean): string => (secure ? '__Host-console_session' : 'console_session');

const SESSION_ID = /^css_[A-Za-z0-9_-]{43}$/;

export class ConsoleSessions {
  private readonly entries = new Map<string, { session: ConsoleSession | undefined; until: number }>();

  constructor(
    private readonly auth: Pick<AuthClient, 'GetConsoleSession' | 'EndConsoleSession'>,
    private readonly opts: { cacheMs: number; maxEntries?: number; now?: () => number },
  ) {}

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  /** The live session of this id, or undefined (unknown, expired, ended, its client disabled or revoked). */
  async resolve(sessionId: string, timeoutMs: number): Promise<ConsoleSession | undefined> {
    if (!SESSION_ID.test(sessionId)) return undefined;
    const now = this.now();
    const hit = this.entries.get(sessionId);
    if (hit && hit.until > now) return hit.session && hit.session.expiresAt.getTime() > now ? hit.session : undefined;
    const r = await this.auth.GetConsoleSession({ sessionId }, { timeoutMs });
    const session: ConsoleSession | undefined = r.found
      ? {
          clientId: r.clientId,
          tenant: r.tenantId,
          partnerId: r.partnerId,
          readOnly: r.readOnly,
          tokenVersion: Number(r.tokenVersion),
          csrfToken: r.csrfToken,
          expiresAt: new Date(r.expiresAt),
        }
      : undefined;
    if (this.entries.size >= (this.opts.maxEntries ?? 10_000)) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(sessionId, { session, until: now + this.opts.cacheMs });
    return session;
  }

  /** Ends the session (sign out): in the auth service for every replica, and here at once. */
  async end(sessionId: string, timeoutMs: number): Promise<void> {
    this.entries.delete(sessionId);
    if (SESSION_ID.test(sessionId)) await this.auth.EndConsoleSession({ sessionId }, { timeoutMs });
  }
}
