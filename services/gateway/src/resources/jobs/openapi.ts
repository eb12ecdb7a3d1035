// The jobs' part of the OpenAPI document (GET /v1/jobs, GET /v1/jobs/{jobId}, POST
// /v1/jobs/{jobId}/cancel): their paths and schemas. `JobResult` is any of every resource's job results
// (Resource.openapi.jobResults), in the order of the resource list.
import { JOB_KINDS, JOB_STATUS_FILTERS } from '@partner/shared/domain/jobs';
import { apiHeaders, authErrors, header, json, LIST_400, param, preferHeaders, response, timestampParam, type Obj } from '../../openapi/common.js';
import { EXAMPLE_SUBMISSION } from '../submissions/openapi.js';
import { ref, type Schema } from '../../openapi/schemas.js';

const EXAMPLE_JOB_ID = 'job_0199a3e47c1d7b529a0e3f2d4c5b6a72';
/** One job in each state, as the job list shows it (GET /v1/jobs/{jobId} shows the settled ones alike). */
const EXAMPLE_JOBS = {
  processing: { id: 'job_0199a3e57c1d7b529a0e3f2d4c5b6a73', kind: 'attachment.create', status: 'processing', createdAt: '2026-11-21T12:01:00.500Z', updatedAt: '2026-11-21T12:01:00.731Z' },
  succeeded: {
    id: EXAMPLE_JOB_ID,
    kind: 'submission.create',
    status: 'succeeded',
    result: EXAMPLE_SUBMISSION,
    createdAt: '2026-11-21T12:00:08.000Z',
    updatedAt: '2026-11-21T12:00:08.012Z',
  },
  failed: {
    id: 'job_0199a3e37c1d7b529a0e3f2d4c5b6a71',
    kind: 'submission.create',
    status: 'failed',
    error: { code: 'unknown_product', message: 'the product does not exist or is not active', retryable: false },
    createdAt: '2026-11-21T11:59:00.000Z',
    updatedAt: '2026-11-21T11:59:00.020Z',
  },
  canceled: {
    id: 'job_0199a3e27c1d7b529a0e3f2d4c5b6a70',
    kind: 'submission.create',
    status: 'canceled',
    error: { code: 'canceled', message: 'the job was cancelled by its partner before it started', retryable: false },
    createdAt: '2026-11-21T11:58:00.000Z',
    updatedAt: '2026-11-21T11:58:03.410Z',
  },
};

const JOB_EXAMPLES: Obj = {
  succeeded: { summary: 'Succeeded, with its result', value: EXAMPLE_JOBS.succeeded },
  failed: { summary: 'Failed, with its error', value: EXAMPLE_JOBS.failed },
  canceled: { summary: 'Cancelled before it started, with the `canceled` error', value: EXAMPLE_JOBS.canceled },
  processing: { summary: 'Not settled yet (answered with Retry-After: 5)', value: { id: EXAMPLE_JOBS.processing.id, status: 'processing', retryAfter: 5 } },
};

const JOB_PAGE_EXAMPLES: Obj = {
  mixed: {
    summary: 'A running job, a succeeded one and a failed one; more pages follow',
    value: {
      items: [EXAMPLE_JOBS.processing, EXAMPLE_JOBS.succeeded, EXAMPLE_JOBS.failed],
      nextCursor: 'AQAAAZqj5HwAAZmj43wde1KaDj8tTFtqcWOlLwNsNk6g1u1Vh9Hrkg4',
    },
  },
  last: { summary: 'The last page', value: { items: [], nextCursor: null } },
};

