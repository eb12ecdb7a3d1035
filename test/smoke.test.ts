import { afterAll, beforeAll, expect, it } from 'vitest';
import { Stack } from './support/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await Stack.create();
  await stack.startAuth();
  await stack.startGateway();
});
afterAll(() => stack?.stop());

it('token then health', async () => {
  const c = await stack.createClient();
  const t = await stack.token(c);
  const r = await stack.api('GET', '/v1/health', { token: t });
  expect(r.status).toBe(200);
  expect(r.body).toEqual({ status: 'ok', tenant: c.tenant, partnerId: c.partnerId, principalId: null });
});
