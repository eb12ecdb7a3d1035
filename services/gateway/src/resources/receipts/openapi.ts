// Signed receipts' part of the OpenAPI document (GET /v1/receipts, GET /v1/submissions/{id}/receipts,
// GET /.well-known/receipt-keys.json): schemas and paths.
import { apiHeaders, authErrors, baseHeaders, json, param, response, type Obj } from '../../openapi/common.js';
import { ref, type Schema } from '../../openapi/schemas.js';

// The shape of a receipt, for illustration: its payload is abridged and its signature is not a real one.
const JWS_EXAMPLE =
  'eyJhbGciOiJFUzI1NiIsImtpZCI6Ik5xX1p2a0FjV2RmM0xUQ0IiLCJ0eXAiOiJyZWNlaXB0K2p3cyJ9.' +
  'eyJpc3MiOiJodHRwczovL2FwaS51YXQuZXhhbXBsZS5jb20iLCJ0ZW5hbnQiOiJkZW1vIiwicGFydG5lcklkIjoiZGVtby1icm9rZXIiLCJzZXEiOjEsInByZXYiOm51bGwsImtpbmQiOiJzdWJtaXNzaW9uLnJlY2VpdmVkIn0.' +
  'c2lnbmF0dXJlLWV4YW1wbGUtb25seS1ub3QtYS1yZWFsLXNpZ25hdHVyZS1leGFtcGxlLW9ubHktbm90LWEtcmVhbA';
const RECEIPT_EXAMPLE = {
  seq: 1,
  kind: 'submission.received',
  submissionId: '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71',
  jws: JWS_EXAMPLE,
  issuedAt: '2026-11-21T12:00:08.012Z',
};
const RECEIPT_KEY_EXAMPLE = {
  kty: 'EC',
  crv: 'P-256',
  x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
  y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
  kid: 'Nq_ZvkAcWdf3LTCB',
  alg: 'ES256',
  use: 'sig',
  signedFrom: '2026-11-01T00:00:00.000Z',
};

export const RECEIPT_JWS_DESCRIPTION =
  'The receipt: a compact JWS (ES256; header `kid`, `typ: "receipt+jws"`) any JOSE library verifies offline against ' +
  '`/.well-known/receipt-keys.json`. Its payload: `{iss, tenant, partnerId, seq, prev, kind, submissionId, jobId, externalRef, ' +
  'receivedAt, iat, content: {canon: "RFC8785", sha256}}` for a submission (`sha256`: lowercase hex SHA-256 of the RFC 8785 ' +
  'canonical form of the create body exactly as sent), `attachment: {attachmentId, fileName, contentType, sizeBytes, sha256}` ' +
  'instead of `content` for an attachment. `seq` counts the partner\'s receipts from 1 without gaps; `prev` is the lowercase hex ' +
  "SHA-256 of the previous receipt's compact JWS (null for seq 1).";

export const receiptSchemas: Record<string, Schema> = {
  ReceiptJws: {
    type: 'string',
    pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
    description: RECEIPT_JWS_DESCRIPTION,
    examples: [JWS_EXAMPLE],
  },
  Receipt: {
    type: 'object',
    additionalProperties: false,
    required: ['seq', 'kind', 'submissionId', 'jws', 'issuedAt'],
    properties: {
      seq: { type: 'integer', minimum: 1, description: "The receipt's place in the partner's chain." },
      kind: { type: 'string', enum: ['submission.received', 'attachment.received', 'bind.received', 'policy.issued'] },
      submissionId: ref('Uuid'),
      jws: ref('ReceiptJws'),
      issuedAt: ref('Timestamp'),
    },
    examples: [RECEIPT_EXAMPLE],
  },
  ReceiptPage: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: ref('Receipt') },
      nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` (with the same filters) for the next page; null on the last page.' },
    },
    examples: [{ items: [RECEIPT_EXAMPLE], nextCursor: null }],
  },
  ReceiptKeySet: {
    type: 'object',
    required: ['keys'],
    description:
      'A JWK Set (RFC 7517) of every receipt public key ever used, newest first. Besides the JWK members each key has ' +
      '`signedFrom` and, once a rotation retired it, `signedUntil` (RFC 3339): the receipts it signed have an `iat` in that range ' +
      '(whole seconds). A key is never removed, so receipts verify forever.',
    properties: {
      keys: {
        type: 'array',
        items: {
          type: 'object',
          required: ['kty', 'kid', 'alg', 'signedFrom'],
          properties: {
            kty: { const: 'EC' },
            crv: { const: 'P-256' },
            x: { type: 'string' },
            y: { type: 'string' },
            kid: { type: 'string' },
            alg: { const: 'ES256' },
            use: { const: 'sig' },
            signedFrom: ref('Timestamp'),
            signedUntil: ref('Timestamp'),
          },
        },
      },
    },
    examples: [{ keys: [RECEIPT_KEY_EXAMPLE] }],
  },
};

export function receiptPaths(): Obj {
  const principal = param('PrincipalId');
  const listResponses = {
    200: { description: 'One page of receipts, in seq order.', headers: apiHeaders(), content: json(ref('ReceiptPage')) },
    400: response('BadRequest'),
    ...authErrors(),
  };
  const keyHeaders = {
    ...baseHeaders(),
    ETag: { description: "The document's entity tag.", schema: { type: 'string' } },
    'Cache-Control': { description: '`public, max-age=300`.', schema: { type: 'string' } },
  };
  return {
    '/v1/receipts': {
      get: {
        operationId: 'listReceipts',
        tags: ['Receipts'],
        summary: "The partner's receipt chain",
        description:
          "Every receipt of the calling partner in `seq` order (1, 2, 3, … without gaps): one per created submission and attachment. " +
          'Keep them: with `/.well-known/receipt-keys.json` they prove offline what was received, and when. An unknown or repeated ' +
          'parameter, a bad `limit`, `afterSeq` or cursor is 400 `validation_error`.',
        parameters: [
          param('Limit'),
          param('Cursor'),
          {
            name: 'afterSeq',
            in: 'query',
            description: 'Only receipts with a greater `seq` (e.g. the last one you stored).',
            schema: { type: 'integer', minimum: 0, examples: [41] },
          },
          principal,
        ],
        responses: listResponses,
      },
    },
    '/v1/submissions/{submissionId}/receipts': {
      parameters: [param('SubmissionId')],
      get: {
        operationId: 'listSubmissionReceipts',
        tags: ['Receipts'],
        summary: "A submission's receipts",
        description: "The submission's receipt and its attachments' receipts, in `seq` order. Another partner's submission is 404.",
        parameters: [param('Limit'), param('Cursor'), principal],
        responses: { ...listResponses, 404: response('NotFound') },
      },
    },
    '/.well-known/receipt-keys.json': {
      get: {
        operationId: 'getReceiptKeys',
        tags: ['Receipts'],
        summary: 'Receipt public keys',
        description:
          'The keys that verify receipts (a JWK Set). Needs no token. Cacheable (`Cache-Control`, `ETag`; `If-None-Match` gives 304); ' +
          "a receipt whose `kid` your copy lacks was signed after a rotation: fetch the document again. Other methods answer 405.",
        security: [],
        parameters: [param('IfNoneMatch')],
        responses: {
          200: {
            description: 'The key set.',
            headers: keyHeaders,
            content: { 'application/jwk-set+json': { schema: ref('ReceiptKeySet') } },
          },
          304: { description: 'Not modified: the `If-None-Match` tag is current.', headers: keyHeaders },
          405: response('MethodNotAllowed'),
          503: response('Unavailable'),
        },
      },
    },
  };
}
