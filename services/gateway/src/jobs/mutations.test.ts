import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import type { GatewayState } from '../context.js';
import { idempotencyKeyOf, idempotencyScope } from './mutations.js';

// The scopes keys are stored under: changing their form would make every key taken before a deploy
// new again after it (a duplicate job within the 24 h window), so they are pinned here.
describe('idempotency scope and key', () => {
  let server: Server;
  let base: string;
  let parses = 0;
  beforeAll(async () => {
    const app = new Koa<GatewayState>();
    const router = new Router<GatewayState>({ prefix: '/v1' });
    const answer = (ids?: (p: Record<string, string>) => Record<string, string>) => (ctx: Koa.ParameterizedContext<GatewayState>) => {
      const before = ctx.state.idempotencyKey;
      const key = idempotencyKeyOf(ctx);
      if (before === undefined) parses++;
      ctx.body = { scope: idempotencyScope(ctx as never, ids?.(ctx.params as Record<string, string>)), key: key ?? null, again: idempotencyKeyOf(ctx) ?? null };
    };
    router.post('/submissions', answer());
    router.post('/submissions/:id/attachments', answer((p) => ({ id: p.id!.toLowerCase() })));
    router.delete('/submissions/:id/attachments/:attachmentId', answer((p) => ({ id: p.id!.toLowerCase(), attachmentId: p.attachmentId!.toLowerCase() })));
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (err) {
        ctx.status = 400;
        ctx.body = { error: (err as Error).message };
      }
    });
    app.use(router.routes());
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server?.close());

  const call = async (method: string, path: string, key?: string) => {
    const r = await fetch(`${base}${path}`, { method, headers: key === undefined ? {} : { 'idempotency-key': key } });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };

  it('is the method and the route with its normalised ids', async () => {
    expect((await call('POST', '/v1/submissions', 'k1')).body).toEqual({ scope: 'POST /v1/submissions', key: 'k1', again: 'k1' });
    expect((await call('POST', '/v1/submissions/ABC/attachments', '"k2"')).body).toMatchObject({ scope: 'POST /v1/submissions/abc/attachments', key: 'k2' });
    expect((await call('DELETE', '/v1/submissions/ABC/attachments/DEF')).body).toEqual({ scope: 'DELETE /v1/submissions/abc/attachments/def', key: null, again: null });
  });

  it('parses the key once per request, and refuses a malformed one', async () => {
    parses = 0;
    await call('POST', '/v1/submissions', 'k3');
    expect(parses).toBe(1);
    expect((await call('POST', '/v1/submissions', 'é')).status).toBe(400);
  });
});
