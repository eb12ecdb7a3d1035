// GET /v1/openapi.json: the machine-readable reference, served without a token. The document is
// built and serialised once, when the app is built, for this environment (servers = {base_url}, the
// OAuth2 token URL and access scope); a request costs one write of a cached buffer.
import { DomainError } from '@partner/shared/domain/errors';
import type { GatewayContext } from '../context.js';
import type { GatewayConfig } from '../config.js';
import { buildOpenApiDocument } from './document.js';

export const OPENAPI_PATH = '/v1/openapi.json';
const ALLOW = 'GET, HEAD';

/**
 * Answers GET /v1/openapi.json (the pipeline asks before authentication); returns whether the request
 * was for the document.
 */
export function openapiRoute(config: Pick<GatewayConfig, 'baseUrl' | 'issuer' | 'scope' | 'environment' | 'jsonMaxValues'>): (ctx: GatewayContext) => boolean {
  // The issuer without trailing slashes (a loop: /\/+$/ is quadratic on a long run of them).
  let issuer = config.issuer;
  while (issuer.endsWith('/')) issuer = issuer.slice(0, -1);
  const document = buildOpenApiDocument({
    baseUrl: config.baseUrl,
    tokenUrl: `${issuer}/oauth2/token`,
    scope: config.scope,
    environment: config.environment,
    jsonMaxValues: config.jsonMaxValues,
  });
  const body = Buffer.from(JSON.stringify(document));

  return (ctx) => {
    // Exactly this path, as every other (a trailing slash makes an unknown path).
    if (ctx.path !== OPENAPI_PATH) return false;
    ctx.state.route = OPENAPI_PATH;
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
