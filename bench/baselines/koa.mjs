// Baselines (a) and (b) of the bench: the least a Koa + @koa/router JSON endpoint costs on this
// machine, alone (BASELINE_MODE=bare) and with jose ES256 verification of the same access token the
// product gets (BASELINE_MODE=jose: the JWKS key imported once at start, jwtVerify on every request,
// no cache). Answers GET /v1/health; GET /readyz tells the bench it is listening.
import Koa from 'koa';
import Router from '@koa/router';
import { importJWK, jwtVerify } from 'jose';

const mode = process.env.BASELINE_MODE ?? 'bare';
const port = Number(process.env.PORT ?? 0);

let verify;
if (mode === 'jose') {
  const jwks = await (await fetch(process.env.JWKS_URL)).json();
  const keys = new Map();
  for (const jwk of jwks.keys) keys.set(jwk.kid, await importJWK(jwk, 'ES256'));
  const options = { issuer: process.env.ISSUER, audience: process.env.AUDIENCE, algorithms: ['ES256'] };
  verify = async (token) => (await jwtVerify(token, (h) => keys.get(h.kid), options)).payload;
}

const app = new Koa();
const router = new Router();
router.get('/readyz', (ctx) => {
  ctx.body = { status: 'ok' };
});
router.get('/v1/health', async (ctx) => {
  if (verify) {
    const m = /^Bearer +(\S+)$/i.exec(ctx.get('authorization'));
    try {
      const p = await verify(m?.[1] ?? '');
      ctx.body = { status: 'ok', tenant: p.tenant, partnerId: p.partner_id, principalId: null };
    } catch {
      ctx.status = 401;
      ctx.body = { error: { code: 'invalid_token', message: 'bad token', retryable: false } };
    }
    return;
  }
  ctx.body = { status: 'ok', tenant: 'bench', partnerId: 'bench-partner', principalId: null };
});
app.use(router.routes());
app.listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
