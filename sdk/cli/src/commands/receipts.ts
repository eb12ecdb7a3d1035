// `partner receipts list|verify|keys`: the signed receipts of what was received, listed from the
// API, and verified offline (signatures, claims, the chain) against a saved copy of the keys.
import { ReceiptVerificationError, verifyChain, type ReceiptItem, type ReceiptKeySet, type ReceiptListParams } from '@partner/sdk';
import { EXIT, intOption, readAll, readJsonFile, readText, showList, UsageError, type Command, type Context } from '../command.js';

const COLUMNS: [string, string][] = [
  ['seq', 'seq'],
  ['kind', 'kind'],
  ['submissionId', 'submission'],
  ['issuedAt', 'issued'],
];

/**
 * The receipts in a file's text: the JSON of `partner receipts list --json` (a page, or its items),
 * an array of compact JWS strings, a create's result ({receipt}), or compact JWS lines.
 */
export function receiptsIn(source: string, text: string): string[] {
  const trimmed = text.trim();
  if (trimmed === '') throw new UsageError(`${source} holds no receipts`);
  if (!/^[[{"]/.test(trimmed)) return trimmed.split(/\s+/);
  let value: unknown;
  try {
    value = JSON.parse(trimmed) as unknown;
  } catch (err) {
    throw new UsageError(`${source} is not valid JSON: ${(err as Error).message}`);
  }
  const items = typeof value === 'object' && value !== null && 'items' in value ? (value as { items: unknown }).items : value;
  const list = Array.isArray(items) ? items : [items];
  return list.map((x, i) => {
    if (typeof x === 'string') return x;
    if (typeof x === 'object' && x !== null) {
      const r = x as { jws?: unknown; receipt?: unknown };
      if (typeof r.jws === 'string') return r.jws;
      if (typeof r.receipt === 'string') return r.receipt;
    }
    throw new UsageError(`${source}: item ${i + 1} is not a receipt (a compact JWS, or an object with jws or receipt)`);
  });
}

async function verify(ctx: Context, [file]: string[]): Promise<number> {
  if (!ctx.values.jwks) throw new UsageError('--jwks is required: a copy of the receipt keys (partner receipts keys > jwks.json)');
  const jwks = readJsonFile(ctx.values.jwks) as ReceiptKeySet;
  if (!jwks || !Array.isArray(jwks.keys)) throw new UsageError(`${ctx.values.jwks} is not a key set ({"keys": [...]})`);
  const source = !file || file === '-' ? 'standard input' : file;
  const text = !file || file === '-' ? await readAll(ctx.io.stdin) : readText(file);
  const receipts = receiptsIn(source, text);
  try {
    const claims = await verifyChain(receipts, jwks);
    const first = claims[0]!;
    const last = claims[claims.length - 1]!;
    ctx.out.record({
      valid: true,
      receipts: claims.length,
      tenant: first.tenant,
      partnerId: first.partnerId,
      firstSeq: first.seq,
      lastSeq: last.seq,
      keys: [...new Set(receipts.map((jws) => (JSON.parse(Buffer.from(jws.split('.')[0]!, 'base64url').toString('utf8')) as { kid?: string }).kid))],
    });
    return EXIT.ok;
  } catch (err) {
    if (!(err instanceof ReceiptVerificationError)) throw err;
    ctx.out.record({ valid: false, ...(err.seq !== undefined ? { brokenAtSeq: err.seq } : {}), error: err.message });
    ctx.out.note(`receipts verify: ${err.message}`);
    return EXIT.apiError;
  }
}

export const RECEIPT_COMMANDS: Record<string, Command> = {
  'receipts list': {
    usage: 'receipts list [--submission SUBMISSION_ID] [--after-seq SEQ] [--limit N] [--cursor C] [--all]',
    summary: 'your signed receipts in seq order (the whole chain, or one submission\'s); keep them with the keys',
    examples: ['partner receipts list --all --json > receipts.json', 'partner receipts list --submission 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71', 'partner receipts list --after-seq 41 --all'],
    args: [],
    options: ['submission', 'after-seq', 'limit', 'cursor', 'all'],
    run: async (ctx) => {
      const v = ctx.values;
      const limit = intOption(v, 'limit');
      if (v['after-seq'] !== undefined && !/^\d+$/.test(v['after-seq'])) throw new UsageError('--after-seq must be a whole number');
      if (v.submission !== undefined && v['after-seq'] !== undefined) throw new UsageError('--submission and --after-seq do not go together');
      const params: ReceiptListParams = {
        ...(v['after-seq'] !== undefined ? { afterSeq: Number(v['after-seq']) } : {}),
        ...(limit !== undefined ? { limit } : {}),
      };
      const client = ctx.client();
      const id = v.submission;
      if (id !== undefined) {
        const { afterSeq: _unused, ...page } = params;
        return showList<ReceiptItem>(
          ctx,
          (cursor) => client.listSubmissionReceipts(id, { ...page, ...(cursor ? { cursor } : {}) }, { signal: ctx.signal }),
          async function* () {
            let cursor: string | undefined;
            do {
              const p = await client.listSubmissionReceipts(id, { ...page, ...(cursor ? { cursor } : {}) }, { signal: ctx.signal });
              yield* p.items;
              cursor = p.nextCursor ?? undefined;
            } while (cursor);
          },
          COLUMNS,
        );
      }
      return showList<ReceiptItem>(
        ctx,
        (cursor) => client.listReceipts({ ...params, ...(cursor ? { cursor } : {}) }, { signal: ctx.signal }),
        () => client.iterateReceipts(params, { signal: ctx.signal }),
        COLUMNS,
      );
    },
  },
  'receipts verify': {
    usage: 'receipts verify [FILE|-] --jwks FILE',
    summary: 'verify receipts offline: each signature and its claims, and the chain (seq without gaps, each prev); exit 1 naming the first broken link',
    examples: [
      'partner receipts verify receipts.json --jwks jwks.json          # offline: signatures, claims and the chain',
      'partner receipts list --all --json | partner receipts verify - --jwks jwks.json',
    ],
    args: ['FILE'],
    optionalArgs: 1,
    options: ['jwks'],
    run: verify,
  },
  'receipts keys': {
    usage: 'receipts keys',
    summary: 'print the receipt public keys (a JWKS; every key ever used): save them to verify offline',
    examples: ['partner receipts keys > jwks.json'],
    args: [],
    options: [],
    run: async (ctx) => {
      ctx.out.writeJson(await ctx.client().getReceiptKeys({ signal: ctx.signal }));
      return EXIT.ok;
    },
  },
};
