// `partner receipts list|verify|keys`: the signed receipts of what was received, listed from the
// API, and verified offline (signatures, claims, the chain) against a saved copy of the keys.
import { receiptHash, ReceiptVerificationError, verifyChain, type ReceiptItem, type ReceiptKeySet, type ReceiptListParams, type VerifyChainOptions } from '@partner/sdk';
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

/**
 * Where the check starts: seq 1 (the whole chain), or a declared start (--from-seq N --prev HASH, the
 * hash of receipt N-1 the chain links to: the lastHash a check of the receipts before printed).
 */
function declaredStart(ctx: Context): VerifyChainOptions | undefined {
  const { 'from-seq': fromSeq, prev } = ctx.values;
  if (fromSeq === undefined) {
    if (prev !== undefined) throw new UsageError('--prev goes with --from-seq: the seq of the first receipt in the file');
    return undefined;
  }
  if (!/^\d+$/.test(fromSeq) || Number(fromSeq) < 1 || !Number.isSafeInteger(Number(fromSeq))) throw new UsageError('--from-seq must be a whole number from 1');
  const seq = Number(fromSeq);
  if (seq === 1) {
    if (prev !== undefined) throw new UsageError('seq 1 links to no receipt: --from-seq 1 takes no --prev');
    return { fromSeq: 1 };
  }
  if (prev === undefined) throw new UsageError(`--from-seq ${seq} needs --prev: the hash of receipt ${seq - 1} (the lastHash of the check that ended there)`);
  if (!/^[0-9a-fA-F]{64}$/.test(prev)) throw new UsageError('--prev must be a SHA-256 in hex (64 characters)');
  return { fromSeq: seq, prev: prev.toLowerCase() };
}

async function verify(ctx: Context, [file]: string[]): Promise<number> {
  if (!ctx.values.jwks) throw new UsageError('--jwks is required: a copy of the receipt keys (partner receipts keys > jwks.json)');
  const start = declaredStart(ctx);
  const jwks = readJsonFile(ctx.values.jwks) as ReceiptKeySet;
  if (!jwks || !Array.isArray(jwks.keys)) throw new UsageError(`${ctx.values.jwks} is not a key set ({"keys": [...]})`);
  const source = !file || file === '-' ? 'standard input' : file;
  const text = !file || file === '-' ? await readAll(ctx.io.stdin) : readText(file);
  const receipts = receiptsIn(source, text);
  if (receipts.length === 0) throw new UsageError(`${source} holds no receipts`);
  // What the check started from, in its output either way: the whole chain, or from a declared receipt on.
  const from = start?.prev ? { start: 'declared', fromSeq: start.fromSeq, prev: start.prev } : { start: 'seq 1' };
  try {
    const claims = await verifyChain(receipts, jwks, start);
    const first = claims[0]!;
    const last = claims[claims.length - 1]!;
    ctx.out.record({
      valid: true,
      ...from,
      receipts: claims.length,
      tenant: first.tenant,
      partnerId: first.partnerId,
      firstSeq: first.seq,
      lastSeq: last.seq,
      // What the next check links to: --from-seq lastSeq+1 --prev lastHash.
      lastHash: receiptHash(receipts[receipts.length - 1]!),
      keys: [...new Set(receipts.map((jws) => (JSON.parse(Buffer.from(jws.split('.')[0]!, 'base64url').toString('utf8')) as { kid?: string }).kid))],
    });
    if (start?.prev) ctx.out.note(`checked from the declared seq ${start.fromSeq} (prev ${start.prev}); the receipts before it were not in this check`);
    return EXIT.ok;
  } catch (err) {
    if (!(err instanceof ReceiptVerificationError)) throw err;
    ctx.out.record({
      valid: false,
      ...from,
      ...(err.seq !== undefined ? { brokenAtSeq: err.seq } : {}),
      ...(err.missing ? { missing: err.missing } : {}),
      error: err.message,
    });
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
    usage: 'receipts verify [FILE|-] --jwks FILE [--from-seq N --prev HASH]',
    summary:
      'verify receipts offline: each signature and its claims, and the chain: from seq 1 (or from --from-seq N, linked by --prev to receipt N-1), seq without gaps, each prev the hash of the one before; exit 1 naming the first broken link or the receipts missing',
    examples: [
      'partner receipts verify receipts.json --jwks jwks.json          # offline: signatures, claims and the whole chain from seq 1',
      'partner receipts list --all --json | partner receipts verify - --jwks jwks.json',
      'partner receipts list --after-seq 41 --all --json > newer.json',
      'partner receipts verify newer.json --jwks jwks.json --from-seq 42 --prev <lastHash of the check up to 41>',
    ],
    args: ['FILE'],
    optionalArgs: 1,
    options: ['jwks', 'from-seq', 'prev'],
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