/** The jobs' schemas; `JobResult` is any of `jobResults`. */
export function jobSchemas(jobResults: readonly Schema[]): Record<string, Schema> {
  return {
    JobProcessing: {
      type: 'object',
      description: 'The job has not settled: poll again after `retryAfter` seconds (the `Retry-After` header says the same).',
      additionalProperties: false,
      required: ['id', 'status', 'retryAfter'],
      properties: {
        id: ref('JobId'),
        status: { const: 'processing' },
        retryAfter: { type: 'integer', minimum: 1, examples: [5] },
      },
    },
    JobSucceeded: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'kind', 'status', 'result', 'createdAt', 'updatedAt'],
      properties: {
        id: ref('JobId'),
        kind: ref('JobKind'),
        status: { const: 'succeeded' },
        result: ref('JobResult'),
        createdAt: ref('Timestamp'),
        updatedAt: ref('Timestamp'),
      },
    },
    JobFailed: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'kind', 'status', 'error', 'createdAt', 'updatedAt'],
      properties: {
        id: ref('JobId'),
        kind: ref('JobKind'),
        status: { const: 'failed' },
        error: ref('ErrorObject'),
        createdAt: ref('Timestamp'),
        updatedAt: ref('Timestamp'),
      },
    },
    JobCanceled: {
      type: 'object',
      description:
        'A job its partner cancelled before it started (`POST /v1/jobs/{jobId}/cancel`): settled, it never takes effect. `error` is ' +
        'always `{code: "canceled", retryable: false}`; a request that was waiting on the mutation was answered with it (409 `canceled`).',
      additionalProperties: false,
      required: ['id', 'kind', 'status', 'error', 'createdAt', 'updatedAt'],
      properties: {
        id: ref('JobId'),
        kind: ref('JobKind'),
        status: { const: 'canceled' },
        error: {
          type: 'object',
          description: 'The error every cancelled job carries (an `ErrorObject` with code `canceled`).',
          additionalProperties: false,
          required: ['code', 'message', 'retryable'],
          properties: {
            code: { const: 'canceled' },
            message: { type: 'string', examples: ['the job was cancelled by its partner before it started'] },
            retryable: { const: false },
          },
        },
        createdAt: ref('Timestamp'),
        updatedAt: ref('Timestamp'),
      },
    },
    Job: {
      description:
        'A job as `GET /v1/jobs/{id}` shows it: settled (`succeeded` with `result`, `failed` with `error`, or `canceled` with the ' +
        '`canceled` error), or the `processing` body while it is accepted or running.',
      oneOf: [ref('JobSucceeded'), ref('JobFailed'), ref('JobCanceled'), ref('JobProcessing')],
      discriminator: {
        propertyName: 'status',
        mapping: {
          succeeded: '#/components/schemas/JobSucceeded',
          failed: '#/components/schemas/JobFailed',
          canceled: '#/components/schemas/JobCanceled',
          processing: '#/components/schemas/JobProcessing',
        },
      },
    },
    JobKind: {
      type: 'string',
      enum: [...Object.values(JOB_KINDS)],
      description: 'What the job does: the mutation that queued it. New kinds may be added within `/v1`.',
      examples: ['submission.create'],
    },
    JobStatusFilter: {
      type: 'string',
      enum: [...JOB_STATUS_FILTERS],
      description: 'A job list filter: `processing` (not settled yet: accepted or running), `succeeded`, `failed` or `canceled`.',
    },
    JobListProcessing: {
      type: 'object',
      description: 'An unsettled job (accepted or running) as the job list shows it.',
      additionalProperties: false,
      required: ['id', 'kind', 'status', 'createdAt', 'updatedAt'],
      properties: {
        id: ref('JobId'),
        kind: ref('JobKind'),
        status: { const: 'processing' },
        createdAt: ref('Timestamp'),
        updatedAt: ref('Timestamp'),
      },
    },
    JobListItem: {
      description: 'A job in the list: settled exactly as `GET /v1/jobs/{id}` shows it, or `processing` with its times.',
      oneOf: [ref('JobSucceeded'), ref('JobFailed'), ref('JobCanceled'), ref('JobListProcessing')],
      discriminator: {
        propertyName: 'status',
        mapping: {
          succeeded: '#/components/schemas/JobSucceeded',
          failed: '#/components/schemas/JobFailed',
          canceled: '#/components/schemas/JobCanceled',
          processing: '#/components/schemas/JobListProcessing',
        },
      },
    },
    JobPage: {
      type: 'object',
      additionalProperties: false,
      required: ['items', 'nextCursor'],
      properties: {
        items: { type: 'array', items: ref('JobListItem') },
        nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` (with the same filters) for the next page; null on the last page.' },
      },
    },
    JobResult: {
      description:
        "What the job's mutation returned (its `kind` says which): a submission result, an attachment record or deletion, or a webhook " +
        'endpoint, its deletion, a secret rotation (never the secret), a recovery or a ping. Any of, not one of: a submission result ' +
        'holds every field of a submission, so a submission (the result of `submission.withdraw`) is also a valid submission result.',
      anyOf: [...jobResults],
    },
  };
}

export function jobPaths(): Obj {
  const principal = param('PrincipalId');
  return {
    '/v1/jobs': {
      get: {
        operationId: 'listJobs',
        tags: ['Jobs'],
        summary: 'List jobs',
        description:
          "The calling partner's jobs, newest first (by `createdAt`, then `id`; both immutable, so walking the pages returns every job " +
          'that existed when the walk began exactly once, while new ones land ahead of it). A settled job is shown exactly as ' +
          '`GET /v1/jobs/{id}` shows it; an unsettled one as `{id, kind, status: "processing", createdAt, updatedAt}`. For ' +
          'reconciliation: find the jobs still running, or the ones that failed or were cancelled, since a time. ' +
          LIST_400,
        parameters: [
          param('Limit'),
          param('Cursor'),
          {
            name: 'status',
            in: 'query',
            description: '`processing` (not settled yet: accepted or running), `succeeded`, `failed` or `canceled`.',
            schema: ref('JobStatusFilter'),
          },
          { name: 'kind', in: 'query', description: 'Only jobs of this kind.', schema: ref('JobKind') },
          timestampParam('createdSince', 'Only jobs created at or after this'),
          timestampParam('createdBefore', 'Only jobs created before this'),
          principal,
        ],
        responses: {
          200: {
            description: 'One page of jobs.',
            headers: apiHeaders(),
            content: { 'application/json': { schema: ref('JobPage'), examples: JOB_PAGE_EXAMPLES } },
          },
          400: response('BadRequest'),
          ...authErrors(),
        },
      },
    },
    '/v1/jobs/{jobId}': {
      parameters: [param('JobId')],
      get: {
        operationId: 'getJob',
        tags: ['Jobs'],
        summary: 'Read a job',
        description:
          'The settled job (`succeeded` with `result`, `failed` with `error`, or `canceled` with the `canceled` error), or while it is unsettled the `processing` body with ' +
          '`Retry-After: 5`: poll again after that many seconds, never sooner. With `Prefer: wait=N` the request is held until the job ' +
          'settles or N seconds pass, and answered the moment it settles.',
        parameters: [param('Prefer'), principal],
        responses: {
          200: {
            description: 'The job (settled), or `processing` with `Retry-After`.',
            headers: { ...apiHeaders(), ...preferHeaders(), 'Retry-After': header('Retry-After-Processing') },
            content: { 'application/json': { schema: ref('Job'), examples: JOB_EXAMPLES } },
          },
          404: response('NotFound'),
          ...authErrors(),
        },
      },
    },
    '/v1/jobs/{jobId}/cancel': {
      parameters: [param('JobId')],
      post: {
        operationId: 'cancelJob',
        tags: ['Jobs'],
        summary: 'Cancel a job that has not started',
        description:
          'Stops a job before it takes effect. Not itself a job: no body, no `Idempotency-Key`, answered at once. Needs the ' +
          'permission the mutation that queued the job needed (403 `forbidden` without it). A worker claims a job (in one statement that fails on a cancelled job) before it does ' +
          'anything, so **of a cancel and a worker racing, exactly one wins, whatever the timing, and the answer says which**: 200 ' +
          'with the job `canceled` (it never takes effect, `job.canceled` is emitted, requests waiting on it are answered at once: a ' +
          'mutation with 409 `canceled`, `GET /v1/jobs/{jobId}` with the cancelled job), or 409 `job_not_cancelable` (the worker ' +
          'won, or the job had already settled: read the job for its outcome). Cancelling a cancelled job answers the same 200 again. ' +
          'In `uat`, a submission with `externalRef` `sandbox:hold=<1..60>` stays unstarted that many seconds, to try this.',
        parameters: [principal],
        responses: {
          200: {
            description: 'The job is cancelled (now, or by an earlier cancel): `status: "canceled"` with the `canceled` error.',
            headers: apiHeaders(),
            content: { 'application/json': { schema: ref('JobCanceled'), examples: { canceled: JOB_EXAMPLES.canceled } } },
          },
          404: response('NotFound'),
          409: {
            description:
              '`job_not_cancelable`: the job has started or settled (succeeded or failed) and can no longer be cancelled. Read the job ' +
              '(`GET /v1/jobs/{jobId}`) for its outcome.',
            headers: apiHeaders(),
            content: json(ref('Error')),
          },
          ...authErrors(),
        },
      },
    },
  };
}
