// GET /v1/openapi.json: the machine-readable reference, served without a token. The document is
// built and serialised once, when the app is built, for this environment (servers = {base_url}, the
// OAuth2 token URL and access scope); a request costs one write of a cached buffer. GET / is the
// index that points to it (and to the token endpoint, the scope and the docs), also without a token.
import { DomainError } from '@partner/shared/domain/errors';
import type { GatewayContext } from '../context.js';
import type { GatewayConfig } from '../config.js';
import { API_INDEX_PATH, API_VERSION, buildOpenApiDocument } from './document.js';

export const OPENAPI_PATH = '/v1/openapi.json';
export { API_INDEX_PATH } from './document.js';
const ALLOW = 'GET, HEAD';

/** The issuer without trailing slashes (a loop: /\/+$/ is quadratic on a long run of them). */
function trimSlashes(url: string): string {
  let out = url;
  while (out.endsWith('/')) out = out.slice(0, -1);
  return out;
}

/** A public document at exactly `path`, GET or HEAD (other methods 405 with Allow); false for any other path. */
function serve(path: string, body: Buffer): (ctx: GatewayContext) => boolean {
  return (ctx) => {
    // Exactly this path, as every other (a trailing slash makes an unknown path).
    if (ctx.path !== path) return false;
    ctx.state.route = path;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', ALLOW);
      throw new DomainError('method_not_allowed', `${ctx.method} is not allowed here; see the Allow header`);
    }
    ctx.status = 200;
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = body;
    return true;
  };
}

/**
 * Answers GET / (the pipeline asks before authentication) with the `ApiIndex`: what a partner who
 * has only the API's address needs to begin. Built once; returns whether the request was for it.
 */
export function apiIndexRoute(config: Pick<GatewayConfig, 'baseUrl' | 'issuer' | 'scope' | 'environment' | 'docsUrl'>): (ctx: GatewayContext) => boolean {
  const index = {
    name: 'Partner Submission API',
    apiVersion: API_VERSION,
    environment: config.environment,
    openapi: `${config.baseUrl}${OPENAPI_PATH}`,
    tokenUrl: `${trimSlashes(config.issuer)}/oauth2/token`,
    scope: config.scope,
    docs: config.docsUrl,
  };
  return serve(API_INDEX_PATH, Buffer.from(JSON.stringify(index)));
}

/**
 * Answers GET /v1/openapi.json (the pipeline asks before authentication); returns whether the request
 * was for the document.
 */
export function openapiRoute(config: Pick<GatewayConfig, 'baseUrl' | 'issuer' | 'scope' | 'environment' | 'jsonMaxValues'>): (ctx: GatewayContext) => boolean {
  const document = buildOpenApiDocument({
    baseUrl: config.baseUrl,
    tokenUrl: `${trimSlashes(config.issuer)}/oauth2/token`,
    scope: config.scope,
    environment: config.environment,
    jsonMaxValues: config.jsonMaxValues,
  });
  return serve(OPENAPI_PATH, Buffer.from(JSON.stringify(document)));
}
