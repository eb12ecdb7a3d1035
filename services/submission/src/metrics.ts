// The submission service's metrics: submissions created, uploads by outcome and the bytes staged, and
// what the attachment sweep did.
import { Counter, type Registry } from 'prom-client';

/** What one pass of the attachment sweep (attachments.ts sweepAttachments) did. */
export interface SweepResult {
  abandonedRemoved: number;
  deletedPurged: number;
  deletedDropped: number;
}

export interface SubmissionMetrics {
  created(): void;
  /** An upload ended: staged (with its size) or refused/failed. */
  upload(outcome: string, stagedBytes?: number): void;
  swept(r: SweepResult): void;
}

export function submissionMetrics(registry: Registry): SubmissionMetrics {
  const created = new Counter({ name: 'partner_submissions_created_total', help: 'Submissions created.', registers: [registry] });
  const uploads = new Counter({
    name: 'partner_attachment_uploads_total',
    help: 'Uploads received, by outcome (staged, too_large, not_found, invalid, aborted, failed).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const storedBytes = new Counter({ name: 'partner_attachment_staged_bytes_total', help: 'Bytes of uploads staged.', registers: [registry] });
  const swept = new Counter({
    name: 'partner_attachment_swept_total',
    help: 'Records handled by the attachment sweep, by what was done (abandoned_removed, deleted_purged, deleted_dropped).',
    labelNames: ['action'],
    registers: [registry],
  });
  return {
    created: () => created.inc(),
    upload: (outcome, stagedBytes) => {
      uploads.inc({ outcome });
      if (stagedBytes !== undefined) storedBytes.inc(stagedBytes);
    },
    swept: (r) => {
      swept.inc({ action: 'abandoned_removed' }, r.abandonedRemoved);
      swept.inc({ action: 'deleted_purged' }, r.deletedPurged);
      swept.inc({ action: 'deleted_dropped' }, r.deletedDropped);
    },
  };
}
