// Drains that do not cut transfers (issue 16): a gateway that gets SIGTERM stops accepting new
// connections and new uploads, and lets an upload already under way finish within its drain budget
// (SHUTDOWN_DRAIN_MS, which the chart derives from drainSeconds together with the grace period).
import { afterAll, describe, expect, it } from 'vitest';
import { createConnection } from 'node:net';
import { createLogger } from '@partner/shared/telemetry/logger';
import { createPool, type Pool } from '@partner/shared/db/pg';
import { provision, submissionBody } from './support/fixtures.js';
import { download, MiB, multipart, storedRows } from './support/attachments.js';
import { eventually } from './support/poll.js';
import { type ChildService } from './support/stack.js';
import { useStack } from './support/use-stack.js';

/** Upload size and client rate: 20 MiB at 2 MiB/s, so most of it arrives after the SIGTERM. */
const SIZE = 20 * MiB;
const BYTES_PER_SECOND = 2 * MiB;

/** A body that goes no faster than `rate` bytes per second (a partner on a slow link). */
function throttled(body: ReadableStream<Uint8Array>, rate: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const started = Date.now();
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) return controller.close();
      sent += value.length;
      const due = started + (sent / rate) * 1000;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      controller.enqueue(value);
    },
  });
}

const connects = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => {
      s.end();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });

describe('SIGTERM of a gateway during a long upload', () => {
  let db: Pool;
  let token: string;
  let gateway: ChildService;
  const stack = useStack(async (stack) => {
    await stack.startAll();
    db = createPool({ url: stack.env.DATABASE_URL!, schema: 'submission', max: 2, applicationName: 'drain-test', logger: createLogger('test', 'silent') });
    token = await provision(stack);
    gateway = await stack.spawnService('gateway', { SHUTDOWN_DRAIN_MS: '60000', LOG_LEVEL: 'info' });
  });
  afterAll(async () => {
    await db?.end();
  });

  it('lets the 20 MiB upload finish, refuses new connections meanwhile, and exits cleanly', { timeout: 90_000 }, async () => {
    const sub = await stack.api('POST', '/v1/submissions', { token, json: submissionBody(), headers: { prefer: 'wait=10' } });
    expect(sub.status).toBe(200);
    const submissionId = sub.body.submissionId as string;
    const childUrl = `http://127.0.0.1:${gateway.ports.http}`;
    const before = await storedRows(db);

    const form = multipart({ fileName: 'slow.pdf', contentType: 'application/pdf', size: SIZE });
    const t0 = Date.now();
    const response = fetch(`${childUrl}/v1/submissions/${submissionId}/attachments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': form.contentType },
      body: throttled(form.body, BYTES_PER_SECOND),
      duplex: 'half',
      redirect: 'error',
      window: null,
    } as RequestInit);

    // The upload is under way in the submission service: now the pod is told to stop.
    await eventually(() => storedRows(db), (s) => (s.states.receiving ?? 0) === 1 && s.chunkRows > before.chunkRows, 30_000);
    const sigtermAt = Date.now();
    gateway.kill('SIGTERM');
    // No new connections from now on (the Service no longer routes here either).
    await eventually(() => connects(gateway.ports.http), (ok) => !ok, 5_000);

    const r = await response;
    const finishedAt = Date.now();
    const text = await r.text();
    expect(r.status, text).toBe(202);
    const sent = await form.sent;
    const exit = await gateway.exited;
    expect(exit).toBe(0);

    const job = await stack.api('GET', `/v1/jobs/${JSON.parse(text).id}`, { token, headers: { prefer: 'wait=20' } });
    expect(job.body.status).toBe('succeeded');
    const d = await download(stack, token, `/v1/submissions/${submissionId}/attachments/${job.body.result.attachmentId}/content`);
    expect(d.size).toBe(sent.size);
    expect(d.sha256).toBe(sent.sha256);
    // The part of the transfer after SIGTERM is what an old 5 s force-close would have cut.
    const afterSigterm = finishedAt - sigtermAt;
    expect(afterSigterm).toBeGreaterThan(5_000);
    console.log(`drain: 20 MiB upload took ${finishedAt - t0} ms, ${afterSigterm} ms of it after SIGTERM`);
  });
});
