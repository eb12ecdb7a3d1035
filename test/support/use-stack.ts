// The one way a test file gets a stack: `const stack = useStack(async (s) => { await s.startAll(); … })`
// creates it (its own database and NATS prefix) before the file's (or the describe block's) tests,
// runs the setup, and stops it afterwards. The returned object stands for the stack once it exists;
// using it before (at collection time) is a mistake and says so.
import { afterAll, beforeAll } from 'vitest';
import { PrivateNats } from './nats-server.js';
import { Stack } from './stack.js';

export function useStack(setup: (stack: Stack) => Promise<void> = async () => undefined): Stack {
  let current: Stack | undefined;
  beforeAll(async () => {
    current = await Stack.create();
    await setup(current);
  });
  afterAll(async () => {
    await current?.stop();
    current = undefined;
  });
  const live = (): Stack => {
    if (!current) throw new Error('useStack(): the stack exists only inside hooks and tests');
    return current;
  };
  return new Proxy({} as Stack, {
    get: (_, prop) => {
      const s = live();
      const value = Reflect.get(s, prop, s) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(s) : value;
    },
    set: (_, prop, value) => Reflect.set(live(), prop, value),
  });
}

/**
 * useStack() on a NATS server of its own (the tests that stop and restart NATS), started before the
 * stack and destroyed after it has stopped. `nats()` is that server once the hooks have run.
 */
export function useStackWithOwnNats(setup: (stack: Stack) => Promise<void>): { stack: Stack; nats: () => PrivateNats } {
  let nats: PrivateNats | undefined;
  // Registered before useStack's hooks, so it runs after the stack has stopped (after hooks run in reverse).
  afterAll(async () => {
    await nats?.destroy();
  });
  const stack = useStack(async (s) => {
    nats = await PrivateNats.start();
    s.env.NATS_URL = nats.url;
    await setup(s);
  });
  return {
    stack,
    nats: () => {
      if (!nats) throw new Error('useStackWithOwnNats(): NATS exists only inside hooks and tests');
      return nats;
    },
  };
}
