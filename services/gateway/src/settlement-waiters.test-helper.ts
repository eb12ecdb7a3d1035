// For unit tests: a SettlementWaiters attached to a stand-in for the NATS subscription.
import type { SettlementWaiters } from './settlement-waiters.js';

/** Attaches waiters to a fake subscription; returns a function that delivers an event as NATS would. */
export function fakeNats(waiters: SettlementWaiters): (data: string) => void {
  let deliver: (data: string) => void = () => undefined;
  waiters.attach(
    {
      subscribe: (_subject: string, opts: { callback: (err: Error | null, msg: { string(): string }) => void }) => {
        deliver = (data) => opts.callback(null, { string: () => data });
        return { unsubscribe: () => undefined };
      },
    } as never,
    'subject',
  );
  return (data) => deliver(data);
}
