// Access tokens (OAuth 2.0 client credentials, RFC 6749 §4.4): fetched with HTTP Basic client
// authentication, cached, and refreshed a margin before expires_in runs out. However many requests
// need a token at once, one token request is in flight; they all share its answer.
import { PartnerAuthError, PartnerNetworkError } from './errors.js';
import { abortable, backoffMs, parseRetryAfter, sleep, type BackoffOptions } from './timing.js';

export interface TokenProviderOptions {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  fetch: typeof fetch;
  /** Refresh this many seconds before the token expires (default 60; half the lifetime if that is less). */
  refreshMarginSeconds: number;
  maxAttempts: number;
  backoff: BackoffOptions;
  timeoutMs: number;
  userAgent: string;
}

interface CachedToken {
  token: string;
  /** Epoch ms after which the token is refreshed before use. */
  refreshAt: number;
}

/** RFC 6749 §2.3.1: client id and secret are form-urlencoded before they are joined and base64-encoded. */
function basicAuth(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  const raw = new TextEncoder().encode(`${enc(id)}:${enc(secret)}`);
  let binary = '';
  for (const b of raw) binary += String.fromCharCode(b);
  return `Basic ${btoa(binary)}`;
}

export class TokenProvider {
  private cached: CachedToken | undefined;
  private inflight: Promise<CachedToken> | undefined;

  constructor(private readonly opts: TokenProviderOptions) {}

  /** A valid access token: the cached one, or a new one (one request for all concurrent callers). */
  async get(signal?: AbortSignal): Promise<string> {
    if (this.cached && Date.now() < this.cached.refreshAt) return this.cached.token;
    // The shared request is not tied to any one caller's signal: each caller stops waiting on its own.
    this.inflight ??= this.fetchToken().finally(() => {
      this.inflight = undefined;
    });
    return (await abortable(this.inflight, signal)).token;
  }

  /** Forgets the token if it is still the cached one (the API said invalid_token). */
  invalidate(token: string): void {
    if (this.cached?.token === token) this.cached = undefined;
  }

  private async fetchToken(): Promise<CachedToken> {
    const { opts } = this;
    let lastError: unknown;
    for (let attempt = 1; attempt <= opts.maxAttempts; attempt++) {
      const sentAt = Date.now();
      let res: Response;
      let text: string;
      try {
        res = await opts.fetch(opts.tokenUrl, {
          method: 'POST',
          headers: {
            authorization: basicAuth(opts.clientId, opts.clientSecret),
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/json',
            'user-agent': opts.userAgent,
          },
          body: new URLSearchParams({ grant_type: 'client_credentials', scope: opts.scope }).toString(),
          signal: AbortSignal.timeout(opts.timeoutMs),
        });
        text = await res.text();
      } catch (err) {
        lastError = err;
        if (attempt < opts.maxAttempts) await sleep(backoffMs(attempt, opts.backoff));
        continue;
      }
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // not JSON: judged by status below
      }
      if (res.ok && typeof body.access_token === 'string' && typeof body.expires_in === 'number') {
        const lifetime = body.expires_in;
        const margin = opts.refreshMarginSeconds < lifetime ? opts.refreshMarginSeconds : lifetime / 2;
        const cached = { token: body.access_token, refreshAt: sentAt + (lifetime - margin) * 1000 };
        this.cached = cached;
        return cached;
      }
      const code = typeof body.error === 'string' ? body.error : `http_${res.status}`;
      const description = typeof body.error_description === 'string' ? body.error_description : `token request failed with HTTP ${res.status}`;
      const retryable = res.status >= 500 || res.status === 429 || code === 'temporarily_unavailable';
      const retryAfterSeconds = parseRetryAfter(res.headers.get('retry-after'));
      const error = new PartnerAuthError({
        status: res.status,
        code,
        message: `token request refused: ${code}: ${description}`,
        retryable,
        retryAfterSeconds,
      });
      if (!retryable || attempt >= opts.maxAttempts) throw error;
      lastError = error;
      await sleep(Math.max((retryAfterSeconds ?? 0) * 1000, backoffMs(attempt, opts.backoff)));
    }
    throw new PartnerNetworkError(`the token server ${opts.tokenUrl} could not be reached: ${(lastError as Error)?.message ?? lastError}`, {
      cause: lastError,
    });
  }
}
