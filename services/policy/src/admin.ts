// Operator commands of the policy service: the product catalogue (and policy import).
// Reached through `npm run -s admin -- product|policy <command>`.
import type { Pool } from '@partner/shared/db/pg';
import { command, identifier, required, UsageError, type CommandGroup, type FileFormat, withAdminPool } from '@partner/shared/process/admin-cli';
import { isUuid } from '@partner/shared/domain/ids';
import { createReadStream } from 'node:fs';
import { access, constants } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { MIGRATIONS_DIR, QUOTE_CURSOR_CONTEXT, SCHEMA } from './schema.js';
import { quoteGroup } from './quotes/admin.js';
import { getProduct, productRecord, setRequirements, upsertProduct } from './products.js';
import { readFile } from 'node:fs/promises';
import { EnvReader } from '@partner/shared/config/env';
import { readNats } from '@partner/shared/process/config';
import { natsNames, publishOnce } from '@partner/shared/nats/client';
import { MAX_ATTACHMENT_RULES, MAX_DAYS_AHEAD, parseRequirements, REQUIRABLE_APPLICANT_FIELDS, RequirementsError } from '@partner/shared/domain/requirements';
import { DOCUMENT_TYPES } from '@partner/shared/domain/attachments';
import { POLICY_STATUSES } from './values.js';
import { importPolicies } from './import.js';
import { withTx } from '@partner/shared/db/pg';
import { requirementsFromJson } from '@partner/shared/domain/requirements';
import { MAX_FACTORS, MAX_OPTIONS, MAX_REFERRAL_HOURS, MAX_RULES, MAX_VALID_DAYS, parseRatingPlan, RULE_OPS, type PlanProblem } from '@partner/shared/domain/rating';
import { currentRatingPlan, setRatingPlan } from './rating/repository.js';

const withPool = <T>(fn: (pool: Pool) => Promise<T>): Promise<T> =>
  withAdminPool({ name: 'policy', schema: SCHEMA, migrationsDir: MIGRATIONS_DIR }, fn);

/** The requirements file of `product requirements set` (its example is checked by admin.test.ts). */

/**
 * The `--id <uuid>` and the one FILE.json of a product document command (requirements set, rating
 * set): the id lower-cased, the file read and parsed, each problem a usage error naming it.
 */
async function productDocument(values: Record<string, unknown>, positionals: string[]): Promise<{ productId: string; file: string; doc: unknown }> {
  const productId = required(values, 'id').toLowerCase();
  if (!isUuid(productId)) throw new UsageError(`--id must be a UUID, got "${productId}"`);
  if (positionals.length !== 1) throw new UsageError('give exactly one FILE.json');
  const file = positionals[0]!;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return { productId, file, doc: JSON.parse(text) as unknown };
  } catch (err) {
    throw new UsageError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
}

export const REQUIREMENTS_FILE: FileFormat = {
  name: 'FILE.json',
  format: [
    'A JSON object, the whole requirements document (every part optional; a part left out requires nothing):',
    `  applicant.required       applicant fields a submission must have: ${REQUIRABLE_APPLICANT_FIELDS.join(', ')}`,
    `  effectiveDate            {minDaysAhead, maxDaysAhead}: days after today (UTC), whole numbers 0-${MAX_DAYS_AHEAD}, either may be null`,
    `  attachments              up to ${MAX_ATTACHMENT_RULES} rules, one per document type:`,
    `    documentType           ${DOCUMENT_TYPES.join(', ')}`,
    '    min, max               how many a submission needs (0-1000; max null: no limit); min above 0 keeps it in currentlyDue until uploaded',
    '    mediaTypes             allowed media types, type/subtype in lower case (empty: any the API accepts)',
    "    maxBytes               the largest file in bytes (null: the API's limit)",
    "  risk                     a JSON Schema (2020-12) of the create body's risk object: type \"object\", self-contained (no $ref, $id, $schema),",
    '                           compiled by Ajv in strict mode; the published submissionSchema then requires risk and embeds it',
    'Unknown keys are refused; every bad part is named and nothing is changed.',
  ],
  example: [
    '{',
    '  "applicant": { "required": ["taxId", "address"] },',
    '  "effectiveDate": { "minDaysAhead": 0, "maxDaysAhead": 90 },',
    '  "attachments": [',
    '    { "documentType": "loss_run", "min": 1, "max": 5, "mediaTypes": ["application/pdf"], "maxBytes": 10485760 }',
    '  ],',
    '  "risk": {',
    '    "type": "object",',
    '    "required": ["annualRevenue", "industry"],',
    '    "properties": { "annualRevenue": { "type": "number", "minimum": 0 }, "industry": { "type": "string", "enum": ["retail", "office"] } }',
    '  }',
    '}',
    '',
  ].join('\n'),
};

