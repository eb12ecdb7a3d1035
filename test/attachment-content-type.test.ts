// An attachment's declared media type is checked against its leading bytes (issue 35): PNG bytes
// uploaded as application/pdf fail the attachment job with validation_error naming contentType (no
// attachment, no attachment.created); a file whose bytes fit its type, or of a type the check does not
// know, is attached as before.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fileBytes, multipartBytes, upload } from './support/attachments.js';
import { provision, submissionBody } from './support/fixtures.js';
import { useStack } from './support/use-stack.js';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(200)]);
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

describe('attachments: the declared media type against the bytes', () => {
  let token: string;
  let submissionId: string;
  const stack = useStack(async (s) => {
    await s.startAll();
    token = await provision(s);
    const sub = await s.api('POST', '/v1/submissions', { token, headers: { prefer: 'wait=20' }, json: submissionBody() });
    submissionId = sub.body.submissionId as string;
  });

  it('fails the job of PNG bytes declared as a PDF with validation_error naming contentType; nothing is attached', async () => {
    const r = await upload(stack, token, submissionId, multipartBytes({ fileName: 'loss-runs.pdf', contentType: 'application/pdf', data: PNG }, { documentType: 'loss_run' }));
    // validation_error has the error table's status (400), with the job's id, as any job failing with it.
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'validation_error', retryable: false });
    expect(r.body.error.message).toBe("contentType is application/pdf, but the file's first bytes are not a PDF's (they are a PNG image's); upload it again with the type it is");
    expect(r.body.jobId).toMatch(/^job_/);
    const job = await stack.api('GET', `/v1/jobs/${r.body.jobId as string}`, { token });
    expect(job.body).toMatchObject({ kind: 'attachment.create', status: 'failed', error: { code: 'validation_error' } });
    const list = await stack.api('GET', `/v1/submissions/${submissionId}/attachments`, { token });
    expect(list.body.items).toEqual([]);
    const events = await stack.api('GET', '/v1/events?types=attachment.created', { token });
    expect(events.body.items).toEqual([]);
  });

  it('refuses JPEG bytes as a PNG and a PDF as an Office document too', async () => {
    for (const [fileName, contentType, data] of [
      ['photo.png', 'image/png', Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(100)])],
      ['sov.docx', DOCX, fileBytes('application/pdf', 300)],
    ] as const) {
      const r = await upload(stack, token, submissionId, multipartBytes({ fileName, contentType, data }));
      expect(r.body.error?.code, fileName).toBe('validation_error');
      expect(r.body.error.message, fileName).toMatch(new RegExp(`^contentType is ${contentType.replace(/[.+]/g, '\\$&')}, but`));
    }
  });

  it('attaches files whose bytes fit their type (PDF, PNG, JPEG, a ZIP-based Office document), and types it does not check', async () => {
    for (const [fileName, contentType] of [
      ['a.pdf', 'application/pdf'],
      ['b.png', 'image/png'],
      ['c.jpg', 'image/jpeg'],
      ['d.docx', DOCX],
      ['e.txt', 'text/plain'],
    ] as const) {
      const r = await upload(stack, token, submissionId, multipartBytes({ fileName, contentType, data: fileBytes(contentType, 500) }));
      expect(r.status, `${fileName}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.body).toMatchObject({ fileName, contentType });
    }
  });
});
