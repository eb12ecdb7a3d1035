// Gateway configuration (environment variables; see README "Configuration").
import { EnvReader, readBase, readNats, type BaseConfig, type NatsConfig } from '@partner/shared/config';
import { readAllowLoopbackTargets } from '@partner/shared/webhooks';
import { readAttachments, type AttachmentConfig } from './attachments/config.js';
import { parseDeprecations, type DeprecationRule } from './http/deprecation.js';

export interface GatewayConfig extends BaseConfig, NatsConfig {
  port: number;
  environment: 'uat' | 'production';
  /** {base_url}: public API address; builds statusUrl/Location and the environment's scope. */
  baseUrl: string;
  /** `<api_host>/access`, derived from baseUrl. */
  scope: string;
  issuer: string;
  audience: string;
  jwksUrl: string;
  grpc: { auth: string; policy: string; submission: string; job: string; events: string };
  /** Default deadline of a gRPC call, further capped by the request's own budget. */
  grpcTimeoutMs: number;
  /** Carry SubmitJob, SettleJob and CreateSubmission on open streams (shared/grpc-callstream.ts). */
  grpcCallStreams: boolean;
  /** Time budget of a request, apart from any Prefer: wait. */
  requestTimeoutMs: number;
  /** The issuer's token lifetime: a token whose exp - iat is longer is refused. */
  tokenMaxLifetimeS: number;
  /** How long a client's provisioning/revocation state is cached while NATS pushes changes. */
  clientStateCacheMs: number;
  /** How long a principal lookup is cached (positive answers; negative ones for a fifth of it). */
  principalCacheMs: number;
  /** Largest JSON body accepted. */
  jsonLimitBytes: number;
  /** Most values (numbers, strings, literals, arrays, objects) a JSON body may hold; beyond it 400 invalid_json. */
  jsonMaxValues: number;
  /** Webhook URLs may point at loopback addresses (local development and tests only); never at other non-public ones. */
  webhookAllowLoopbackTargets: boolean;
  /** Requests this process holds open under Prefer: wait at most; beyond it they are answered at once. */
  maxWaiters: number;
  maxWaitersPerPartner: number;
  /** Default per-client limit (a client's own, set with `admin client limits`, travels in its token). */
  rateLimit: { rps: number; burst: number };
  /** Gateway replicas sharing the limit: each enforces 1/N of it. */
  rateLimitReplicas: number;
  /** Time to receive a request's headers, and its whole body (slow clients are cut off). */
  headersTimeoutMs: number;
  receiveTimeoutMs: number;
  /** Continue a caller's W3C traceparent (only behind a trusted edge); otherwise every request starts a trace. */
  trustTraceparent: boolean;
  /** Attachment limits (ATTACHMENT_LIMIT_BYTES, ATTACHMENT_TRANSFER_TIMEOUT_MS). */
  attachments: AttachmentConfig;
  /** Operations scheduled for removal (DEPRECATIONS, a JSON array; see README "Versioning and deprecation"). */
  deprecations: DeprecationRule[];
}

export function readGatewayConfig(env = new EnvReader()): Readonly<GatewayConfig> {
  const base = readBase(env, 'gateway', 9480);
  const baseUrl = env.url('BASE_URL', { default: 'http://127.0.0.1:8080', protocols: ['http:', 'https:'] });
  const issuer = env.url('AUTH_ISSUER', { default: 'http://127.0.0.1:8081', protocols: ['http:', 'https:'] });
  let scope = '';
  try {
    scope = `${new URL(baseUrl).host}/access`;
  } catch {
    // reported by env.url
  }
  return env.done({
    ...base,
    ...readNats(env),
    port: env.int('PORT', { default: 8080, min: 0, max: 65535 }),
    environment: env.oneOf('ENVIRONMENT', ['uat', 'production'] as const, { default: 'uat' }),
    baseUrl,
    scope,
    issuer,
    audience: env.str('AUTH_AUDIENCE', { default: 'partner-submission-api' }),
    jwksUrl: env.url('AUTH_JWKS_URL', { default: `${issuer}/.well-known/jwks.json`, protocols: ['http:', 'https:'] }),
    grpc: {
      auth: env.str('AUTH_GRPC_ADDR', { default: '127.0.0.1:50051' }),
      policy: env.str('POLICY_GRPC_ADDR', { default: '127.0.0.1:50052' }),
      submission: env.str('SUBMISSION_GRPC_ADDR', { default: '127.0.0.1:50053' }),
      job: env.str('JOB_GRPC_ADDR', { default: '127.0.0.1:50054' }),
      events: env.str('EVENTS_GRPC_ADDR', { default: '127.0.0.1:50055' }),
    },
    grpcTimeoutMs: env.int('GRPC_TIMEOUT_MS', { default: 5_000, min: 50, max: 60_000 }),
    grpcCallStreams: env.bool('GRPC_CALL_STREAMS', { default: true, doc: 'hot calls as messages on open gRPC streams; false: plain unary calls' }),
    webhookAllowLoopbackTargets: readAllowLoopbackTargets(env),
    requestTimeoutMs: env.int('REQUEST_TIMEOUT_MS', { default: 10_000, min: 100, max: 120_000 }),
    tokenMaxLifetimeS: env.int('AUTH_TOKEN_TTL_SECONDS', { default: 900, min: 60, max: 86_400 }),
    clientStateCacheMs: env.int('CLIENT_STATE_CACHE_MS', { default: 60_000, min: 1_000, max: 3_600_000 }),
    principalCacheMs: env.int('PRINCIPAL_CACHE_MS', { default: 30_000, min: 0, max: 3_600_000 }),
    jsonLimitBytes: env.int('JSON_LIMIT_BYTES', { default: 1024 * 1024, min: 1024, max: 16 * 1024 * 1024 }),
    jsonMaxValues: env.int('JSON_MAX_VALUES', { default: 10_000, min: 100, max: 1_000_000 }),
    maxWaiters: env.int('MAX_WAITERS', { default: 20_000, min: 0, max: 1_000_000 }),
    maxWaitersPerPartner: env.int('MAX_WAITERS_PER_PARTNER', { default: 100, min: 1, max: 1_000_000 }),
    rateLimit: {
      rps: env.int('RATE_LIMIT_RPS', { default: 50, min: 1, max: 1_000_000 }),
      burst: env.int('RATE_LIMIT_BURST', { default: 100, min: 1, max: 1_000_000 }),
    },
    rateLimitReplicas: env.int('RATE_LIMIT_REPLICAS', { default: 1, min: 1, max: 1_000 }),
    headersTimeoutMs: env.int('HEADERS_TIMEOUT_MS', { default: 15_000, min: 500, max: 120_000 }),
    receiveTimeoutMs: env.int('REQUEST_RECEIVE_TIMEOUT_MS', { default: 300_000, min: 1_000, max: 3_600_000 }),
    trustTraceparent: env.bool('TRUST_TRACEPARENT', { default: false }),
    attachments: readAttachments(env),
    deprecations: readDeprecations(env),
  });
}

function readDeprecations(env: EnvReader): DeprecationRule[] {
  const { rules, problems } = parseDeprecations(env.str('DEPRECATIONS', { default: '[]' }));
  for (const p of problems) env.problem('DEPRECATIONS', p);
  return rules;
}
