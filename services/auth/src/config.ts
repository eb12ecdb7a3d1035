// Auth service configuration (environment variables; see README "Configuration").
import { EnvReader } from '@partner/shared/config/env';
import { readBase, readDb, type BaseConfig, type DbConfig } from '@partner/shared/process/config';
import { defaultAddress, defaultPort, defaultUrl } from '@partner/shared/process/registry';
import { parseKekList } from '@partner/shared/crypto/sealed-keys';

export interface AuthConfig extends BaseConfig, DbConfig {
  /** Public port of the token server ({auth_url}). */
  httpPort: number;
  grpcPort: number;
  /** {auth_url}: the token server's public base URL, also the tokens' `iss`. */
  issuer: string;
  /** `aud` of every access token: the partner API, whatever its environment. */
  audience: string;
  /** Access scopes this token server issues tokens for, e.g. api.uat.example.com/access. */
  scopes: string[];
  tokenTtlSeconds: number;
  /** 32-byte key (base64) that seals private signing keys at rest: the newest of keyEncryptionKeys. */
  keyEncryptionKey: Buffer;
  /** Every configured KEK, newest first: the newest seals, the older ones only unseal (rotation). */
  keyEncryptionKeys: Buffer[];
  /** Trust X-Forwarded-For from the proxy in front (the ingress) for the client's address. */
  trustProxy: boolean;
  /** Credential-stuffing protection at the token endpoint. */
  attempts: { windowMs: number; maxFailuresPerSource: number; slowAfter: number; maxDelayMs: number };
  /** Lifetime of a partner console session (its sign-in link lives 10 minutes, single use). */
  consoleSessionTtlSeconds: number;
}

export function readAuthConfig(env = new EnvReader()): Readonly<AuthConfig> {
  const base = readBase(env, 'auth', defaultPort('auth', 'ops'));
  const kekB64 = env.str('AUTH_KEY_ENCRYPTION_KEY', { doc: '32 random bytes, base64: seals the signing keys at rest. While rotating it, a comma list newest first (NEW,OLD): the newest seals, older ones only unseal (npm start generates one in .local/dev.env)', range: 'base64 keys of 32 bytes' });
  const keks = parseKekList(kekB64, (message) => env.problem('AUTH_KEY_ENCRYPTION_KEY', message));
  const kek = keks[0] ?? Buffer.alloc(0);
  // Only the scopes of the environments this deployment serves: a refused scope's error lists them.
  const scopes = env.list('AUTH_SCOPES', { default: [`${defaultAddress('gateway', 'http')}/access`], doc: 'scopes the token server issues tokens for, each <api_host>/access: those of the environments this deployment serves (a refused scope\'s error lists them)', range: 'entries <api_host>/access' });
  for (const s of scopes) {
    if (!/^[A-Za-z0-9.-]+(:\d+)?\/access$/.test(s)) env.problem('AUTH_SCOPES', `entry "${s}" is not of the form <api_host>/access`);
  }
  return env.done({
    ...base,
    ...readDb(env),
    httpPort: env.int('AUTH_HTTP_PORT', { default: defaultPort('auth', 'http'), min: 0, max: 65535, doc: 'the token server\'s public HTTP port ({auth_url})' }),
    grpcPort: env.int('AUTH_GRPC_PORT', { default: defaultPort('auth', 'grpc'), min: 0, max: 65535, doc: 'the auth service\'s gRPC port' }),
    issuer: env.url('AUTH_ISSUER', { default: defaultUrl('auth'), protocols: ['http:', 'https:'], doc: '{auth_url}: the token server\'s public base URL, the tokens\' iss' }),
    audience: env.str('AUTH_AUDIENCE', { default: 'partner-submission-api', doc: 'the tokens\' aud' }),
    scopes,
    tokenTtlSeconds: env.int('AUTH_TOKEN_TTL_SECONDS', { default: 900, min: 60, max: 86_400, doc: 'access token lifetime; the gateway refuses tokens claiming a longer one' }),
    keyEncryptionKey: kek,
    keyEncryptionKeys: keks,
    trustProxy: env.bool('TRUST_PROXY', { default: false, doc: 'take the client address from the last X-Forwarded-For hop (behind an ingress)' }),
    attempts: {
      windowMs: env.int('AUTH_FAILURE_WINDOW_MS', { default: 60_000, min: 1_000, max: 3_600_000, doc: 'window of AUTH_MAX_FAILURES_PER_SOURCE' }),
      maxFailuresPerSource: env.int('AUTH_MAX_FAILURES_PER_SOURCE', { default: 30, min: 1, max: 100_000, doc: 'a source with this many failed client authentications in the window is refused (429)' }),
      slowAfter: env.int('AUTH_SLOW_AFTER_FAILURES', { default: 5, min: 0, max: 100_000, doc: 'failed attempts for one client id beyond this are held back, the delay doubling up to AUTH_MAX_FAILURE_DELAY_MS' }),
      maxDelayMs: env.int('AUTH_MAX_FAILURE_DELAY_MS', { default: 2_000, min: 0, max: 10_000, doc: 'ceiling of the delay of AUTH_SLOW_AFTER_FAILURES' }),
    },
    consoleSessionTtlSeconds: env.int('CONSOLE_SESSION_TTL_SECONDS', { default: 28_800, min: 60, max: 604_800, doc: 'lifetime of a partner console session (8 h by default); it also ends when its client is disabled or its tokens are revoked' }),
  });
}
