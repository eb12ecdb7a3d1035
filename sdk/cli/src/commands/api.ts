// `partner api METHOD PATH`: any API request with the profile's credentials (like `gh api`).
import { SDK_VERSION } from '@partner/sdk';
import { EXIT, parseJson, readAll, readText, UsageError, type Command, type Context } from '../command.js';

export const API_COMMANDS: Record<string, Command> = {
  api: {
    usage: 'api METHOD PATH [--data JSON|@FILE|-] [-H "Name: value"]... [-i]',
    summary: 'any API request, authenticated, printing the answer as it is (exit code from its status)',
    examples: ['partner api GET /v1/policies?limit=2', 'partner api GET /v1/jobs/job_0199a3e47c1d7b529a0e3f2d4c5b6a72 -H "Prefer: wait=10"', 'partner api POST /v1/submissions --data @app.json -H "Idempotency-Key: $(uuidgen)" -H "Prefer: wait=15" -i'],
    args: ['METHOD', 'PATH'],
    options: ['data', 'header', 'include'],
    run: (ctx, [method, path]) => apiRequest(ctx, method!, path!),
  },
};

const API_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * `partner api`: the escape hatch (like `gh api`). One request with the profile's token, no retries
 * and no Idempotency-Key unless given (-H), the answer printed as it is; exit 0 for a 2xx, else the
 * exit code of the error it is (4 for 401/403, 3 when retrying may help, 1 otherwise).
 */
async function apiRequest(ctx: Context, rawMethod: string, path: string): Promise<number> {
  const method = rawMethod.toUpperCase();
  if (!API_METHODS.includes(method)) throw new UsageError(`METHOD is one of ${API_METHODS.join(', ')}`);
  if (!/^\/v1(\/|\?|$)/.test(path)) throw new UsageError('PATH starts with /v1, e.g. /v1/policies?limit=5');
  const headers = new Headers({ accept: 'application/json', 'user-agent': `partner-cli/${SDK_VERSION}` });
  for (const h of ctx.values.header ?? []) {
    const colon = h.indexOf(':');
    if (colon <= 0) throw new UsageError(`-H ${JSON.stringify(h)}: write it as "Name: value"`);
    try {
      headers.set(h.slice(0, colon).trim(), h.slice(colon + 1).trim());
    } catch {
      throw new UsageError(`-H ${JSON.stringify(h)} is not a valid header`);
    }
  }
  if (ctx.values.principal !== undefined && !headers.has('x-principal-id')) headers.set('x-principal-id', ctx.values.principal);
  let body: string | undefined;
  const data = ctx.values.data;
  if (data !== undefined) {
    body = data === '-' ? await readAll(ctx.io.stdin) : data.startsWith('@') ? readText(data.slice(1)) : data;
    parseJson(data === '-' ? 'standard input' : data.startsWith('@') ? data.slice(1) : '--data', body);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  }
  // Trailing slashes dropped with a loop (/\/+$/ is quadratic on a long run of them).
  let base = ctx.settings().baseUrl;
  while (base.endsWith('/')) base = base.slice(0, -1);
  base = base.replace(/\/v1$/, '');
  headers.set('authorization', `Bearer ${await ctx.client().accessToken({ signal: ctx.signal })}`);
  const url = `${base}${path}`;
  if (ctx.values.debug) ctx.io.stderr.write(`→ ${method} ${url}\n`);
  const started = Date.now();
  const res = await fetch(url, { method, headers, body, signal: ctx.signal, redirect: 'manual' });
  const text = await res.text();
  const requestId = res.headers.get('x-request-id');
  if (ctx.values.debug) ctx.io.stderr.write(`← ${res.status} in ${Date.now() - started} ms${requestId ? `, request id ${requestId}` : ''}\n`);
  let parsed: unknown;
  try {
    parsed = text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    parsed = undefined;
  }
  if (ctx.values.include) {
    ctx.io.stdout.write(`HTTP ${res.status} ${res.statusText}\n`);
    res.headers.forEach((v, k) => ctx.io.stdout.write(`${k}: ${v}\n`));
    ctx.io.stdout.write('\n');
  }
  if (parsed !== undefined) ctx.out.writeJson(parsed);
  else if (text) ctx.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  if (res.ok) return EXIT.ok;
  const error = (parsed as { error?: { code?: string; retryable?: boolean } } | undefined)?.error;
  ctx.io.stderr.write(`partner: HTTP ${res.status}${error?.code ? ` ${error.code}` : ''}${requestId ? ` (request id ${requestId})` : ''}\n`);
  if (res.status === 401 || res.status === 403) return EXIT.auth;
  return error?.retryable || res.status === 429 || res.status >= 500 ? EXIT.retryable : EXIT.apiError;
}
