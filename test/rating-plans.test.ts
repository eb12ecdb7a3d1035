// Rating plans set by operators (API.md "Rating plan"): `npm run -s admin -- product rating set --id
// <uuid> FILE.json` checks the plan against the product's published submissionSchema (its risk
// schema, set with the requirements), names every bad part and changes nothing then, and otherwise
// stores a new version: each change bumps ratingVersion; `product rating show` and the repository read the current one.
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { useStack } from './support/use-stack.js';
import { currentRatingPlan } from '../services/policy/src/rating/repository.js';
import { DEMO_RATING_PLAN, DEMO_REQUIREMENTS } from '../scripts/demo/product.mjs';

const PRODUCT = randomUUID();
const BARE = randomUUID();
const FILES = mkdtempSync(join(tmpdir(), 'rating-plans-'));
const file = (doc: unknown) => {
  const f = join(FILES, `${randomUUID()}.json`);
  writeFileSync(f, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return f;
};

const stack = useStack(async (stack) => {
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Rated GL');
  await stack.admin('product', 'add', '--id', BARE, '--name', 'No risk schema');
  await stack.admin('product', 'requirements', 'set', '--id', PRODUCT, file(DEMO_REQUIREMENTS));
});

const setPlan = (doc: unknown, product = PRODUCT) => stack.adminRaw('product', 'rating', 'set', '--id', product, file(doc));
const versions = async (product = PRODUCT) =>
  (await stack.sql<{ rating_version: string }>('SELECT rating_version FROM policy.rating_plans WHERE product_id = $1 ORDER BY rating_version', [product])).map((r) => Number(r.rating_version));

/** The repository, on the stack's database (search_path policy, as the service's pool has it). */
async function current(product = PRODUCT) {
  const client = new pg.Client({ connectionString: stack.env.DATABASE_URL, options: '-c search_path=policy' });
  await client.connect();
  try {
    return await currentRatingPlan(client as never, product);
  } finally {
    await client.end();
  }
}

describe('product rating set', () => {
  it('stores the plan, prints the new ratingVersion, and each change bumps it', async () => {
    expect(await current()).toBeNull();
    expect(await stack.admin('product', 'rating', 'show', '--id', PRODUCT)).toEqual({ productId: PRODUCT, ratingVersion: null, plan: null });
    const first = await stack.admin('product', 'rating', 'set', '--id', PRODUCT, file(DEMO_RATING_PLAN));
    expect(first).toMatchObject({ productId: PRODUCT, ratingVersion: 1 });
    expect(await current()).toEqual({ plan: DEMO_RATING_PLAN, ratingVersion: 1 });
    const changed = { ...DEMO_RATING_PLAN, rate: '1.5' };
    const second = await stack.admin('product', 'rating', 'set', '--id', PRODUCT, file(changed));
    expect(second.ratingVersion).toBe(2);
    expect(await current()).toEqual({ plan: changed, ratingVersion: 2 });
    expect(await versions()).toEqual([1, 2]);
    expect(await stack.admin('product', 'rating', 'show', '--id', PRODUCT)).toEqual({ productId: PRODUCT, ratingVersion: 2, plan: changed });
  });

  it.each([
    [{ ...DEMO_RATING_PLAN, surcharge: '2' }, ['surcharge']],
    [{ ...DEMO_RATING_PLAN, exposure: { field: 'risk.annualRevenue', per: '0' } }, ['exposure.per']],
    [{ ...DEMO_RATING_PLAN, rate: '-1' }, ['rate']],
    [{ ...DEMO_RATING_PLAN, options: { limit: {}, retention: { '0': '1' } } }, ['options.limit']],
    [{ ...DEMO_RATING_PLAN, factors: [DEMO_RATING_PLAN.factors[0], { field: 'risk.industry', values: { retail: 'x' }, default: '1' }] }, ['factors[1].values.retail']],
    [{ ...DEMO_RATING_PLAN, factors: [{ field: 'risk.floorArea', values: {}, default: '1' }] }, ['factors[0].field']],
    [{ ...DEMO_RATING_PLAN, refer: [{ field: 'risk.employees', op: 'about', value: 5, code: 'x' }] }, ['refer[0].op']],
  ].map(([doc, parts]) => [parts, doc] as const))('refuses a bad plan naming %j, exit 2, nothing changed', async (parts, doc) => {
    const before = await versions();
    const r = await setPlan(doc);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    for (const part of parts) expect(r.stderr).toContain(`${part} `);
    expect(r.stderr).toContain('nothing was changed');
    expect(await versions()).toEqual(before);
  });

  it('refuses a plan whose fields the product cannot produce (no risk schema), and an unknown product', async () => {
    const r = await setPlan(DEMO_RATING_PLAN, BARE);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/exposure\.field names risk\.annualRevenue, which the product's submissionSchema cannot produce/);
    expect(await versions(BARE)).toEqual([]);
    const unknown = randomUUID();
    const u = await setPlan(DEMO_RATING_PLAN, unknown);
    expect(u.code).toBe(2);
    expect(u.stderr).toContain(`unknown product ${unknown}`);
  });

  it('refuses a file that is not JSON, and a missing file', async () => {
    const r = await setPlan('{"currency": ');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is not valid JSON/);
    const m = await stack.adminRaw('product', 'rating', 'set', '--id', PRODUCT, join(FILES, 'absent.json'));
    expect(m.code).toBe(2);
    expect(m.stderr).toMatch(/cannot read/);
  });
});
