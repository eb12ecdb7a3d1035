// Files attached to a submission, under /v1/submissions/{submissionId}/attachments: uploads and
// deletions are jobs; records, lists and downloads are reads.
import { ref } from '../../openapi/schemas.js';
import type { Resource } from '../resource.js';
import { attachmentPaths, attachmentSchemas } from './openapi.js';
import { attachmentRoutes } from './routes.js';

export const attachments: Resource = {
  name: 'attachments', routes: attachmentRoutes,
  openapi: {
    tag: { name: 'Attachments', description: 'Files attached to a submission; uploads and deletions are jobs.' },
    paths: attachmentPaths, schemas: attachmentSchemas,
    jobResults: [ref('Attachment'), ref('AttachmentDeleted')],
    eventData: {
      'attachment.created': ref('Attachment'),
      'attachment.deleted': {
        type: 'object',
        additionalProperties: false,
        required: ['submissionId', 'attachmentId'],
        properties: { submissionId: ref('Uuid'), attachmentId: ref('Uuid') },
      },
    },
  },
};
