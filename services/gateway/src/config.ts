// Gateway configuration (environment variables; see README "Configuration").
import { EnvReader } from '@partner/shared/config/env';
import { readBase, readNats, type BaseConfig, type NatsConfig } from '@partner/shared/process/config';
import { readAllowedPorts, readAllowLoopbackTargets } from '@partner/shared/net/webhook-targets';
import { defaultAddress, defaultPort, defaultUrl } from '@partner/shared/process/registry';
import { readAttachments, type AttachmentConfig } from './resources/attachments/config.js';
import { parseDeprecations, type DeprecationRule } from './http/deprecation.js';

export interface GatewayConfig extends BaseConfig, NatsConfig {
  port: number;
  environment: 'uat' | 'production';
  /** {base_url}: public API address; builds statusUrl/Location and the environment's scope. */
  baseUrl: string;
  /** `<api_host>/access`, derived from baseUrl. */
  scope: string;
  issuer: string;
  /** Where partners read the docs (GET / names it): DOCS_URL, by default the OpenAPI document. */
  docsUrl: string;
  audience: string;
  jwksUrl: string;
  grpc: { auth: string; policy: string; submission: string; job: string; events: string };
  /** Default deadline of a gRPC call, further capped by the request's own budget. */
  grpcTimeoutMs: number;
  /** Carry the hot calls (the submit steps and the hot reads) on open streams (shared/grpc/call-stream.ts). */
  grpcCallStreams: boolean;
  /** Time budget of a request, apart from any Prefer: wait. */
  requestTimeoutMs: number;
  /** The issuer's token lifetime: a token whose exp - iat is longer is refused. */
  tokenMaxLifetimeS: number;
  /** How long a client's provisioning/revocation state is cached while NATS pushes changes. */
  clientStateCacheMs: number;
  /** How long a product (with its requirements) is cached for POST /v1/submissions/validate. */
  productCacheMs: number;
  /** How long a principal lookup is cached (positive answers; negative ones for a fifth of it). */
  principalCacheMs: number;
  /** Largest JSON body accepted. */
  jsonLimitBytes: number;
  /** Most values (numbers, strings, literals, arrays, objects) a JSON body may hold; beyond it 400 invalid_json. */
  jsonMaxValues: number;
  /** Webhook URLs may point at loopback addresses (local development and tests only); never at other non-public ones. */
  webhookAllowLoopbackTargets: boolean;
  /** The TCP ports webhook URLs may use (WEBHOOK_ALLOWED_PORTS), checked at registration and update. */
  webhookAllowedPorts: number[];
  /** Requests this process holds open under Prefer: wait at most; beyond it they are answered at once. */
  maxWaiters: number;
  maxWaitersPerPartner: number;
  /** Settled jobs one gateway keeps in memory for GET /v1/jobs/{id} (jobs/settled-jobs.ts); 0 keeps none. */
  settledJobsMax: number;
  knownResourcesMax: number;
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
  /** The partner console (resources/console): the session cookie's Secure flag and the session cache. */
  console: { cookieSecure: boolean; sessionCacheMs: number };
  /** The request log's recorder (request-log/recorder.ts). */
  requestLog: RequestLogConfig;
}

export interface RequestLogConfig {
  /** Record authenticated /v1 requests into the request log (docs/api.md "Request log"). */
  enabled: boolean;
  /** Entries held at most while waiting to be shipped; beyond it new ones are dropped (and counted). */
  bufferEntries: number;
  /** Entries per message on the request-log stream at most. */
  batchEntries: number;
  /** How long an entry waits for its batch to fill before the batch is shipped anyway. */
  flushMs: number;
}

