// GET /v1/policies and GET /v1/policies/{id} (policies/read), answered by the policy service.
// The query string is validated here, every bad parameter reported at once in `details`
// (400 validation_error): unknown or repeated parameters, limit 1..200, status, productId,
// policyNumber, updatedSince (timestampParam: RFC 3339, years 0001–9999). The cursor is opaque to
// the gateway: the policy service
// issued it, signed it, and checks that it belongs to this caller and these filters.
import type Router from '@koa/router';
import { Readable } from 'node:stream';
import { openServerStream, serviceDefs } from '@partner/shared/grpc';
import type { PolicyDocument__Output } from '@partner/shared/generated/partner/policy/v1/PolicyDocument';
import { etagMatches } from '../attachments/routes.js';
import { contentDisposition } from '../attachments/file-names.js';
import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import { isUuid } from '@partner/shared/domain/ids';
import type { Policy__Output } from '@partner/shared/generated/partner/policy/v1/Policy';
import type { ListPoliciesRequest } from '@partner/shared/generated/partner/policy/v1/ListPoliciesRequest';
import { grpcOptions, ownerOf, type GatewayContext, type GatewayState } from '../../context.js';
import type { RouteDeps } from '../deps.js';
import { POLICY_STATUS, policyRecordOf } from '@partner/shared/domain/policies';
import { invalidQuery, pageParams, singleParams, timestampParam } from '../../http/list-query.js';

const LIST_PARAMS = new Set(['limit', 'cursor', 'status', 'productId', 'policyNumber', 'updatedSince']);
const POLICY_NUMBER_MAX = 64;
export function parseListQuery(ctx: GatewayContext): Omit<ListPoliciesRequest, 'owner'> {
  const details: ErrorDetail[] = [];
  const params = singleParams(ctx.querystring, LIST_PARAMS, details);
  const req: Omit<ListPoliciesRequest, 'owner'> = { ...pageParams(params, details) };

  const status = params.get('status');
  if (status !== undefined) {
    if (POLICY_STATUS.is(status)) req.status = POLICY_STATUS.toProto(status);
    else details.push({ field: 'status', issue: `must be one of ${POLICY_STATUS.names.join(', ')}` });
  }
  const productId = params.get('productId');
  if (productId !== undefined) {
    if (isUuid(productId)) req.productId = productId.toLowerCase();
    else details.push({ field: 'productId', issue: 'must be a UUID' });
  }
  const policyNumber = params.get('policyNumber');
  if (policyNumber !== undefined) {
    const length = [...policyNumber].length;
    if (length >= 1 && length <= POLICY_NUMBER_MAX && !/\p{C}/u.test(policyNumber) && policyNumber.trim() === policyNumber) {
      req.policyNumber = policyNumber;
    } else {
      details.push({ field: 'policyNumber', issue: `must be 1-${POLICY_NUMBER_MAX} characters without control characters or surrounding spaces` });
    }
  }
  const updatedSince = timestampParam(params, 'updatedSince', details);
  if (updatedSince !== undefined) req.updatedSince = updatedSince;
  if (details.length > 0) throw invalidQuery(details);
  return req;
}

/** The API's policy record (shared with the worker's bind result). */
export const policyRecord = (p: Policy__Output): Record<string, unknown> => policyRecordOf(p);

export function policyRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  const callOptions = (ctx: GatewayContext) => grpcOptions(ctx, deps.config.grpcTimeoutMs);

  router.get('/policies', deps.guard('policies/read'), async (ctx) => {
    const query = parseListQuery(ctx);
    const res = await deps.clients.policy.ListPolicies(
      { owner: ownerOf(ctx), ...query },
      callOptions(ctx),
    );
    ctx.body = { items: res.policies.map(policyRecord), nextCursor: res.nextPageToken || null };
  });

  router.get('/policies/:id', deps.guard('policies/read'), async (ctx) => {
    const details: ErrorDetail[] = [];
    singleParams(ctx.querystring, new Set(), details);
    if (details.length > 0) throw invalidQuery(details);
    const id = ctx.params.id ?? '';
    // A malformed id names no policy: 404 like an unknown one, without asking the policy service.
    if (!isUuid(id)) throw notFound('policy');
    const res = await deps.clients.policy.GetPolicy(
      { owner: ownerOf(ctx), policyId: id.toLowerCase() },
      callOptions(ctx),
    );
    if (!res.policy) throw new DomainError('internal', 'internal error');
    ctx.body = policyRecord(res.policy);
  });

  // Documents of a policy (the declarations PDF of one a bind issued): policies/read.
  const documentIds = (ctx: GatewayContext): { policyId: string; documentId?: string } => {
    const details: ErrorDetail[] = [];
    singleParams(ctx.querystring, new Set(), details);
    if (details.length > 0) throw invalidQuery(details);
    const policyId = ctx.params.id ?? '';
    if (!isUuid(policyId)) throw notFound('policy');
    const documentId = ctx.params.documentId;
    if (documentId !== undefined && !isUuid(documentId)) throw notFound('document');
    return { policyId: policyId.toLowerCase(), ...(documentId !== undefined ? { documentId: documentId.toLowerCase() } : {}) };
  };

  router.get('/policies/:id/documents', deps.guard('policies/read'), async (ctx) => {
    const { policyId } = documentIds(ctx);
    const res = await deps.clients.policy.ListPolicyDocuments({ owner: ownerOf(ctx), policyId }, callOptions(ctx));
    ctx.body = { items: res.documents.map(documentRecord) };
  });

  router.get('/policies/:id/documents/:documentId/content', deps.guard('policies/read'), async (ctx) => {
    const { policyId, documentId } = documentIds(ctx);
    const stream = openServerStream(deps.clients.policy, serviceDefs().policy, 'ReadPolicyDocumentContent', { owner: ownerOf(ctx), policyId, documentId }, {
      timeoutMs: deps.config.grpcTimeoutMs,
    });
    const chunks = stream[Symbol.asyncIterator]();
    // The record comes first (a 404 is still a 404 here, before the status line).
    const first = await chunks.next();
    const doc = first.done ? undefined : first.value.document;
    if (!doc) {
      await chunks.return?.();
      throw notFound('document');
    }
    const etag = `"${doc.sha256}"`;
    ctx.set('ETag', etag);
    if (etagMatches(ctx.get('if-none-match'), etag)) {
      await chunks.return?.();
      ctx.status = 304;
      return;
    }
    const size = Number(doc.sizeBytes);
    ctx.set('Content-Type', doc.contentType);
    ctx.set('Content-Disposition', contentDisposition(doc.fileName));
    async function* body(): AsyncGenerator<Buffer> {
      let sent = 0;
      try {
        for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
          sent += next.value.chunk.length;
          yield next.value.chunk;
          if (sent >= size) return;
        }
        throw new DomainError('internal', 'the document content ended early');
      } finally {
        await chunks.return?.();
      }
    }
    ctx.status = 200;
    ctx.body = Readable.from(body(), { objectMode: false });
    ctx.length = size;
  });
}

/** A policy document as the API shows it. */
export function documentRecord(d: PolicyDocument__Output): Record<string, unknown> {
  return {
    documentId: d.documentId,
    kind: d.kind,
    fileName: d.fileName,
    contentType: d.contentType,
    sizeBytes: Number(d.sizeBytes),
    sha256: d.sha256,
    createdAt: d.createdAt,
  };
}
