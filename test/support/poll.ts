// Waiting in tests for a condition that has no event to await (a database row, a metric, a span):
// polls every 25 ms and fails the test, naming the condition and what it last saw, if it does not
// hold in time. The one way to wait in this suite (eventually() is until() keeping the value).
import { createServer } from 'node:net';

/**
 * Resolves with check's first truthy answer. A check that throws (a service restarting, a connection
 * refused) counts as "not yet"; its last error is in the timeout message.
 */
export async function until<T>(what: string, check: () => Promise<T | false | null | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const seen = last instanceof Error ? `last error: ${last.message}` : `last answer: ${JSON.stringify(last)}`;
      throw new Error(`${what}: not so within ${timeoutMs} ms (${seen})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Reads until check accepts what was read; returns that value (the timeout names the last one read). */
export async function eventually<T>(read: () => Promise<T>, check: (v: T) => boolean, ms = 3_000): Promise<T> {
  let lastRead: T | undefined;
  try {
    return (
      await until(
        'condition',
        async () => {
          lastRead = await read();
          return check(lastRead) ? { v: lastRead } : false;
        },
        ms,
      )
    ).v;
  } catch (err) {
    throw new Error(`${(err as Error).message}; last value: ${JSON.stringify(lastRead)}`);
  }
}

/** A loopback port nothing listens on now (for a process that must come back on the same port). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}