export function readGatewayConfig(env = new EnvReader()): Readonly<GatewayConfig> {
  const base = readBase(env, 'gateway', defaultPort('gateway', 'ops'));
  const baseUrl = env.url('BASE_URL', { default: defaultUrl('gateway'), protocols: ['http:', 'https:'], doc: 'public {base_url}; builds statusUrl and Location; the access scope is <its host>/access' });
  const issuer = env.url('AUTH_ISSUER', { default: defaultUrl('auth'), protocols: ['http:', 'https:'], doc: '{auth_url}: the tokens\' iss the gateway accepts' });
  let scope = '';
  try {
    scope = `${new URL(baseUrl).host}/access`;
  } catch {
    // reported by env.url
  }
  return env.done({
    ...base,
    ...readNats(env),
    port: env.int('PORT', { default: defaultPort('gateway', 'http'), min: 0, max: 65535, doc: 'the gateway\'s public HTTP port' }),
    environment: env.oneOf('ENVIRONMENT', ['uat', 'production'] as const, { default: 'uat', doc: 'uat or production (sandbox directives only in uat)' }),
    baseUrl,
    scope,
    issuer,
    docsUrl: env.url('DOCS_URL', { default: `${baseUrl}/v1/openapi.json`, protocols: ['http:', 'https:'], doc: 'where partners read the docs, named by GET / (default: <BASE_URL>/v1/openapi.json, the reference)' }),
    audience: env.str('AUTH_AUDIENCE', { default: 'partner-submission-api', doc: 'the tokens\' aud the gateway accepts' }),
    jwksUrl: env.url('AUTH_JWKS_URL', { default: `${issuer}/.well-known/jwks.json`, protocols: ['http:', 'https:'], doc: 'where the gateway fetches the public keys (default: <AUTH_ISSUER>/.well-known/jwks.json)' }),
    grpc: {
      auth: env.str('AUTH_GRPC_ADDR', { default: defaultAddress('auth'), doc: 'where to reach the auth service (host:port, dialled as dns:/// with round_robin)' }),
      policy: env.str('POLICY_GRPC_ADDR', { default: defaultAddress('policy'), doc: 'where to reach the policy service (host:port)' }),
      submission: env.str('SUBMISSION_GRPC_ADDR', { default: defaultAddress('submission'), doc: 'where to reach the submission service (host:port)' }),
      job: env.str('JOB_GRPC_ADDR', { default: defaultAddress('job'), doc: 'where to reach the job service (host:port)' }),
      events: env.str('EVENTS_GRPC_ADDR', { default: defaultAddress('events'), doc: 'where to reach the events service (host:port)' }),
    },
    grpcTimeoutMs: env.int('GRPC_TIMEOUT_MS', { default: 5_000, min: 50, max: 60_000, doc: 'default gRPC deadline (capped by the request\'s remaining budget)' }),
    grpcCallStreams: env.bool('GRPC_CALL_STREAMS', { default: true, doc: 'carry the hot calls (SubmitJob, SettleJob, ClaimJobs, CreateSubmission and the reads GetJob, ListPolicies, GetPolicy, ListEvents, GetEvent) as messages on long-lived gRPC streams per peer instead of one unary call each (same deadlines, errors and traces); false: plain unary calls' }),
    webhookAllowLoopbackTargets: readAllowLoopbackTargets(env),
    webhookAllowedPorts: readAllowedPorts(env),
    requestTimeoutMs: env.int('REQUEST_TIMEOUT_MS', { default: 10_000, min: 100, max: 120_000, doc: 'a request\'s budget, apart from any Prefer: wait' }),
    tokenMaxLifetimeS: env.int('AUTH_TOKEN_TTL_SECONDS', { default: 900, min: 60, max: 86_400, doc: 'the issuer\'s token lifetime: a token whose exp - iat is longer is refused' }),
    clientStateCacheMs: env.int('CLIENT_STATE_CACHE_MS', { default: 60_000, min: 1_000, max: 3_600_000, doc: 'how long a client\'s provisioning/revocation state is cached while changes are pushed over NATS (at most 2 s while the subscription is down)' }),
    productCacheMs: env.int('GATEWAY_PRODUCT_CACHE_MS', { default: 30_000, min: 0, max: 3_600_000, doc: 'how long a product and its requirements are cached for POST /v1/submissions/validate (a change of requirements is pushed over NATS and seen at once; unknown products: a fifth of it)' }),
    principalCacheMs: env.int('PRINCIPAL_CACHE_MS', { default: 30_000, min: 0, max: 3_600_000, doc: 'how long a principal lookup is cached (negative answers: a fifth of it)' }),
    jsonLimitBytes: env.int('JSON_LIMIT_BYTES', { default: 1024 * 1024, min: 1024, max: 16 * 1024 * 1024, doc: 'largest JSON body (413 beyond)' }),
    jsonMaxValues: env.int('JSON_MAX_VALUES', { default: 10_000, min: 100, max: 1_000_000, doc: 'most values (numbers, strings, literals, arrays, objects) a JSON body may hold (400 invalid_json beyond)' }),
    maxWaiters: env.int('MAX_WAITERS', { default: 20_000, min: 0, max: 1_000_000, doc: 'requests one gateway holds under Prefer: wait; beyond it they get 202 at once' }),
    maxWaitersPerPartner: env.int('MAX_WAITERS_PER_PARTNER', { default: 100, min: 1, max: 1_000_000, doc: 'of those, requests one partner holds; beyond it its requests with Prefer: wait get 429 rate_limited' }),
    settledJobsMax: env.int('SETTLED_JOBS_CACHE_MAX', { default: 10_000, min: 0, max: 1_000_000, doc: 'settled jobs one gateway keeps in memory (least recently used first out), so a poll of a settled job costs no call to the job service (a job polled once also keeps the request-log text of its body, written once, when within the 16 KiB the log keeps); 0 keeps none' }),
    knownResourcesMax: env.int('KNOWN_RESOURCES_CACHE_MAX', { default: 50_000, min: 0, max: 1_000_000, doc: 'submissions and quotes one gateway remembers as their partner\'s (least recently used first out), so the ownership check before a quote, withdraw, upload, bind or quote list costs no call to the service that owns them; 0 keeps none' }),
    rateLimit: {
      rps: env.int('RATE_LIMIT_RPS', { default: 50, min: 1, max: 1_000_000, doc: 'default per-client token bucket: requests per second (a client\'s own limit travels in its token)' }),
      burst: env.int('RATE_LIMIT_BURST', { default: 100, min: 1, max: 1_000_000, doc: 'default per-client token bucket: burst' }),
    },
    rateLimitReplicas: env.int('RATE_LIMIT_REPLICAS', { default: 1, min: 1, max: 1_000, doc: 'gateway replicas: each enforces 1/N of a client\'s limit' }),
    headersTimeoutMs: env.int('HEADERS_TIMEOUT_MS', { default: 15_000, min: 500, max: 120_000, doc: 'time to receive a request\'s headers (slow clients get 408)' }),
    receiveTimeoutMs: env.int('REQUEST_RECEIVE_TIMEOUT_MS', { default: 300_000, min: 1_000, max: 3_600_000, doc: 'time to receive a whole request, uploads included (slow clients get 408)' }),
    trustTraceparent: env.bool('TRUST_TRACEPARENT', { default: false, doc: 'continue a caller\'s W3C traceparent (only behind a trusted edge); otherwise every request starts a trace' }),
    attachments: readAttachments(env),
    deprecations: readDeprecations(env),
    console: {
      cookieSecure: env.bool('CONSOLE_COOKIE_SECURE', { default: baseUrl.startsWith('https:'), doc: 'mark the partner console\'s session cookie Secure (and name it __Host-console_session); default: true when BASE_URL is https, false in local mode (http)' }),
      sessionCacheMs: env.int('CONSOLE_SESSION_CACHE_MS', { default: 5_000, min: 0, max: 60_000, doc: 'how long a gateway keeps a resolved console session before asking the auth service again (a signed-out session may last that long on other replicas; a revoked client is refused at once)' }),
    },
    requestLog: {
      enabled: env.bool('REQUEST_LOG_ENABLED', { default: true, doc: 'record every authenticated /v1 request in the partner\'s request log (GET /v1/requests); false: nothing recorded' }),
      bufferEntries: env.int('REQUEST_LOG_BUFFER_ENTRIES', { default: 5_000, min: 1, max: 1_000_000, doc: 'request-log entries one gateway holds at most while shipping them; beyond it new entries are dropped (partner_request_log_dropped_total), never the request' }),
      batchEntries: env.int('REQUEST_LOG_BATCH_ENTRIES', { default: 200, min: 1, max: 10_000, doc: 'request-log entries per message on the request-log stream at most' }),
      flushMs: env.int('REQUEST_LOG_FLUSH_MS', { default: 200, min: 1, max: 10_000, doc: 'how long a request-log entry waits for its batch to fill before the batch is shipped' }),
    },
  });
}

function readDeprecations(env: EnvReader): DeprecationRule[] {
  const { rules, problems } = parseDeprecations(env.str('DEPRECATIONS', { default: '[]', doc: 'operations scheduled for removal, a JSON array of {"operation", "deprecation", "sunset"?, "link"} (README "Versioning and deprecation")', range: 'a JSON array' }));
  for (const p of problems) env.problem('DEPRECATIONS', p);
  return rules;
}
