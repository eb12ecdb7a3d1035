import { describe, expect, it } from 'vitest';
import Router from '@koa/router';
import { DomainError } from '@partner/shared/domain/errors';
import { validator } from '../../http/validate.js';
import type { GatewayState } from '../../context.js';
import type { RouteDeps } from '../deps.js';
import { quotePaths } from './openapi.js';
import { parseQuoteRequest, quoteRequestSchema, quoteRoutes } from './routes.js';

const routed = (environment: string): string[] => {
  const router = new Router<GatewayState>({ prefix: '/v1' });
  const deps = { config: { grpcTimeoutMs: 1000, jsonLimitBytes: 1024, environment }, clients: {}, guard: () => async (_c: unknown, next: () => Promise<void>) => next() } as unknown as RouteDeps;
  quoteRoutes(router, deps);
  return router.stack.flatMap((l) => l.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${l.path}`));
};

describe('the quote routes', () => {
  it('route the UAT test helper in UAT only; the production document has no such path', () => {
    expect(routed('uat')).toContain('POST /v1/test_helpers/quotes/:id/decide');
    expect(routed('production')).not.toContain('POST /v1/test_helpers/quotes/:id/decide');
    expect(routed('production')).toEqual(expect.arrayContaining(['POST /v1/submissions/:id/quotes', 'GET /v1/submissions/:id/quotes', 'GET /v1/quotes/:id']));
    expect(Object.keys(quotePaths({ environment: 'uat' }))).toContain('/v1/test_helpers/quotes/{quoteId}/decide');
    expect(Object.keys(quotePaths({ environment: 'production' }))).not.toContain('/v1/test_helpers/quotes/{quoteId}/decide');
  });
});

describe('parseQuoteRequest', () => {
  const validate = validator<{ options: { limit: string; retention: string }[] }>(quoteRequestSchema);
  const fields = (body: unknown): string[] => {
    try {
      parseQuoteRequest(body, validate);
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).code).toBe('validation_error');
      return (err as DomainError).details!.map((d) => d.field);
    }
    throw new Error('accepted');
  };
  const one = { limit: '1000000', retention: '10000' };

  it('keeps 1 to 5 distinct options of decimal strings, in order', () => {
    const options = [one, { limit: '2000000', retention: '25000' }];
    expect(parseQuoteRequest({ options }, validate)).toEqual({ options });
  });

  it.each([
    ['none', { options: [] }],
    ['six', { options: Array.from({ length: 6 }, (_, i) => ({ limit: String(1000000 + i), retention: '0' })) }],
    ['a number', { options: [{ limit: 1000000, retention: '10000' }] }],
    ['not decimal', { options: [{ limit: '1e6', retention: '10000' }] }],
    ['a missing retention', { options: [{ limit: '1000000' }] }],
    ['an unknown key', { options: [{ ...one, deductible: '5' }] }],
    ['duplicates', { options: [one, { ...one }] }],
    ['not a list', { options: 'x' }],
  ])('names options for %s', (_name, body) => {
    expect(fields(body)).toEqual(expect.arrayContaining(['options']));
    expect(fields(body).every((f) => f === 'options')).toBe(true);
  });

  it('names an unknown top-level field by its name', () => {
    expect(fields({ options: [one], extra: 1 })).toEqual(['extra']);
  });
});
