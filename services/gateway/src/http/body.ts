// Reading a JSON request body, after authorization, in this order and before any other work:
// Content-Type must be application/json (415); at most `limit` bytes (413, checked against
// Content-Length before reading and while reading); then one scan of the text (http/json-scan.ts):
// valid JSON, at most 32 levels deep, at most JSON_MAX_VALUES values, no key repeated in an object
// (each 400 invalid_json), every string usable text (400 validation_error naming the fields); only
// then JSON.parse. Schema validation (http/validate.ts) comes after, in the route.
import getRawBody from 'raw-body';
import { DomainError } from '@partner/shared/domain/errors';
import type { GatewayContext } from '../context.js';
import { DEFAULT_MAX_JSON_VALUES, MAX_JSON_DEPTH, scanJson, type JsonScanLimits } from './json-scan.js';
import { chargeJsonBody } from '../middleware/rate-limit.js';

// The values limit is a setting of the app (JSON_MAX_VALUES), kept on Koa's app.context, the
// prototype of every ctx, so that each route's call stays readJson(ctx, byteLimit).
const SCAN_LIMITS = Symbol('json scan limits');
type WithLimits = { [SCAN_LIMITS]?: JsonScanLimits };
const DEFAULT_LIMITS: JsonScanLimits = { maxDepth: MAX_JSON_DEPTH, maxValues: DEFAULT_MAX_JSON_VALUES };

/** Sets how many values a JSON body of this app may hold (createGatewayApp, from JSON_MAX_VALUES). */
export function setJsonValueLimit(app: { context: object }, maxValues: number): void {
  (app.context as WithLimits)[SCAN_LIMITS] = { maxDepth: MAX_JSON_DEPTH, maxValues };
}

export async function readJson(ctx: GatewayContext, limit: number, opts: { textProblems?: 'refuse' | 'leave' } = {}): Promise<unknown> {
  if (!ctx.is('application/json')) {
    throw new DomainError('unsupported_media_type', 'send the body as Content-Type: application/json');
  }
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > limit) throw new DomainError('payload_too_large', `the body may be at most ${limit} bytes`);
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit, encoding: 'utf8', ...(Number.isFinite(declared) ? { length: declared } : {}) });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw new DomainError('payload_too_large', `the body may be at most ${limit} bytes`);
    if (type === 'encoding.unsupported') throw new DomainError('unsupported_media_type', 'the body must be UTF-8');
    throw new DomainError('invalid_json', 'the request body could not be read completely');
  }
  // A body that came without Content-Length pays its cost in the rate limit now (middleware/rate-limit.ts).
  if (!Number.isFinite(declared)) chargeJsonBody(ctx, Buffer.byteLength(text));
  const details = scanJson(text, (ctx as unknown as WithLimits)[SCAN_LIMITS] ?? DEFAULT_LIMITS);
  // POST /v1/submissions/validate leaves them to the schema, which names them as errors of a 200.
  if (details.length > 0 && opts.textProblems !== 'leave') throw new DomainError('validation_error', 'the request body is invalid; see details', { details });
  try {
    const value = JSON.parse(text) as unknown;
    // For the request log (request-log/recorder.ts), which redacts it after the answer.
    ctx.state.loggedRequestBody = { kind: 'json', value, sizeBytes: Number.isFinite(declared) ? declared : Buffer.byteLength(text) };
    return value;
  } catch {
    // The scan accepts only what JSON.parse does; kept so that a disagreement is a 400, not a 500.
    throw new DomainError('invalid_json', 'the request body is not valid JSON');
  }
}
