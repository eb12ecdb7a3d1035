import { describe, expect, it } from 'vitest';
import type { NatsConnection } from 'nats';
import { natsNames, natsReadiness } from './client.js';

/** A connection whose status events, closed state and flush the test controls. */
function fakeConnection() {
  const listeners: ((s: { type: string }) => void)[] = [];
  const state = { closed: false, flushFails: false };
  const nc = {
    isClosed: () => state.closed,
    flush: async () => {
      if (state.flushFails) throw new Error('flush failed');
    },
    status: () => {
      const queue: { type: string }[] = [];
      let wake: (() => void) | undefined;
      listeners.push((s) => {
        queue.push(s);
        wake?.();
      });
      return {
        async *[Symbol.asyncIterator]() {
          for (;;) {
            while (queue.length) yield queue.shift()!;
            await new Promise<void>((r) => (wake = r));
          }
        },
      };
    },
  };
  const emit = async (type: string) => {
    for (const l of listeners) l({ type });
    await new Promise((r) => setTimeout(r, 0));
  };
  return { nc: nc as unknown as NatsConnection, state, emit };
}

describe('natsReadiness', () => {
  it('follows disconnects and reconnects, a closed connection and a failing round trip', async () => {
    const { nc, state, emit } = fakeConnection();
    const ready = natsReadiness(nc);
    await expect(ready()).resolves.toBeUndefined();
    await emit('disconnect');
    await expect(ready()).rejects.toThrow('disconnected');
    await emit('reconnect');
    await expect(ready()).resolves.toBeUndefined();
    state.flushFails = true;
    await expect(ready()).rejects.toThrow('flush failed');
    state.closed = true;
    await expect(ready()).rejects.toThrow('closed');
  });

  it('is unready until a connection made in the background exists', async () => {
    const holder: { conn?: NatsConnection } = {};
    const ready = natsReadiness(() => holder.conn);
    await expect(ready()).rejects.toThrow('not connected yet');
    holder.conn = fakeConnection().nc;
    await expect(ready()).resolves.toBeUndefined();
  });
});

describe('natsNames', () => {
  it('derives every name from the prefix', () => {
    const n = natsNames('t_1');
    expect([n.jobsStream, n.jobSubject('submission.create'), n.settledSubject]).toEqual(['t_1_JOBS', 't_1.jobs.submission_create', 't_1.events.job_settled']);
  });
});
