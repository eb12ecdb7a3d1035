// POST /v1/console/sessions's part of the OpenAPI document: its path and the `ConsoleSession*` schemas.
// The console's own pages under /console (HTML and static files for a browser) are not API operations
// and are described in docs/partners.md "The console".
import { apiHeaders, authErrors, json, type Obj } from '../../openapi/common.js';
import { ref, type Schema } from '../../openapi/schemas.js';

const LINK_EXAMPLE = {
  url: 'https://api.uat.example.com/console/open?token=cst_Jx8m0Q2vS4kL9aZtYw3nR7bC1dE5fG6hI8jK0lM2nOp',
  expiresAt: '2025-01-31T10:10:00.000Z',
  readOnly: false,
};

export const consoleSchemas: Record<string, Schema> = {
  ConsoleSessionCreate: {
    type: 'object',
    additionalProperties: false,
    properties: {
      readOnly: { type: 'boolean', default: false, description: 'A session that shows no mutating control and refuses every mutation (403).' },
    },
    examples: [{ readOnly: true }, {}],
  },
  ConsoleSessionLink: {
    type: 'object',
    additionalProperties: false,
    required: ['url', 'expiresAt', 'readOnly'],
    properties: {
      url: { type: 'string', format: 'uri', description: 'The single-use sign-in link: open it in a browser within 10 minutes. It works once.' },
      expiresAt: { type: 'string', format: 'date-time', description: 'When the link stops working (10 minutes after minting).' },
      readOnly: { type: 'boolean', description: 'Whether the session the link opens is read-only.' },
    },
    examples: [LINK_EXAMPLE],
  },
};

export function consolePaths(): Obj {
  return {
    '/v1/console/sessions': {
      post: {
        operationId: 'createConsoleSession',
        tags: ['Console'],
        summary: 'Mint a partner console link',
        description:
          'Mints a single-use link to the partner console (a browser view of this partner\'s account), answered at once (not a job). ' +
          'Needs `requests/read`. Mint it on your server, where the client credentials are, and hand the `url` to the person who opens it: ' +
          'opening it within 10 minutes exchanges it, once, for a session cookie (`HttpOnly`, `SameSite=Strict`, `Secure`; 8 h by default) ' +
          'and redirects to the console; no bearer token ever reaches the browser. The session sees and does exactly what this client may ' +
          '(its current permissions), ends when the client is disabled or its tokens are revoked, and with `readOnly` shows no mutating ' +
          'control and refuses mutations (403). Every mutation from the console is the same job the API runs, with CSRF protection. ' +
          'A console session cannot mint another link (403). The body may be empty.',
        requestBody: {
          required: false,
          description: 'Optional; at most 1 KiB of JSON.',
          content: { 'application/json': { schema: ref('ConsoleSessionCreate'), examples: { readOnly: { value: { readOnly: true } }, full: { value: {} } } } },
        },
        responses: {
          201: {
            description: 'The link.',
            headers: apiHeaders(),
            content: { 'application/json': { schema: ref('ConsoleSessionLink'), examples: { link: { value: LINK_EXAMPLE } } } },
          },
          413: { description: '`payload_too_large`: the body is over 1 KiB.', headers: apiHeaders(), content: json(ref('Error')) },
          415: { description: '`unsupported_media_type`: the body is not `application/json`.', headers: apiHeaders(), content: json(ref('Error')) },
          ...authErrors(),
        },
      },
    },
  };
}
