// Reading a JSON request body, after authorization: Content-Type must be application/json (415),
// at most `limit` bytes (413, checked against Content-Length before reading and while reading),
// and valid JSON (invalid_json), whose every string is usable text (http/text.ts: validation_error).
import getRawBody from 'raw-body';
import { DomainError, type ErrorDetail } from '@partner/shared/errors';
import type { GatewayContext } from '../context.js';
import { checkJsonText } from './text.js';

export async function readJson(ctx: GatewayContext, limit: number): Promise<unknown> {
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
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw new DomainError('invalid_json', 'the request body is not valid JSON');
  }
  const details: ErrorDetail[] = [];
  checkJsonText(value, details);
  if (details.length > 0) throw new DomainError('validation_error', 'the request body is invalid; see details', { details });
  return value;
}
