// GET / (the index) from the gateway's settings: the docs a deployment names (DOCS_URL), else the
// reference; the token URL from an issuer written with a trailing slash.
import { describe, expect, it } from 'vitest';
import { EnvReader } from '@partner/shared/config/env';
import { readGatewayConfig } from '../config.js';
import type { GatewayContext } from '../context.js';
import { API_VERSION } from './document.js';
import { apiIndexRoute } from './route.js';

function get(env: Record<string, string>, path = '/'): { answered: boolean; body?: unknown } {
  const route = apiIndexRoute(readGatewayConfig(new EnvReader(env)));
  const ctx = { path, method: 'GET', state: {}, set: () => undefined } as unknown as GatewayContext & { body?: Buffer };
  const answered = route(ctx);
  return { answered, body: ctx.body ? JSON.parse(ctx.body.toString()) : undefined };
}

describe('the index at /', () => {
  it("names this environment's reference, token URL and scope, and the docs the deployment gives", () => {
    const env = { BASE_URL: 'https://api.uat.example.com', AUTH_ISSUER: 'https://auth.uat.example.com/', ENVIRONMENT: 'uat' };
    expect(get(env).body).toEqual({
      name: 'Partner Submission API',
      apiVersion: API_VERSION,
      environment: 'uat',
      openapi: 'https://api.uat.example.com/v1/openapi.json',
      tokenUrl: 'https://auth.uat.example.com/oauth2/token',
      scope: 'api.uat.example.com/access',
      docs: 'https://api.uat.example.com/v1/openapi.json',
    });
    expect(get({ ...env, ENVIRONMENT: 'production', DOCS_URL: 'https://partners.example.com/guide' }).body).toMatchObject({
      environment: 'production',
      docs: 'https://partners.example.com/guide',
    });
  });

  it('takes only its exact path', () => {
    expect(get({}, '/v1/health').answered).toBe(false);
    expect(get({}, '//').answered).toBe(false);
  });
});
