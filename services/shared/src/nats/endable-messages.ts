// A consume()'s messages that can be ended from outside (a stop, a reconnect, a stall watchdog) while
// a pull is pending: the iterator of a consume() whose pull is pending does not always end when the
// messages are closed (seen: a stop of the events service that waited forever, docs/reliability.md),
// so ending also ends the wait for the next message itself. The close is never awaited, for the same
// reason: it can wait for the server's answer for good.
import type { ConsumerMessages, JsMsg } from 'nats';

export interface EndableMessages {
  /** The next message, or done once the messages end (ended here, or by the server). */
  next(): Promise<IteratorResult<JsMsg>>;
  /** Ends the wait for the next message now and closes the messages; safe to call more than once. */
  end(): void;
}

export function endable(messages: ConsumerMessages): EndableMessages {
  let ended!: () => void;
  const ending = new Promise<IteratorResult<JsMsg>>((resolve) => {
    ended = () => resolve({ done: true, value: undefined });
  });
  const it = messages[Symbol.asyncIterator]();
  return {
    next: () => Promise.race([it.next(), ending]),
    end: () => {
      ended();
      void messages.close()?.catch(() => undefined);
    },
  };
}