/** The plan file of `product rating set` (its example is checked by admin.test.ts). */
export const RATING_PLAN_FILE: FileFormat = {
  name: 'FILE.json',
  format: [
    'A JSON object, the whole rating plan (every part required; amounts and factors are decimal strings such as "1.25", never JSON numbers):',
    '  currency                 an ISO 4217 code such as USD',
    "  exposure.field           a dotted path into the submission that the product's submissionSchema requires and types as a number (risk.annualRevenue)",
    '  exposure.per             the exposure unit, a positive decimal: premium = value ÷ per × rate × every factor × limit factor × retention factor',
    '  rate                     a positive decimal',
    `  factors                  up to ${MAX_FACTORS}: {field, values: {<value>: <factor>}, default}; a value missing from values (or absent) takes default`,
    `  options.limit            {<limit>: <factor>}, at least one (up to ${MAX_OPTIONS}); keys are the limits partners ask for ("1000000")`,
    '  options.retention        {<retention>: <factor>}, at least one; keys are the retentions partners ask for ("10000")',
    '  minimumPremium           the least premium, an amount with at most 2 decimals ("500.00")',
    `  refer, decline           up to ${MAX_RULES} rules each: {field, op, value, code}; op one of ${RULE_OPS.join(', ')} (in/nin take a list); code a reason such as revenue_above_authority`,
    `  validDays                days an open quote stays bindable (1-${MAX_VALID_DAYS})`,
    `  referralHours            hours an underwriter has for a referral (1-${MAX_REFERRAL_HOURS})`,
    "Every field must be a path the product's published submissionSchema can produce (set a risk schema with product requirements set first).",
    'Unknown keys are refused; every bad part is named and nothing is changed. Each change bumps ratingVersion.',
  ],
  example: `${JSON.stringify(
    {
      currency: 'USD',
      exposure: { field: 'risk.annualRevenue', per: '1000' },
      rate: '1.25',
      factors: [{ field: 'risk.industry', values: { retail: '1', office: '0.85' }, default: '1.6' }],
      options: { limit: { '1000000': '1', '2000000': '1.6' }, retention: { '0': '1.1', '10000': '1' } },
      minimumPremium: '500.00',
      refer: [{ field: 'risk.annualRevenue', op: 'gt', value: 50000000, code: 'revenue_above_authority' }],
      decline: [{ field: 'risk.employees', op: 'gt', value: 5000, code: 'too_many_employees' }],
      validDays: 30,
      referralHours: 24,
    },
    null,
    2,
  )}\n`,
};

/** A plan refused: the problems as one line, each part named. */
class PlanRefused extends Error {
  constructor(readonly problems: PlanProblem[]) {
    super(problems.map((p) => `${p.path} ${p.issue}`).join('; '));
  }
}

/** The policies file of `policy import` (its example is checked by admin.test.ts). */
export const POLICIES_FILE: FileFormat = {
  name: 'FILE.jsonl',
  format: [
    'JSON Lines: one policy per line, a JSON object with',
    '  policyNumber             the partner\'s policy number (a policyNumber the partner has already is updated)',
    `  status                   ${POLICY_STATUSES.join(', ')}`,
    '  productId                a product of the catalogue (product add)',
    '  insured.legalName        the insured\'s legal name',
    '  effectiveDate            YYYY-MM-DD',
    '  expirationDate           YYYY-MM-DD, after effectiveDate',
    '  premium.amount           a decimal string such as "1250.00" (not a JSON number)',
    '  premium.currency         an ISO 4217 code such as EUR',
    '  submissionId             optional: the submission the policy came from',
    'Every bad line is reported as `line N: <field> <issue>` and nothing is imported (all or nothing).',
  ],
  example: `${[
    { policyNumber: 'DEMO-0001', status: 'active', productId: '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b', insured: { legalName: 'Acme Widgets Ltd' }, effectiveDate: '2026-01-01', expirationDate: '2027-01-01', premium: { amount: '1250.00', currency: 'EUR' } },
    { policyNumber: 'DEMO-0002', status: 'pending', productId: '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b', insured: { legalName: 'Contoso Bakery' }, effectiveDate: '2027-02-01', expirationDate: '2028-02-01', premium: { amount: '415.75', currency: 'EUR' } },
  ]
    .map((p) => JSON.stringify(p))
    .join('\n')}\n`,
};

