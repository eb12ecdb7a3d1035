// `partner quotes bind QUOTE_ID`: accept an open quote's offer (a job; prints the policy issued), and
// `partner policies documents POLICY_ID [--download DIR]`: a policy's documents (its declarations
// PDF), saved under DIR with their sha256 checked. The offer accepted is the quote's current `offer`
// (read with GET /v1/quotes/{id}) unless --offer gives the JWS read earlier: the SDK hashes it.
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { PartnerApiError, PartnerError, SDK_VERSION } from '@partner/sdk';
import { EXIT, mutation, UsageError, type Command, type Context } from '../command.js';

/** The quote's current offer, read with the profile's credentials. */
async function currentOffer(ctx: Context, quoteId: string): Promise<string> {
  let base = ctx.settings().baseUrl;
  while (base.endsWith('/')) base = base.slice(0, -1);
  base = base.replace(/\/v1$/, '');
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': `partner-cli/${SDK_VERSION}`,
    authorization: `Bearer ${await ctx.client().accessToken({ signal: ctx.signal })}`,
    ...(ctx.values.principal !== undefined ? { 'x-principal-id': ctx.values.principal } : {}),
  };
  const res = await fetch(`${base}/v1/quotes/${encodeURIComponent(quoteId)}`, { headers, signal: ctx.signal });
  const body = (await res.json().catch(() => undefined)) as { offer?: string | null; status?: string; error?: { code: string; message: string; retryable: boolean } } | undefined;
  if (!res.ok) {
    const e = body?.error;
    throw new PartnerApiError({ status: res.status, code: e?.code ?? 'internal', message: e?.message ?? `GET /v1/quotes/${quoteId} answered ${res.status}`, retryable: e?.retryable ?? false, requestId: res.headers.get('x-request-id') ?? undefined } as never);
  }
  if (typeof body?.offer !== 'string') throw new UsageError(`the quote is ${body?.status ?? 'not open'}: it has no offer to accept`, { usageHint: false });
  return body.offer;
}

async function saveDocument(ctx: Context, policyId: string, doc: { documentId: string; fileName: string; sha256: string }, dir: string): Promise<Record<string, unknown>> {
  const dl = await ctx.client().policies.downloadDocument(policyId, doc.documentId, { signal: ctx.signal });
  const file = join(dir, doc.fileName.replace(/[^A-Za-z0-9._-]/g, '_'));
  if (existsSync(file) && !ctx.values.force) {
    await dl.body.cancel().catch(() => undefined);
    throw new UsageError(`${file} exists; use --force to replace it`, { usageHint: false });
  }
  const hash = createHash('sha256');
  let bytes = 0;
  const partial = `${file}.partial`;
  try {
    await dl.body
      .pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            hash.update(chunk);
            bytes += chunk.byteLength;
            controller.enqueue(chunk);
          },
        }),
      )
      .pipeTo(Writable.toWeb(createWriteStream(partial, { mode: 0o600 })), { signal: ctx.signal });
    const sha256 = hash.digest('hex');
    if (sha256 !== doc.sha256) throw new PartnerError(`the download is corrupt (sha256 ${sha256}, expected ${doc.sha256}); try again`, true);
    renameSync(partial, file);
    return { documentId: doc.documentId, file, bytes, sha256 };
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
}

export const BIND_COMMANDS: Record<string, Command> = {
  'quotes bind': {
    usage: 'quotes bind QUOTE_ID [--offer JWS] [--wait SECONDS] [--idempotency-key KEY]',
    summary: "accept an open quote's offer and print the policy issued (exit 1 with quote_not_open / offer_changed / not_quotable)",
    examples: [
      'partner quotes bind 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71                      # accepts the offer the quote shows now',
      'partner quotes bind 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71 --offer "$OFFER_JWS"   # exactly the offer read before',
    ],
    args: ['QUOTE_ID'],
    options: ['offer', 'wait', 'idempotency-key'],
    run: async (ctx, [quoteId]) => {
      const offer = ctx.values.offer ?? (await currentOffer(ctx, quoteId!));
      const client = ctx.client();
      return mutation(ctx, 'bind', (opts) => client.quotes.bind(quoteId!, offer, opts), (opts) => client.quotes.startBind(quoteId!, offer, opts));
    },
  },
  'policies documents': {
    usage: 'policies documents POLICY_ID [--download DIR] [--force]',
    summary: "a policy's documents (its declarations PDF); --download saves each under DIR, its sha256 checked",
    examples: ['partner policies documents 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71', 'partner policies documents 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71 --download ./policy-docs'],
    args: ['POLICY_ID'],
    options: ['download', 'force'],
    run: async (ctx, [policyId]) => {
      const list = await ctx.client().policies.documents(policyId!, { signal: ctx.signal });
      const dir = ctx.values.download;
      if (dir === undefined) {
        ctx.out.table(list, list.items as unknown as Record<string, unknown>[], [
          ['kind', 'kind'],
          ['fileName', 'file'],
          ['sizeBytes', 'bytes'],
          ['sha256', 'sha256'],
          ['documentId', 'id'],
        ]);
        return EXIT.ok;
      }
      mkdirSync(resolve(dir), { recursive: true });
      const saved = [];
      for (const doc of list.items) saved.push(await saveDocument(ctx, policyId!, doc, resolve(dir)));
      ctx.out.record({ items: saved });
      return EXIT.ok;
    },
  },
};
