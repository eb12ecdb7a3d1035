// The Python example (examples/python/submit.py, standard library only) runs with the machine's
// python3 against the test stack: a result within the wait, a 202 followed by polling, a job failure.
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';

const PRODUCT = '11111111-2222-4333-8444-555555555555';
let creds: ClientCreds;

const stack = useStack(async (stack) => {
  await stack.startAll();
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Python example product');
  creds = await stack.createClient();
});

function python(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'python3',
      [join(ROOT, 'examples/python/submit.py'), ...args],
      {
        env: {
          PATH: process.env.PATH ?? '',
          PARTNER_BASE_URL: `${stack.gatewayUrl}/v1`,
          PARTNER_AUTH_URL: stack.authUrl,
          PARTNER_CLIENT_ID: creds.clientId,
          PARTNER_CLIENT_SECRET: creds.clientSecret,
          PARTNER_SCOPE: stack.scope,
        },
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('the Python example of the recommended pattern', () => {
  it('creates a submission within the wait', async () => {
    const r = await python([PRODUCT, 'py-ref-1']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'submitted', submissionName: 'Acme Holdings LLC' });
  });

  it('polls a job that outlasts the wait (202, Retry-After)', async () => {
    // The sandbox delay is longer than the example's 15 s wait, so the answer is a 202 and the script polls.
    const r = await python([PRODUCT, 'sandbox:delay=17']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'submitted' });
  }, 60_000);

  it('reports a failed job with its error and jobId', async () => {
    const r = await python([PRODUCT, 'sandbox:fail=unknown_product']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'unknown_product', retryable: false }, jobId: expect.stringMatching(/^job_/) });
  });
});