export const product: CommandGroup = {
  summary: 'the product catalogue: add or update a product, set its requirements and its rating plan',
  commands: {
    add: command({
      usage: 'product add --id <uuid> --name <name> [--inactive]',
      summary: 'add a product to the catalogue, or update its name and state (workers and gateways see it at once)',
      options: {
        id: { type: 'string', value: '<uuid>', help: 'the product id, a UUID (partners send it as productId)' },
        name: { type: 'string', value: '<name>', help: 'its name, at most 200 characters' },
        inactive: { type: 'boolean', help: 'add it (or set it) inactive: new submissions for it are refused' },
      },
      examples: ['product add --id 6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b --name "Demo General Liability"'],
      run: async ({ values }) => {
        const productId = required(values, 'id').toLowerCase();
        if (!isUuid(productId)) throw new UsageError(`--id must be a UUID, got "${productId}"`);
        const name = required(values, 'name');
        if (name.length > 200) throw new UsageError('--name must be at most 200 characters');
        const row = await withPool((pool) => upsertProduct(pool, { productId, name, active: !values.inactive }));
        // A product (de)activated is seen at once by workers and gateways, as a requirements change is.
        const env = new EnvReader();
        const nats = env.done(readNats(env));
        await publishOnce(nats.natsUrl, natsNames(nats.natsPrefix).productChangedSubject, JSON.stringify({ productId }));
        return { productId: row.product_id, name: row.name, active: row.active, created: row.created };
      },
    }),
    'requirements set': command({
      usage: 'product requirements set --id <uuid> FILE.json',
      summary:
        "replace a product's requirements with the whole document in FILE.json: bumps requirementsVersion and tells every partner (product.requirements_changed); a bad file names each bad part and changes nothing",
      options: { id: { type: 'string', value: '<uuid>', help: 'the product (product add first)' } },
      args: [{ name: 'FILE.json', help: 'the requirements document (its format below)' }],
      file: REQUIREMENTS_FILE,
      examples: ['product requirements set --id 6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b requirements.json'],
      run: async ({ values, positionals }) => {
        const { productId, file, doc } = await productDocument(values, positionals);
        let requirements;
        try {
          requirements = parseRequirements(doc);
        } catch (err) {
          if (err instanceof RequirementsError) throw new UsageError(`${file}: ${err.problems.map((p) => `${p.path} ${p.issue}`).join('; ')} (nothing was changed)`);
          throw err;
        }
        const env = new EnvReader();
        const nats = env.done(readNats(env));
        const names = natsNames(nats.natsPrefix);
        const out = await withPool((pool) => setRequirements(pool, names, productId, requirements));
        if (!out) throw new Error(`unknown product ${productId} (add it with: product add --id ${productId} --name NAME)`);
        // Workers and gateways drop their cached copy of the product at once; without NATS, within their cache time.
        const pushed = await publishOnce(nats.natsUrl, names.productChangedSubject, JSON.stringify({ productId, requirementsVersion: Number(out.row.requirements_version) }));
        return {
          ...productRecord(out.row),
          requirements: out.row.requirements,
          effective: pushed ? 'at once on every worker and gateway' : 'NATS not reachable: within the product cache time of workers (WORKER_PRODUCT_CACHE_MS) and gateways (GATEWAY_PRODUCT_CACHE_MS)',
        };
      },
    }),
    'rating set': command({
      usage: 'product rating set --id <uuid> FILE.json',
      summary:
        "replace a product's rating plan with the plan in FILE.json, checked against the product's published submissionSchema: prints the new ratingVersion; a bad file names each bad part and changes nothing",
      options: { id: { type: 'string', value: '<uuid>', help: 'the product (product add first; its risk schema with product requirements set)' } },
      args: [{ name: 'FILE.json', help: 'the rating plan (its format below)' }],
      file: RATING_PLAN_FILE,
      examples: ['product rating set --id 6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b rating-plan.json'],
      run: async ({ values, positionals }) => {
        const { productId, file, doc } = await productDocument(values, positionals);
        try {
          return await withPool((pool) =>
            // The product's row is locked while the plan is checked against its requirements and stored:
            // a requirements change cannot slip in between.
            withTx(pool, async (c) => {
              const r = await c.query<{ requirements: unknown; requirements_version: string }>(
                'SELECT requirements, requirements_version FROM products WHERE product_id = $1 FOR UPDATE',
                [productId],
              );
              const row = r.rows[0];
              if (!row) throw new UsageError(`unknown product ${productId} (add it with: product add --id ${productId} --name NAME)`);
              const requirementsVersion = Number(row.requirements_version);
              // Loaded here: it compiles the submission schema with Ajv at import, which no other command needs.
              const { submissionSchemaFor } = await import('@partner/shared/domain/submission-rules');
              const schema = submissionSchemaFor({ productId, requirementsVersion, requirements: requirementsFromJson(JSON.stringify(row.requirements)) });
              const parsed = parseRatingPlan(doc, schema);
              if (!parsed.ok) throw new PlanRefused(parsed.problems);
              const ratingVersion = await setRatingPlan(c, productId, parsed.plan);
              return { productId, ratingVersion, requirementsVersion };
            }),
          );
        } catch (err) {
          if (err instanceof PlanRefused) throw new UsageError(`${file}: ${err.message} (nothing was changed)`);
          throw err;
        }
      },
    }),
    'rating show': command({
      usage: 'product rating show --id <uuid>',
      summary: "print a product's current rating plan and its ratingVersion (both null when it has none: it cannot be quoted)",
      options: { id: { type: 'string', value: '<uuid>', help: 'the product' } },
      examples: ['product rating show --id 6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b'],
      run: async ({ values }) => {
        const productId = required(values, 'id').toLowerCase();
        if (!isUuid(productId)) throw new UsageError(`--id must be a UUID, got "${productId}"`);
        return withPool(async (pool) => {
          if (!(await getProduct(pool, productId))) throw new UsageError(`unknown product ${productId}`);
          const current = await currentRatingPlan(pool, productId);
          return { productId, ratingVersion: current?.ratingVersion ?? null, plan: current?.plan ?? null };
        });
      },
    }),
  },
};

