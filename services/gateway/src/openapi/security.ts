// The OpenAPI document's security: one OAuth2 client-credentials scheme, carrying the environment's
// token URL and access scope. Every operation needs it unless it says `security: []`.
import type { Obj } from './common.js';
import type { OpenApiOptions } from './options.js';

export const SECURITY_SCHEME = 'partnerOAuth';

/** `components.securitySchemes` for one environment. */
export function securitySchemes(opts: Pick<OpenApiOptions, 'tokenUrl' | 'scope' | 'environment'>): Obj {
  return {
    [SECURITY_SCHEME]: {
      type: 'oauth2',
      description:
        'OAuth 2.0 client credentials (RFC 6749 §4.4). POST the token URL with HTTP Basic client authentication (client id and ' +
        'secret, each form-urlencoded) and the form body `grant_type=client_credentials&scope=<the access scope>`. The answer is ' +
        '`{access_token, token_type: "Bearer", expires_in}`: cache the token and reuse it until shortly before `expires_in` runs out. ' +
        'Token errors follow RFC 6749 §5.2 (`{error, error_description}`): 401 `invalid_client`, 400 `invalid_request`, ' +
        '`unsupported_grant_type` or `invalid_scope`, 429 `temporarily_unavailable` after too many failed attempts, 503 ' +
        '`temporarily_unavailable` while the token service cannot reach its database (both with `Retry-After`). ' +
        "A token with another environment's scope is refused here with 403 `insufficient_scope`. Besides the scope, every " +
        'operation needs a permission provisioned to the client; without it the answer is 403 `forbidden`.',
      flows: {
        clientCredentials: {
          tokenUrl: opts.tokenUrl,
          scopes: { [opts.scope]: `Access to the ${opts.environment} environment's API.` },
        },
      },
    },
  };
}
