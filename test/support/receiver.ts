// A webhook receiver on loopback for the tests: records every request (headers, raw body, when it
// arrived) and answers as the test says (a status, or never: a hanging receiver). Waiting for a
// delivery awaits its arrival, not a timer.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How to answer a request: an HTTP status (with optional headers), or 'hang' (never answer). */
export type Answer = number | { status: number; headers?: Record<string, string> } | 'hang';

export class Receiver {
  readonly received: Received[] = [];
  private readonly waiters = new Set<() => void>();
  private server!: Server;
  url = '';
  /** Decides each answer (by default 200). */
  answer: (r: Received, index: number) => Answer = () => 200;

  static async start(path = '/hooks'): Promise<Receiver> {
    const r = new Receiver();
    r.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rec: Received = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        r.received.push(rec);
        for (const w of r.waiters) w();
        const a = r.answer(rec, r.received.length - 1);
        if (a === 'hang') return;
        const { status, headers } = typeof a === 'number' ? { status: a, headers: {} } : a;
        res.writeHead(status, { 'content-type': 'text/plain', ...headers });
        res.end(status >= 200 && status < 300 ? 'ok' : `status ${status}`);
      });
    });
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    r.url = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}${path}`;
    return r;
  }

  /** The events received (parsed bodies). */
  events(): { id: string; type: string; data: Record<string, unknown> }[] {
    return this.received.map((r) => JSON.parse(r.body) as { id: string; type: string; data: Record<string, unknown> });
  }

  /** Resolves once check holds over what was received (re-checked at each arrival). */
  async waitFor<T>(what: string, check: (received: Received[]) => T | undefined | false, timeoutMs = 20_000): Promise<T> {
    const now = check(this.received);
    if (now) return now;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(onArrival);
        reject(new Error(`receiver: ${what} not so within ${timeoutMs} ms (received ${this.received.length}: ${this.received.map((r) => r.body.slice(0, 80)).join(' | ')})`));
      }, timeoutMs);
      const onArrival = () => {
        const v = check(this.received);
        if (v) {
          clearTimeout(timer);
          this.waiters.delete(onArrival);
          resolve(v);
        }
      };
      this.waiters.add(onArrival);
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/**
 * Receivers for a file or describe block: `const receiver = useReceivers()`, then `await receiver()`
 * in a test; every receiver it started is stopped after the block.
 */
export function useReceivers(): (path?: string) => Promise<Receiver> {
  const started: Receiver[] = [];
  afterAll(async () => {
    await Promise.all(started.map((r) => r.stop()));
  });
  return async (path) => {
    const r = await Receiver.start(path);
    started.push(r);
    return r;
  };
}
