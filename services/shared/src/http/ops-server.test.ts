import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { startOpsServer, type OpsServer } from './ops-server.js';

describe('the ops listener', () => {
  let ops: OpsServer | undefined;
  afterEach(() => ops?.close());
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${ops!.port}${path}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('answers /livez 503 with the failing check while a liveness check names a reason, 200 otherwise', async () => {
    let reason: string | undefined = 'job consumer down for 61 s';
    ops = await startOpsServer({ host: '127.0.0.1', port: 0, registry: new Registry(), dependencies: {}, liveness: { consumer: () => reason } });
    const wedged = await fetch(`http://127.0.0.1:${ops.port}/livez`);
    expect(wedged.status).toBe(503);
    expect(await wedged.json()).toEqual({ status: 'wedged', checks: { consumer: 'failed: job consumer down for 61 s' } });
    reason = undefined;
    expect((await fetch(`http://127.0.0.1:${ops.port}/livez`)).status).toBe(200);
  });

  it('stays ready while a dependency fails or hangs, reporting it; only draining makes /readyz 503', async () => {
    let calls = 0;
    ops = await startOpsServer({
      host: '127.0.0.1',
      port: 0,
      registry: new Registry(),
      dependencies: {
        postgres: async () => {
          calls++;
          throw new Error('connect ECONNREFUSED');
        },
        // Never answers: /readyz must not wait for it.
        nats: () => new Promise<void>(() => undefined),
      },
    });
    const started = Date.now();
    const ready = await get('/readyz');
    expect(Date.now() - started).toBeLessThan(500);
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ok');
    // A fresh round, waited for (the hanging check times out after 2 s): information, still 200.
    const deps = await get('/dependencies');
    expect(deps).toEqual({ status: 200, body: { status: 'degraded', dependencies: { postgres: 'failed: connect ECONNREFUSED', nats: 'failed: timed out' } } });
    expect(calls).toBeGreaterThanOrEqual(1);
    // /readyz shows the last round's results, answered at once.
    const after = await get('/readyz');
    expect(after).toEqual({ status: 200, body: { status: 'ok', dependencies: { postgres: 'failed: connect ECONNREFUSED', nats: 'failed: timed out' } } });
    ops.setDraining();
    expect(await get('/readyz')).toEqual({ status: 503, body: { status: 'draining' } });
  });
});
