// The console's part of the OpenAPI document: POST /v1/console/sessions, and the browser routes under
// /console that the gateway also serves (the link exchange, the pages' HTML shell, the session's own
// details, sign-out and the static files), with the `ConsoleSession*` schemas.
import { apiHeaders, authErrors, baseHeaders, json, param, response, type Obj } from '../../openapi/common.js';
import { ref, type Schema } from '../../openapi/schemas.js';

const LINK_EXAMPLE = {
  url: 'https://api.uat.example.com/console/open?token=cst_Jx8m0Q2vS4kL9aZtYw3nR7bC1dE5fG6hI8jK0lM2nOp',
  expiresAt: '2025-01-31T10:10:00.000Z',
  readOnly: false,
};

const SESSION_INFO_EXAMPLE = {
  tenant: 'acme-insurance',
  partnerId: 'northwind-brokers',
  clientId: 'cli_5f0c2d9a8b7e6f5a4b3c2d1e',
  readOnly: false,
  expiresAt: '2025-01-31T18:00:00.000Z',
  environment: 'uat',
  csrfToken: 'w3K9pQ2xZr7LmN4vB8cD1eF6gH0jT5yU',
};

export const consoleSchemas: Record<string, Schema> = {
  ConsoleSessionInfo: {
    type: 'object',
    additionalProperties: false,
    required: ['tenant', 'partnerId', 'clientId', 'readOnly', 'expiresAt', 'environment', 'csrfToken'],
    properties: {
      tenant: { type: 'string' },
      partnerId: { type: 'string' },
      clientId: { type: 'string', description: 'The client that minted the link: the session acts as it, with its current permissions.' },
      readOnly: { type: 'boolean' },
      expiresAt: { type: 'string', format: 'date-time' },
      environment: { type: 'string', enum: ['uat', 'production'] },
      csrfToken: { type: 'string', description: 'Sent back in `X-CSRF-Token` on every mutation of the session (403 without it).' },
    },
    examples: [SESSION_INFO_EXAMPLE],
  },
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


const HTML_EXAMPLE = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Partner console</title>…';

/** Headers of every /console answer: the base ones and the browser protections. */
const consoleHeaders = (): Obj => ({
  ...baseHeaders(),
  'Content-Security-Policy': {
    description: "`default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'` (no `unsafe-inline`).",
    schema: { type: 'string' },
  },
  'X-Frame-Options': { description: '`DENY`.', schema: { type: 'string', const: 'DENY' } },
  'Referrer-Policy': { description: '`no-referrer`.', schema: { type: 'string', const: 'no-referrer' } },
});

/** A plain HTML page of the console (a page, or the page saying why a link or session cannot be used). */
const htmlPage = (description: string): Obj => ({
  description,
  headers: consoleHeaders(),
  content: { 'text/html': { schema: { type: 'string' }, examples: { page: { value: HTML_EXAMPLE } } } },
});

const CONSOLE_PAGE_NAMES = ['overview', 'requests', 'jobs', 'submissions', 'quotes', 'policies', 'events', 'webhooks'];

export function consolePaths(): Obj {
  return {
    '/console/open': {
      get: {
        operationId: 'openConsoleLink',
        tags: ['Console'],
        summary: 'Open a console link (browser)',
        description:
          'Where a console link points. Exchanges the single-use token for a session, once: sets the session cookie (`HttpOnly`, ' +
          '`SameSite=Strict`, `Path=/`, `Secure` and named `__Host-console_session` when the base URL is https) and goes straight on to ' +
          '`/console/overview`, a URL without the token. A used, expired or forged link, or one whose client was revoked since, answers a plain ' +
          'page saying so and how to get a new link, and sets no cookie.',
        security: [],
        parameters: [{ name: 'token', in: 'query', required: true, description: 'The link\'s single-use token (`cst_…`).', schema: { type: 'string', examples: ['cst_Jx8m0Q2vS4kL9aZtYw3nR7bC1dE5fG6hI8jK0lM2nOp'] } }],
        responses: {
          200: {
            description: 'The session is open: the cookie is set, and the page goes straight on to `/console/overview` (a URL without the token).',
            headers: {
              ...consoleHeaders(),
              Refresh: { description: '`0; url=/console/overview` (the page carries the same meta refresh).', schema: { type: 'string', const: '0; url=/console/overview' } },
              'Set-Cookie': { description: 'The session cookie (its value is never readable by script).', schema: { type: 'string', examples: ['__Host-console_session=css_…; path=/; expires=…; secure; samesite=strict; httponly'] } },
            },
            content: { 'text/html': { schema: { type: 'string' }, examples: { opened: { value: HTML_EXAMPLE } } } },
          },
          403: htmlPage('The link\'s client has been disabled or its tokens revoked since it was minted.'),
          404: htmlPage('The link is not one the service issued (forged, or cut short).'),
          410: htmlPage('The link has already been used, or has expired (10 minutes).'),
          405: response('MethodNotAllowed'),
          503: response('Unavailable'),
        },
      },
    },
    '/console': {
      get: {
        operationId: 'getConsoleHome',
        tags: ['Console'],
        summary: 'The console (browser)',
        description: 'The console\'s overview page for a live session cookie (also at `/console/`); without one, the plain page saying the session has ended.',
        security: [],
        responses: {
          200: htmlPage('The console\'s page (its ES modules render it).'),
          401: htmlPage('No live session: it expired, was signed out, or its client was revoked. Open a new link.'),
          503: response('Unavailable'),
        },
      },
    },
    '/console/{page}': {
      get: {
        operationId: 'getConsolePage',
        tags: ['Console'],
        summary: 'A console page (browser)',
        description: 'One of the console\'s pages for a live session cookie (the same HTML shell; the page is chosen from the path).',
        security: [],
        parameters: [{ name: 'page', in: 'path', required: true, schema: { type: 'string', enum: CONSOLE_PAGE_NAMES } }],
        responses: {
          200: htmlPage('The page.'),
          401: htmlPage('No live session: it expired, was signed out, or its client was revoked. Open a new link.'),
          404: htmlPage('No such page.'),
          503: response('Unavailable'),
        },
      },
    },
    '/console/session': {
      get: {
        operationId: 'getConsoleSession',
        tags: ['Console'],
        summary: 'The console session (browser)',
        description: 'Who the session cookie\'s session acts as, and the CSRF token its mutations carry in `X-CSRF-Token`. Never the session id.',
        security: [],
        responses: {
          200: { description: 'The session.', headers: consoleHeaders(), content: json(ref('ConsoleSessionInfo')) },
          401: { description: '`unauthenticated`: no live session.', headers: consoleHeaders(), content: json(ref('Error')) },
          503: response('Unavailable'),
        },
      },
    },
    '/console/logout': {
      post: {
        operationId: 'endConsoleSession',
        tags: ['Console'],
        summary: 'Sign out of the console (browser)',
        description: 'Ends the session on every gateway replica and clears the cookie. Needs the session\'s `X-CSRF-Token`.',
        security: [],
        parameters: [{ name: 'X-CSRF-Token', in: 'header', required: false, description: 'The session\'s CSRF token (`GET /console/session`).', schema: { type: 'string' } }],
        responses: {
          204: { description: 'Signed out; the cookie is cleared.', headers: consoleHeaders() },
          403: htmlPage('The CSRF token is missing or wrong.'),
          503: response('Unavailable'),
        },
      },
    },
    '/console/assets/{file}': {
      get: {
        operationId: 'getConsoleAsset',
        tags: ['Console'],
        summary: 'A console file (browser)',
        description: 'The console\'s ES modules and stylesheet, served by the gateway itself (no CDN). Revalidated by `ETag`.',
        security: [],
        parameters: [{ name: 'file', in: 'path', required: true, schema: { type: 'string', examples: ['app.js'] } }, param('IfNoneMatch')],
        responses: {
          200: {
            description: 'The file.',
            headers: { ...consoleHeaders(), ETag: { description: 'The file\'s version.', schema: { type: 'string' } } },
            content: {
              'text/javascript': { schema: { type: 'string' }, examples: { module: { value: "import { api } from './api.js';" } } },
              'text/css': { schema: { type: 'string' }, examples: { stylesheet: { value: 'body { margin: 0; }' } } },
              'text/html': { schema: { type: 'string' }, examples: { shell: { value: HTML_EXAMPLE } } },
            },
          },
          304: { description: 'Not modified: the `If-None-Match` tag is current.', headers: consoleHeaders() },
          404: htmlPage('No such file.'),
        },
      },
    },
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
