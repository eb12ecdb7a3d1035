// JSON Schemas (OpenAPI 3.1 = JSON Schema 2020-12) that every resource's bodies are built from: the
// `$ref` helper, ids, timestamps, dates and the job handle every mutation answers 202 with. Each
// resource's own schemas are in its folder (resources/<resource>/openapi.ts); the error envelope's are
// in errors.ts.

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

const TIMESTAMP_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$';
export const UUID_EXAMPLE = '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71';
export const JOB_EXAMPLE = 'job_0199a3e47c1d7b529a0e3f2d4c5b6a72';

export const sharedSchemas: Record<string, Schema> = {
  Uuid: { type: 'string', format: 'uuid', examples: [UUID_EXAMPLE] },
  JobId: { type: 'string', pattern: '^job_[0-9a-f]{32}$', description: 'Job handle: `job_` and 32 lowercase hex characters.', examples: [JOB_EXAMPLE] },
  Timestamp: {
    type: 'string',
    format: 'date-time',
    pattern: TIMESTAMP_PATTERN,
    description: 'RFC 3339 UTC timestamp with milliseconds.',
    examples: ['2026-11-21T12:00:08.012Z'],
  },
  Date: { type: 'string', format: 'date', description: 'Calendar date `YYYY-MM-DD`.', examples: ['2027-01-01'] },
  JobHandle: {
    type: 'object',
    description: 'A mutation accepted as a job that has not settled (yet). Poll `statusUrl`, honouring `Retry-After`.',
    additionalProperties: false,
    required: ['id', 'status', 'statusUrl'],
    properties: {
      id: ref('JobId'),
      status: { const: 'accepted', description: 'Always `accepted`, even for a replay of a job that has progressed; read the job at `statusUrl`.' },
      statusUrl: { type: 'string', format: 'uri', description: 'Absolute URL of `GET /v1/jobs/{id}` for this job.' },
    },
  },
};
