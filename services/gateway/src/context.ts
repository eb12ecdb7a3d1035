// Types of what the gateway's middleware leave on ctx.state, and helpers every route uses.
import type Koa from 'koa';
import type { LoggedFile } from '@partner/shared/domain/request-log';

export interface Caller {
  clientId: string;
  tenant: string;
  partnerId: string;
  /** The client's current permissions (client-state.ts), not its token's. */
  permissions: ReadonlySet<string>;
  /** The client's current own rate limit (client-state.ts); the gateway default applies when absent. */
  rateLimit?: { rps: number; burst: number };
  /** Set by the principal middleware: the registered principal, or null without x-principal-id. */
  principalId: string | null;
}

export interface GatewayState {
  requestId: string;
  /** Epoch ms by which the request must be answered (before any Prefer: wait). */
  deadline: number;
  caller?: Caller;
  /** Route template (e.g. /v1/jobs/:id) for metrics and logs, once routed. */
  route?: string;
  /** The request's Idempotency-Key, once parsed (idempotencyKeyOf): null when it sent none. */
  idempotencyKey?: string | null;
  /** Error code of the response, when it is an error. */
  errorCode?: string;
  /** Trace id of the request's server span, when traced (logs). */
  traceId?: string;
  /**
   * Set by a route that answers later (a wait under Prefer: wait): the pipeline awaits `done` once the
   * routes have returned, and renders what it leaves on ctx, or the error it rejects with; `cancel`
   * releases the wait when the request ends another way (a route that threw after setting it).
   */
  answer?: { done: Promise<void>; cancel(): void };
  /** The rest of a body answered early is being read and dropped (http/early-answer.ts). */
  draining?: boolean;
  /** Set when the request was authenticated by a partner console session cookie (resources/console). */
  console?: { readOnly: boolean };
  /** The request body as the route read it, for the request log (request-log/recorder.ts). */
  loggedRequestBody?: LoggedRequestBody;
}

/** A request body as the request log sees it: parsed JSON (http/body.ts), or a multipart upload's file. */
export type LoggedRequestBody = { kind: 'json'; value: unknown; sizeBytes: number } | { kind: 'multipart'; file: LoggedFile; sizeBytes: number | null };

export type GatewayContext = Koa.ParameterizedContext<GatewayState>;
export type GatewayMiddleware = Koa.Middleware<GatewayState>;

/**
 * A request answered before authentication (a public document: the OpenAPI document, the receipt
 * keys): true, or a promise of its answer, when the request was for it; false or undefined when not.
 */
export type PublicRoute = (ctx: GatewayContext) => boolean | Promise<void> | undefined;

export function callerOf(ctx: GatewayContext): Caller {
  const caller = ctx.state.caller;
  if (!caller) throw new Error('route reached without an authenticated caller');
  return caller;
}

/** Milliseconds left in the request's budget: the deadline of the gRPC calls it makes. */
export function remainingMs(ctx: GatewayContext): number {
  return Math.max(1, ctx.state.deadline - Date.now());
}

/** The owner every read and write is scoped to: the caller's tenant and partner. */
export function ownerOf(ctx: GatewayContext): { tenantId: string; partnerId: string } {
  const caller = callerOf(ctx);
  return { tenantId: caller.tenant, partnerId: caller.partnerId };
}

/** Options of a gRPC call made for this request: the default deadline, capped by the request's budget. */
export function grpcOptions(ctx: GatewayContext, defaultTimeoutMs: number): { timeoutMs: number } {
  return { timeoutMs: Math.min(remainingMs(ctx), defaultTimeoutMs) };
}

