import { describe, expect, it } from 'vitest';
import { jobMessageJson, parseJobMessage } from './jobs.js';

const caller = { tenantId: 'ten_1', partnerId: 'ptn_1', clientId: 'cli_1', principalId: '' };

describe('job messages', () => {
  it('carry kind, caller and the payload spliced in as given', () => {
    const body = jobMessageJson('job_1', 'submission.create', caller, '{"externalRef":"R-1","applicant":{"legalName":"A \\"B\\""}}');
    expect(parseJobMessage(body)).toEqual({
      jobId: 'job_1',
      kind: 'submission.create',
      caller,
      payload: { externalRef: 'R-1', applicant: { legalName: 'A "B"' } },
    });
  });

  it('read the older id-only form as the id alone', () => {
    expect(parseJobMessage('{"jobId":"job_1"}')).toEqual({ jobId: 'job_1' });
  });

  it('fall back to the id when the caller is incomplete', () => {
    expect(parseJobMessage(JSON.stringify({ jobId: 'job_1', kind: 'k', payload: {}, caller: { tenantId: 't' } }))).toEqual({ jobId: 'job_1' });
  });

  it('reject what is not a job message', () => {
    for (const body of ['', 'not json', '[]', 'null', '{"id":"job_1"}', '{"jobId":7}']) expect(parseJobMessage(body), body).toBeUndefined();
  });
});
