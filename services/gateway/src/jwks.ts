// The token server's public keys, fetched once and cached. A token with an unknown `kid` triggers a
// refetch (that is how a key rotation is learnt), never more than one in flight and at most one per
// `minRefreshMs`, so tokens with made-up kids cannot turn into a flood of fetches.
import { importJWK, type CryptoKey, type JWK, type JWSHeaderParameters } from 'jose';
import { DomainError, unavailable } from '@partner/shared/domain/errors';

export class KeyStore {
  private keys = new Map<string, CryptoKey>();
  private inflight: Promise<void> | undefined;
  private lastFetch = 0;

  constructor(
    private readonly url: string,
    private readonly alg: string,
    private readonly minRefreshMs = 1_000,
    private readonly fetchTimeoutMs = 3_000,
  ) {}

  /** Whether a fetch has succeeded: tokens can be verified (also while the token server is away). */
  get loaded(): boolean {
    return this.keys.size > 0;
  }

  /** Fetches the keys; call at start so the first request does not pay for it. */
  refresh(): Promise<void> {
    this.inflight ??= this.fetchKeys().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async fetchKeys(): Promise<void> {
    const wait = this.lastFetch + this.minRefreshMs - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    this.lastFetch = Date.now();
    const res = await fetch(this.url, { signal: AbortSignal.timeout(this.fetchTimeoutMs) });
    if (!res.ok) throw new Error(`JWKS answered ${res.status}`);
    const body = (await res.json()) as { keys?: JWK[] };
    const next = new Map<string, CryptoKey>();
    for (const jwk of body.keys ?? []) {
      if (!jwk.kid || (jwk.alg && jwk.alg !== this.alg) || (jwk.use && jwk.use !== 'sig')) continue;
      const known = this.keys.get(jwk.kid);
      next.set(jwk.kid, known ?? ((await importJWK(jwk, this.alg)) as CryptoKey));
    }
    this.keys = next;
  }

  /** jose key resolver: the key for the token's kid, refetching the set once if it is unknown. */
  readonly getKey = async (header: JWSHeaderParameters): Promise<CryptoKey> => {
    const kid = header.kid;
    if (typeof kid !== 'string' || kid.length === 0 || kid.length > 128) {
      throw new DomainError('invalid_token', 'the token has no usable key id');
    }
    const known = this.keys.get(kid);
    if (known) return known;
    try {
      await this.refresh();
    } catch (err) {
      throw unavailable('the token keys could not be fetched; retry later', err);
    }
    const fetched = this.keys.get(kid);
    if (!fetched) throw new DomainError('invalid_token', 'the token was signed with an unknown key');
    return fetched;
  };
}