/**
 * The file's lines, read only once iterated: a readline interface created earlier would emit lines
 * while the import is still connecting, and those would be lost.
 */
async function* readLines(file: string): AsyncGenerator<string> {
  yield* createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
}

export const policy: CommandGroup = {
  summary: "partners' policies: import them from JSON Lines",
  commands: {
    import: command({
      // The policy service does not own partners (auth does), so the partner's tenant is given, not
      // looked up: policies are always created for exactly the (tenant, partner) the operator names.
      usage: 'policy import --tenant T --partner P FILE.jsonl',
      summary: 'import a partner\'s policies, one per line, all or nothing; prints {"imported": n, "updated": m}',
      options: {
        tenant: { type: 'string', value: 'T', help: "the partner's tenant (given, not looked up: the policies are this tenant's)" },
        partner: { type: 'string', value: 'P', help: 'the partner whose policies they are' },
      },
      args: [{ name: 'FILE.jsonl', help: 'the policies (their format below)' }],
      file: POLICIES_FILE,
      examples: ['policy import --tenant demo --partner demo-partner policies.jsonl'],
      run: async ({ values, positionals }) => {
        const tenantId = identifier(required(values, 'tenant'), 'tenant');
        const partnerId = identifier(required(values, 'partner'), 'partner');
        if (positionals.length !== 1) throw new UsageError('give exactly one FILE.jsonl');
        const file = positionals[0]!;
        try {
          await access(file, constants.R_OK);
        } catch (err) {
          throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
        }
        return withPool((pool) => importPolicies(pool, { tenantId, partnerId }, readLines(file)));
      },
    }),
  },
};

export const quote: CommandGroup = quoteGroup({ withPool, cursorContext: QUOTE_CURSOR_CONTEXT });

export const groups: Record<string, CommandGroup> = { product, policy, quote };
