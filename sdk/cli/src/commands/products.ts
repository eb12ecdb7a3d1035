// `partner products list|get|requirements` (the catalogue and what each product requires) and
// `partner submissions validate --file app.json|-` (every rule a create applies, answered at once:
// exit 0 when valid, 1 when not, each field's problem printed).
import type { PartnerClient, Product, ValidationResult } from '@partner/sdk';
import { EXIT, intOption, parseJson, readAll, readJsonFile, showList, UsageError, type Command, type Context } from '../command.js';

/** The JSON body of --file (a path, or - for standard input). */
export async function bodyFromFile(ctx: Context): Promise<unknown> {
  if (!ctx.values.file) throw new UsageError('--file is required: a JSON file with the submission (- reads standard input)');
  return ctx.values.file === '-' ? parseJson('standard input', await readAll(ctx.io.stdin)) : readJsonFile(ctx.values.file);
}

/**
 * Prints a validation verdict; the exit status says it (0 valid, 1 invalid). For people: a line per
 * failing field on stdout. As JSON (--json, or stdout not a terminal): the verdict on stdout and the
 * same lines on stderr, so a script's log still shows each problem.
 */
export function reportValidation(ctx: Context, result: ValidationResult): number {
  const version = result.requirementsVersion !== null ? ` (requirements version ${result.requirementsVersion})` : '';
  const lines = result.valid ? [`valid${version}`] : [`invalid${version}:`, ...result.errors.map((e) => `  ${e.field}: ${e.message} (${e.code})`)];
  if (ctx.out.json) {
    ctx.out.record(result);
    if (!result.valid) ctx.out.note(lines.join('\n'));
  } else ctx.io.stdout.write(`${lines.join('\n')}\n`);
  return result.valid ? EXIT.ok : EXIT.apiError;
}

export const PRODUCT_COMMANDS: Record<string, Command> = {
  'products list': {
    usage: 'products list [--active true|false] [--limit N] [--cursor C] [--all]',
    summary: 'the product catalogue, newest first (one page, or --all)',
    examples: ['partner products list', 'partner products list --active true --all --json'],
    args: [],
    options: ['active', 'limit', 'cursor', 'all'],
    run: async (ctx) => {
      const v = ctx.values;
      if (v.active !== undefined && v.active !== 'true' && v.active !== 'false') throw new UsageError('--active must be true or false');
      const limit = intOption(v, 'limit');
      const params = { ...(v.active !== undefined ? { active: v.active === 'true' } : {}), ...(limit !== undefined ? { limit } : {}) };
      const client: PartnerClient = ctx.client();
      return showList<Product>(
        ctx,
        (cursor) => client.listProducts({ ...params, ...(cursor ? { cursor } : {}) }, { signal: ctx.signal }),
        () => client.iterateProducts(params, { signal: ctx.signal }),
        [
          ['name', 'name'],
          ['active', 'active'],
          ['requirementsVersion', 'requirements'],
          ['productId', 'id'],
        ],
      );
    },
  },
  'products get': {
    usage: 'products get PRODUCT_ID',
    summary: 'one product',
    examples: ['partner products get 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a70'],
    args: ['PRODUCT_ID'],
    options: [],
    run: async (ctx, [id]) => {
      ctx.out.record(await ctx.client().getProduct(id!, { signal: ctx.signal }));
      return EXIT.ok;
    },
  },
  'products requirements': {
    usage: 'products requirements PRODUCT_ID',
    summary: "what a product requires: its submission JSON Schema, date window and attachment rules (JSON)",
    examples: ['partner products requirements 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a70 > requirements.json'],
    args: ['PRODUCT_ID'],
    options: [],
    run: async (ctx, [id]) => {
      // Always JSON: the schema is for machines (pipe it to a validator).
      ctx.io.stdout.write(`${JSON.stringify(await ctx.client().getProductRequirements(id!, { signal: ctx.signal }), null, 2)}\n`);
      return EXIT.ok;
    },
  },
  'submissions validate': {
    usage: 'submissions validate --file app.json|-',
    summary: 'check a submission against every rule a create applies, creating nothing (exit 0 valid, 1 invalid)',
    examples: ['partner submissions validate --file app.json', 'cat app.json | partner submissions validate --file -'],
    args: [],
    options: ['file'],
    run: async (ctx) => {
      const body = await bodyFromFile(ctx);
      return reportValidation(ctx, await ctx.client().validateSubmission(body as Record<string, unknown>, { signal: ctx.signal }));
    },
  },
};
