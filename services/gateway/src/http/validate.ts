// JSON Schema validation of request bodies with Ajv: schemas compiled once at start, every
// failing field reported in `details` as {field, issue}.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule, { type FormatsPluginOptions } from 'ajv-formats';
import { DomainError, type ErrorDetail } from '@partner/shared/errors';

// ajv-formats is CommonJS; under NodeNext its default export arrives as the module object.
type AddFormats = (ajv: Ajv, options: FormatsPluginOptions) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: false, coerceTypes: false });
addFormats(ajv, { mode: 'full', formats: ['date', 'uuid', 'date-time'] });

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
    case 'enum':
      return { field: base || '(body)', issue: `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` };
    default:
      return { field: base || '(body)', issue: e.message ?? 'is invalid' };
  }
}

export function validator<T>(schema: object): (body: unknown) => T {
  const validate: ValidateFunction = ajv.compile(schema);
  return (body) => {
    if (validate(body)) return body as T;
    const details = (validate.errors ?? []).map(detail);
    throw new DomainError('validation_error', 'the request body is invalid; see details', { details });
  };
}
