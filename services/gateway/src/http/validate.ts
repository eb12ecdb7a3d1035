// JSON Schema validation of request bodies with Ajv: schemas compiled once at start, every
// failing field reported in `details` as {field, issue}.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule, { type FormatsPluginOptions } from 'ajv-formats';
import { DomainError, type ErrorDetail } from '@partner/shared/domain/errors';
// The create schema's patterns and what each asks, in words (shared with POST /v1/submissions/validate).
import { PATTERN_ISSUES, VISIBLE_USABLE_TEXT } from '@partner/shared/domain/submission-rules';
import { isCalendarDate, parseTimestamp } from '@partner/shared/domain/time';

// ajv-formats is CommonJS; under NodeNext its default export arrives as the module object.
type AddFormats = (ajv: Ajv, options: FormatsPluginOptions) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

// verbose: a failing oneOf is reported with the description of the schema that holds it (detail()).
const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: false, coerceTypes: false, verbose: true });
addFormats(ajv, { mode: 'full', formats: ['uuid'] });
// Dates and timestamps read as everywhere else (shared/domain/time.ts): real ones, years 0001–9999 only.
ajv.addFormat('date', { type: 'string', validate: isCalendarDate });
ajv.addFormat('date-time', { type: 'string', validate: (s: string) => parseTimestamp(s) !== undefined });

// Here a name failing VISIBLE_USABLE_TEXT is always a blank one: the body scan (body.ts) refused
// control characters before any schema ran.
const ISSUES: Readonly<Record<string, string>> = {
  ...PATTERN_ISSUES,
  [VISIBLE_USABLE_TEXT]: 'must contain a visible character (not only spaces or invisible characters)',
};

function detail(e: ErrorObject): ErrorDetail {
  const base = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const join = (name: string) => (base ? `${base}.${name}` : name);
  switch (e.keyword) {
    case 'required':
      return { field: join((e.params as { missingProperty: string }).missingProperty), issue: 'is required' };
    case 'additionalProperties':
      return { field: join((e.params as { additionalProperty: string }).additionalProperty), issue: 'is not a known field' };
    case 'format':
      return { field: base || '(body)', issue: `must be a valid ${(e.params as { format: string }).format}` };
    case 'pattern':
      return { field: base || '(body)', issue: ISSUES[(e.params as { pattern: string }).pattern] ?? e.message ?? 'is invalid' };
    case 'enum': {
      // A long list (country codes) is named by the schema's description rather than spelled out.
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
      const description = (e.parentSchema as { description?: string } | undefined)?.description;
      if (allowed.length > 12 && description) return { field: base || '(body)', issue: `must be ${description}` };
      return { field: base || '(body)', issue: `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` };
    }
    case 'oneOf':
    case 'anyOf': {
      const description = (e.parentSchema as { description?: string } | undefined)?.description;
      return { field: base || '(body)', issue: description ? `must be ${description}` : (e.message ?? 'is invalid') };
    }
    default:
      return { field: base || '(body)', issue: e.message ?? 'is invalid' };
  }
}

export function validator<T>(schema: object): (body: unknown) => T {
  const validate: ValidateFunction = ajv.compile(schema);
  return (body) => {
    if (validate(body)) return body as T;
    const errors = validate.errors ?? [];
    // A failing oneOf/anyOf is one problem of its field, not one per alternative it tried.
    const alternatives = errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf').map((e) => `${e.schemaPath}/`);
    const kept = errors.filter((e) => !alternatives.some((p) => e.schemaPath.startsWith(p)));
    // An empty name fails minLength and the visible-character pattern: one problem, said the friendly way.
    const visible = new Set(kept.filter((e) => e.keyword === 'pattern' && (e.params as { pattern: string }).pattern === VISIBLE_USABLE_TEXT).map((e) => e.instancePath));
    const details = kept.filter((e) => !(e.keyword === 'minLength' && visible.has(e.instancePath))).map(detail);
    throw new DomainError('validation_error', 'the request body is invalid; see details', { details });
  };
}
