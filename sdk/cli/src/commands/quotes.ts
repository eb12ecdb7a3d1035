// `partner quotes request|get|list|verify-offer`: price a submission's options (a job, like every
// mutation), read the quotes, and verify an offer offline against a saved copy of the receipt keys
// (`partner receipts keys > jwks.json`), the same keys that sign receipts.
import { offerHash, OfferVerificationError, verifyOffer, type Quote, type QuoteListParams, type QuoteStatus, type ReceiptKeySet } from '@partner/sdk';
import { EXIT, intOption, mutation, parseJson, readAll, readJsonFile, readText, showList, UsageError, type Command } from '../command.js';

export const QUOTE_STATUSES: QuoteStatus[] = ['open', 'referred', 'declined', 'bound', 'expired', 'superseded', 'not_taken'];

const COLUMNS: [string, string][] = [
  ['status', 'status'],
  ['option.limit', 'limit'],
  ['option.retention', 'retention'],
  ['premium.amount', 'premium'],
  ['premium.currency', ''],
  ['validUntil', 'valid until'],
  ['quoteId', 'id'],
];

/** `--option LIMIT/RETENTION`, repeated: the request's options in order. */
export function parseOptions(raw: string[] | undefined): { limit: string; retention: string }[] {
  if (!raw || raw.length === 0) throw new UsageError('give at least one --option LIMIT/RETENTION, e.g. --option 1000000/10000');
  return raw.map((o) => {
    const m = /^([0-9]+(?:\.[0-9]{1,2})?)\/([0-9]+(?:\.[0-9]{1,2})?)$/.exec(o.trim());
    if (!m) throw new UsageError(`--option ${o}: write it LIMIT/RETENTION with decimal amounts, e.g. 1000000/10000`);
    return { limit: m[1]!, retention: m[2]! };
  });
}

/** The offer in a file's text: a quote's JSON (`partner quotes get --json`) or a compact JWS. */
export function offerIn(source: string, text: string): { jws: string; quote?: Quote } {
  const trimmed = text.trim();
  if (trimmed === '') throw new UsageError(`${source} holds no offer`);
  if (!trimmed.startsWith('{')) return { jws: trimmed };
  const quote = parseJson(source, trimmed) as Quote;
  if (typeof quote.offer !== 'string') throw new UsageError(`${source}: the quote has no offer (only an open quote has one; its status is ${String(quote.status)})`);
  return { jws: quote.offer, quote };
}

export const QUOTE_COMMANDS: Record<string, Command> = {
  'quotes request': {
    usage: 'quotes request --submission SUBMISSION_ID --option LIMIT/RETENTION [--option …] [--wait SECONDS] [--idempotency-key KEY]',
    summary: "price 1-5 options of a submission with its product's rating plan and wait for the quotes (open with a signed offer, referred, or declined)",
    examples: [
      'partner quotes request --submission 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71 --option 1000000/10000',
      'partner quotes request --submission 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71 --option 1000000/10000 --option 2000000/25000 --json',
    ],
    args: [],
    options: ['submission', 'option', 'wait', 'idempotency-key'],
    run: async (ctx) => {
      const submission = ctx.values.submission;
      if (!submission) throw new UsageError('--submission is required: the submission to quote');
      const options = parseOptions(ctx.values.option);
      const client = ctx.client();
      return mutation(ctx, 'quote request', (opts) => client.quotes.create(submission, { options }, opts));
    },
  },
  'quotes get': {
    usage: 'quotes get QUOTE_ID',
    summary: 'one quote (with its offer while open)',
    examples: ['partner quotes get 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a90', 'partner quotes get 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a90 --json > quote.json'],
    args: ['QUOTE_ID'],
    options: [],
    run: async (ctx, [id]) => {
      ctx.out.record(await ctx.client().quotes.get(id!, { signal: ctx.signal }));
      return EXIT.ok;
    },
  },
  'quotes list': {
    usage: 'quotes list --submission SUBMISSION_ID [--status S] [--limit N] [--cursor C] [--all]',
    summary: "a submission's quotes, newest first (one page, or --all)",
    examples: ['partner quotes list --submission 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71', 'partner quotes list --submission 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71 --status open'],
    args: [],
    options: ['submission', 'status', 'limit', 'cursor', 'all'],
    run: async (ctx) => {
      const v = ctx.values;
      const submission = v.submission;
      if (!submission) throw new UsageError('--submission is required');
      if (v.status !== undefined && !QUOTE_STATUSES.includes(v.status as QuoteStatus)) throw new UsageError(`--status must be one of ${QUOTE_STATUSES.join(', ')}`);
      const limit = intOption(v, 'limit');
      const params: QuoteListParams = { ...(v.status ? { status: v.status as QuoteStatus } : {}), ...(limit !== undefined ? { limit } : {}) };
      const client = ctx.client();
      return showList(
        ctx,
        async (cursor) => client.quotes.list(submission, { ...params, ...(cursor ? { cursor } : {}) }, { signal: ctx.signal }),
        () => client.quotes.iterate(submission, params, { signal: ctx.signal }),
        COLUMNS,
      );
    },
  },
  'quotes verify-offer': {
    usage: 'quotes verify-offer [FILE|-] --jwks JWKS_FILE',
    summary: "verify an offer offline: its signature by a receipt key, and (given a quote's JSON) that it repeats the quote's terms; prints its claims and offerSha256",
    examples: ['partner quotes get 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a90 --json > quote.json && partner quotes verify-offer quote.json --jwks jwks.json', 'echo "$OFFER" | partner quotes verify-offer - --jwks jwks.json'],
    args: ['FILE'],
    optionalArgs: 1,
    options: ['jwks'],
    run: async (ctx, [file]) => {
      if (!ctx.values.jwks) throw new UsageError('--jwks is required: a copy of the receipt keys (partner receipts keys > jwks.json)');
      const jwks = readJsonFile(ctx.values.jwks) as ReceiptKeySet;
      if (!jwks || !Array.isArray(jwks.keys)) throw new UsageError(`${ctx.values.jwks} is not a key set ({"keys": [...]})`);
      const source = !file || file === '-' ? 'standard input' : file;
      const { jws, quote } = offerIn(source, !file || file === '-' ? await readAll(ctx.io.stdin) : readText(file));
      try {
        const claims = await verifyOffer(jws, jwks, quote);
        ctx.out.record({ valid: true, offerSha256: offerHash(jws), matchesQuote: quote ? true : null, claims });
        return EXIT.ok;
      } catch (err) {
        if (!(err instanceof OfferVerificationError)) throw err;
        ctx.out.record({ valid: false, error: err.message });
        ctx.out.note(`offer verify: ${err.message}`);
        return EXIT.apiError;
      }
    },
  },
};
