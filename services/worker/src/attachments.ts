// Job handlers for attachment mutations (attachment.create, attachment.delete).
import type { Handler } from './handlers.js';

export const attachmentHandlers: Record<string, Handler> = {
  // Added with the attachments issue.
};
