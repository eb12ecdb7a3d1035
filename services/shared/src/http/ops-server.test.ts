import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { startOpsServer, type OpsServer } from './ops-server.js';

describe('the ops listener', () => {
  let ops: OpsServer | undefined;
  afterEach(() => ops?.close());

  it('answers /livez 503 with the failing check while a liveness check names a reason, 200 otherwise', async () => {
    let reason: string | undefined = 'job consumer down for 61 s';
    ops = await startOpsServer({ host: '127.0.0.1', port: 0, registry: new Registry(), checks: {}, liveness: { consumer: () => reason } });
    const wedged = await fetch(`http://127.0.0.1:${ops.port}/livez`);
    expect(wedged.status).toBe(503);
    expect(await wedged.json()).toEqual({ status: 'wedged', checks: { consumer: 'failed: job consumer down for 61 s' } });
    reason = undefined;
    expect((await fetch(`http://127.0.0.1:${ops.port}/livez`)).status).toBe(200);
  });
});
