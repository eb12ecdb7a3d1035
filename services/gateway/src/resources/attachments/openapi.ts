// The attachments' part of the OpenAPI document (/v1/submissions/{submissionId}/attachments…): their
// paths and schemas. The media types and document types come from the gateway's own allowlists
// (media-types.ts), so the reference cannot drift from the behaviour.
import { apiHeaders, authErrors, header, json, MUTATION_DESCRIPTION, mutationResponses, param, response, type Obj } from '../../openapi/common.js';
import { ref, type Schema } from '../../openapi/schemas.js';
import { ALLOWED_MEDIA_TYPES, DEFAULT_DOCUMENT_TYPE, DOCUMENT_TYPES } from './media-types.js';

export const attachmentSchemas: Record<string, Schema> = {
  DocumentType: {
    type: 'string',
    enum: [...DOCUMENT_TYPES],
    description: `Kind of insurance document; \`${DEFAULT_DOCUMENT_TYPE}\` when not given.`,
  },
  AttachmentUpload: {
    type: 'object',
    description:
      'The upload form: a `file` part (with a filename) and an optional `documentType` field. Allowed file types: ' +
      `${Object.keys(ALLOWED_MEDIA_TYPES).join(', ')} (a part sent as \`application/octet-stream\` is typed by its file extension).`,
    additionalProperties: false,
    required: ['file'],
    properties: {
      file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'The file. Must not be empty.' },
      documentType: ref('DocumentType'),
    },
  },
  Attachment: {
    type: 'object',
    additionalProperties: false,
    required: ['attachmentId', 'submissionId', 'fileName', 'contentType', 'sizeBytes', 'sha256', 'documentType', 'createdAt'],
    properties: {
      attachmentId: ref('Uuid'),
      submissionId: ref('Uuid'),
      fileName: {
        type: 'string',
        minLength: 1,
        description: 'The uploaded name made safe: no path, no control characters or quotes, at most 255 UTF-8 bytes.',
        examples: ['loss-runs-2025.pdf'],
      },
      contentType: { type: 'string', enum: Object.keys(ALLOWED_MEDIA_TYPES), description: 'Media type the file is stored and served with.' },
      sizeBytes: { type: 'integer', minimum: 1 },
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'Lowercase hex SHA-256 of the bytes (also the content ETag).' },
      documentType: ref('DocumentType'),
      createdAt: ref('Timestamp'),
      receipt: { ...ref('ReceiptJws'), description: "In an attachment.create job's result only: the attachment's signed receipt." },
    },
  },
  AttachmentPage: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: ref('Attachment') },
      nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last page.' },
    },
  },
  AttachmentDeleted: {
    type: 'object',
    additionalProperties: false,
    required: ['attachmentId', 'deleted'],
    properties: { attachmentId: ref('Uuid'), deleted: { const: true } },
  },
};

export function attachmentPaths(): Obj {
  const principal = param('PrincipalId');
  return {
    '/v1/submissions/{submissionId}/attachments': {
      parameters: [param('SubmissionId')],
      post: {
        operationId: 'uploadAttachment',
        tags: ['Attachments'],
        summary: 'Attach a file to a submission',
        description:
          'Uploads a file as `multipart/form-data` (a `file` part and an optional `documentType` field). The bytes are stored before ' +
          'the job is queued; the job makes them an attachment, and its result is the attachment record. The file may be at most 25 MiB ' +
          '(configurable per environment; 413 beyond); empty files and unknown fields are 400; file types outside the allowlist 415. ' +
          "The submission must exist and be the caller's (404 before any byte is read); the job of an upload to a withdrawn " +
          `submission fails with 409 \`not_withdrawable\`. ${MUTATION_DESCRIPTION}`,
        parameters: [param('IdempotencyKey'), param('Prefer'), principal],
        requestBody: {
          required: true,
          content: {
            'multipart/form-data': {
              schema: ref('AttachmentUpload'),
              encoding: { file: { contentType: ['application/octet-stream', ...Object.keys(ALLOWED_MEDIA_TYPES)].join(', ') } },
            },
          },
        },
        responses: mutationResponses(ref('Attachment'), 'The attachment record.', [413, 415]),
      },
      get: {
        operationId: 'listAttachments',
        tags: ['Attachments'],
        summary: "List a submission's attachments",
        description: 'Newest first, paginated like policies. An unknown or repeated parameter, a bad `limit` or cursor is 400 `validation_error`.',
        parameters: [param('Limit'), param('Cursor'), principal],
        responses: {
          200: { description: 'One page of attachments.', headers: apiHeaders(), content: json(ref('AttachmentPage')) },
          400: response('BadRequest'),
          404: response('NotFound'),
          ...authErrors(),
        },
      },
    },
    '/v1/submissions/{submissionId}/attachments/{attachmentId}': {
      parameters: [param('SubmissionId'), param('AttachmentId')],
      get: {
        operationId: 'getAttachment',
        tags: ['Attachments'],
        summary: 'Read an attachment record',
        parameters: [principal],
        responses: {
          200: { description: 'The attachment record.', headers: apiHeaders(), content: json(ref('Attachment')) },
          404: response('NotFound'),
          ...authErrors(),
        },
      },
      delete: {
        operationId: 'deleteAttachment',
        tags: ['Attachments'],
        summary: 'Delete an attachment',
        description:
          'Deletes the attachment and its bytes; the job result is `{attachmentId, deleted: true}`. Without an `Idempotency-Key` an ' +
          'attachment that does not exist is 404 at once; with one, a replay returns the original job, and a new key gets a job that ' +
          `fails with \`not_found\`. ${MUTATION_DESCRIPTION}`,
        parameters: [param('IdempotencyKey'), param('Prefer'), principal],
        responses: mutationResponses(ref('AttachmentDeleted'), 'The deletion.', []),
      },
    },
    '/v1/submissions/{submissionId}/attachments/{attachmentId}/content': {
      parameters: [param('SubmissionId'), param('AttachmentId')],
      get: {
        operationId: 'downloadAttachment',
        tags: ['Attachments'],
        summary: "Download an attachment's bytes",
        description: 'Streams the bytes with the stored `Content-Type`, `Content-Length`, `Content-Disposition` and `ETag` (the quoted sha256).',
        parameters: [param('IfNoneMatch'), principal],
        responses: {
          200: {
            description: 'The bytes.',
            headers: { ...apiHeaders(), 'Content-Disposition': header('Content-Disposition'), 'Content-Length': header('Content-Length'), ETag: header('ETag') },
            content: { '*/*': { schema: { description: 'The file, as it was uploaded.' } } },
          },
          304: { description: '`If-None-Match` matched the ETag: the copy the client holds is current.', headers: { ...apiHeaders(), ETag: header('ETag') } },
          404: response('NotFound'),
          ...authErrors(),
        },
      },
      head: {
        operationId: 'headAttachmentContent',
        tags: ['Attachments'],
        summary: "An attachment's content headers",
        description: 'As the download, without the bytes.',
        parameters: [param('IfNoneMatch'), principal],
        responses: {
          200: {
            description: 'The headers of the download.',
            headers: { ...apiHeaders(), 'Content-Disposition': header('Content-Disposition'), 'Content-Length': header('Content-Length'), ETag: header('ETag') },
          },
          304: { description: '`If-None-Match` matched the ETag.', headers: { ...apiHeaders(), ETag: header('ETag') } },
          404: { description: 'Not found (no body).', headers: apiHeaders() },
          ...authErrors(),
        },
      },
    },
  };
}
