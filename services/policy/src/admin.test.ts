// The file formats `product requirements set --help` and `policy import --help` show: their examples
// are files the commands accept, and their field lists name every field the parsers know.
import { describe, expect, it } from 'vitest';
import { parseRequirements, REQUIRABLE_APPLICANT_FIELDS } from '@partner/shared/domain/requirements';
import { DOCUMENT_TYPES } from '@partner/shared/domain/attachments';
import { NO_REQUIREMENTS } from '@partner/shared/domain/requirements';
import { submissionSchemaFor } from '@partner/shared/domain/submission-rules';
import { POLICIES_FILE, product, policy, RATING_PLAN_FILE, REQUIREMENTS_FILE } from './admin.js';
import { parseRatingPlan, RULE_OPS } from '@partner/shared/domain/rating';
import { parsePolicyLine } from './import.js';
import { POLICY_STATUSES } from './values.js';

describe('the admin file formats', () => {
  it('the requirements example is a document product requirements set accepts, and the format names every part', () => {
    expect(product.commands['requirements set']!.file).toBe(REQUIREMENTS_FILE);
    const parsed = parseRequirements(JSON.parse(REQUIREMENTS_FILE.example));
    expect(parsed.attachments.map((a) => a.documentType)).toEqual(['loss_run']);
    const format = REQUIREMENTS_FILE.format.join('\n');
    expect(parsed.risk).toMatchObject({ type: 'object' });
    for (const part of ['applicant.required', 'effectiveDate', 'minDaysAhead', 'maxDaysAhead', 'attachments', 'documentType', 'min, max', 'mediaTypes', 'maxBytes', 'risk']) expect(format).toContain(part);
    for (const value of [...REQUIRABLE_APPLICANT_FIELDS, ...DOCUMENT_TYPES]) expect(format).toContain(value);
  });

  it('every line of the policies example is a policy policy import accepts, and the format names every field', () => {
    expect(policy.commands.import!.file).toBe(POLICIES_FILE);
    const lines = POLICIES_FILE.example.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(parsePolicyLine(line)).toMatchObject({ ok: true });
    const format = POLICIES_FILE.format.join('\n');
    const first = JSON.parse(lines[0]!) as Record<string, unknown>;
    for (const field of [...Object.keys(first), 'insured.legalName', 'premium.amount', 'premium.currency', 'submissionId']) expect(format).toContain(field);
    for (const status of POLICY_STATUSES) expect(format).toContain(status);
  });

  it('the rating plan example is a plan product rating set accepts for a product with a risk schema, and the format names every part', () => {
    expect(product.commands['rating set']!.file).toBe(RATING_PLAN_FILE);
    const risk = {
      type: 'object',
      required: ['annualRevenue', 'employees', 'industry'],
      properties: { annualRevenue: { type: 'number' }, employees: { type: 'integer' }, industry: { type: 'string' } },
    };
    const schema = submissionSchemaFor({ productId: '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b', requirementsVersion: 2, requirements: { ...NO_REQUIREMENTS, risk } });
    const example = JSON.parse(RATING_PLAN_FILE.example) as Record<string, unknown>;
    expect(parseRatingPlan(example, schema)).toEqual({ ok: true, plan: example });
    const format = RATING_PLAN_FILE.format.join('\n');
    for (const part of [...Object.keys(example), 'exposure.field', 'exposure.per', 'options.limit', 'options.retention', ...RULE_OPS]) expect(format).toContain(part);
  });
});
