// Sends one delivery over HTTP with undici: one Agent per endpoint and origin (keep-alive, and its
// own connections, so endpoints that share a host never queue behind each other's hanging requests), whose
// connector resolves the host through checkedLookup, so the address that was checked against the
// SSRF rules is the one connected to. Redirects are never followed (undici does not follow them
// unless told to); the whole attempt has one deadline; the answer's body is read up to 64 KiB.
import { isIP } from 'node:net';
import { Agent } from 'undici';
import { RESPONSE_BODY_LIMIT, USER_AGENT, webhookSignature } from '@partner/shared/domain/webhooks';
import {
  checkedLookup,
  hostOf,
  isThisHostLoopback,
  literalProblem,
  portProblem,
  RefusedTargetError,
  type TargetRules,
} from '@partner/shared/net/webhook-targets';
import type { AttemptOutcome } from './store.js';

export interface SendResult extends AttemptOutcome {
  ok: boolean;
  outcome: 'success' | 'http_error' | 'timeout' | 'network_error' | 'refused';
  /** Seconds the receiver asked to wait (Retry-After on a 429 or 503). */
  retryAfterS?: number;
}

export interface Delivery {
  endpointId: string;
  eventId: string;
  url: string;
  body: string;
  secrets: string[];
}

const IDLE_AGENT_MS = 5 * 60_000;

export class Sender {
  private readonly agents = new Map<string, { agent: Agent; usedAt: number }>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly opts: { timeoutMs: number; rules: TargetRules; connectionsPerOrigin: number }) {
    this.sweep = setInterval(() => this.closeIdle(), 60_000);
    this.sweep.unref();
  }

  /** `portRefusal`: the origin's port is not allowed, loopback is: only this host's loopback may be connected to. */
  private agentFor(endpointId: string, origin: string, portRefusal?: string): Agent {
    const key = `${endpointId} ${origin}`;
    let entry = this.agents.get(key);
    if (!entry) {
      entry = {
        agent: new Agent({
          connections: this.opts.connectionsPerOrigin,
          keepAliveTimeout: 30_000,
          connect: { timeout: this.opts.timeoutMs, lookup: checkedLookup(this.opts.rules, portRefusal === undefined ? {} : { portRefusal }) as never },
        }),
        usedAt: 0,
      };
      this.agents.set(key, entry);
    }
    entry.usedAt = Date.now();
    return entry.agent;
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const [key, e] of this.agents) {
      if (now - e.usedAt > IDLE_AGENT_MS) {
        this.agents.delete(key);
        void e.agent.close().catch(() => undefined);
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    await Promise.all([...this.agents.values()].map((e) => e.agent.close().catch(() => undefined)));
    this.agents.clear();
  }

  async send(d: Delivery): Promise<SendResult> {
    const startedAt = new Date();
    const t0 = performance.now();
    const done = (r: Omit<SendResult, 'startedAt' | 'durationMs'>): SendResult => ({ ...r, startedAt, durationMs: performance.now() - t0 });
    let url: URL;
    try {
      url = new URL(d.url);
    } catch {
      return done({ ok: false, outcome: 'refused', error: 'the endpoint URL is not valid' });
    }
    // An IP literal never goes through the lookup: check it here.
    const why = literalProblem(url, this.opts.rules);
    if (why) return done({ ok: false, outcome: 'refused', error: `refused: ${why}` });
    // A port the deployment no longer allows (WEBHOOK_ALLOWED_PORTS; the egress policy would drop the
    // connection until it timed out): refused before connecting, unless the target is this host's
    // loopback where loopback is allowed (an IP literal is judged here, a name by the lookup).
    const portWhy = portProblem(url, this.opts.rules);
    if (portWhy && !(this.opts.rules.allowLoopback && (isIP(hostOf(url)) === 0 || isThisHostLoopback(hostOf(url))))) {
      return done({ ok: false, outcome: 'refused', error: `refused: the URL ${portWhy}; update the endpoint's URL` });
    }
    // Its signing secret did not open (store.ts): nothing unsigned is ever sent.
    if (d.secrets.length === 0) {
      return done({ ok: false, outcome: 'refused', error: "not sent: this endpoint's signing secret could not be read (a fault of the service, not of the receiver)" });
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const signal = AbortSignal.timeout(this.opts.timeoutMs);
    try {
      const res = await this.agentFor(d.endpointId, url.origin, portWhy).request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': d.eventId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': webhookSignature(d.secrets, d.eventId, timestamp, d.body),
        },
        body: d.body,
        signal,
        headersTimeout: this.opts.timeoutMs,
        bodyTimeout: this.opts.timeoutMs,
      });
      const responseBody = await readCapped(res.body, RESPONSE_BODY_LIMIT);
      const status = res.statusCode;
      if (status >= 200 && status < 300) return done({ ok: true, outcome: 'success', status, responseBody });
      const retryAfterS = status === 429 || status === 503 ? retryAfterOf(res.headers['retry-after']) : undefined;
      return done({
        ok: false,
        outcome: 'http_error',
        status,
        responseBody,
        error: status >= 300 && status < 400 ? `the receiver answered ${status} (redirects are not followed)` : `the receiver answered ${status}`,
        ...(retryAfterS !== undefined ? { retryAfterS } : {}),
      });
    } catch (err) {
      const e = err as Error & { code?: string; cause?: Error & { code?: string } };
      if (e instanceof RefusedTargetError || e.cause instanceof RefusedTargetError) {
        return done({ ok: false, outcome: 'refused', error: `refused: ${(e instanceof RefusedTargetError ? e : e.cause!).message}` });
      }
      if (signal.aborted || e.name === 'TimeoutError' || /Timeout/.test(e.code ?? '')) {
        return done({ ok: false, outcome: 'timeout', error: `no answer within ${this.opts.timeoutMs} ms` });
      }
      const code = e.code ?? e.cause?.code;
      return done({ ok: false, outcome: 'network_error', error: `could not reach the receiver${code ? ` (${code})` : ''}: ${e.message}`.slice(0, 500) });
    }
  }
}

/** Reads a body up to limit bytes (as text), then drops the rest. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy?(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const room = limit - size;
    if (room <= 0) break;
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    size += Math.min(chunk.length, room);
    if (size >= limit) break;
  }
  body.destroy?.();
  return Buffer.concat(chunks).toString('utf8');
}

/** Retry-After as seconds (delta-seconds or an HTTP date), or undefined. */
export function retryAfterOf(v: string | string[] | undefined): number | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (!s) return undefined;
  if (/^\d+$/.test(s.trim())) return Number(s.trim());
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : Math.max(0, Math.ceil((t - Date.now()) / 1000));
}
