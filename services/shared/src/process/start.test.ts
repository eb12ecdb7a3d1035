import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createLogger } from '../telemetry/logger.js';
import { createClients } from './clients.js';
import { listenHttp } from './http.js';
import { supervisedLoops } from './loops.js';
import { startProcess } from './start.js';

const logger = createLogger('test', 'silent');
const config = { serviceName: 'test', logLevel: 'silent', host: '127.0.0.1', opsPort: 0, drainMs: 1_000 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('startProcess', () => {
  it('stops in the one order: readiness off, listeners drain, loops, the service’s own stop, ops last', async () => {
    const steps: string[] = [];
    let opsPort = 0;
    let passStarted = false;
    let release = () => {};
    const released = new Promise<void>((r) => (release = r));
    const readyz = async () => (await fetch(`http://127.0.0.1:${opsPort}/readyz`)).status;
    const running = await startProcess({
      name: 'test',
      config,
      logger,
      build: async ({ every, draining }) => {
        every({
          name: 'a loop',
          intervalMs: 10,
          run: async () => {
            passStarted = true;
            await released;
            steps.push('loop pass ended');
          },
        });
        const http = await listenHttp({
          name: 'http',
          host: '127.0.0.1',
          port: 0,
          options: {},
          handle: (_req, res) => res.end('ok'),
          logger,
          onDrain: () => steps.push(`drain (draining=${draining()})`),
        });
        const close = async (ms: number) => {
          steps.push(`listener closing, readyz ${await readyz()}`);
          await http.close(ms);
          release();
        };
        return {
          listeners: [{ ...http, close }],
          stop: async () => {
            steps.push('service stop');
          },
        };
      },
    });
    opsPort = running.ports.ops!;
    expect(Object.keys(running.ports).sort()).toEqual(['http', 'ops']);
    expect(await readyz()).toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${running.ports.http}/`)).text()).toBe('ok');
    while (!passStarted) await sleep(5);
    await running.stop();
    expect(steps).toEqual(['listener closing, readyz 503', 'drain (draining=true)', 'loop pass ended', 'service stop']);
    await expect(fetch(`http://127.0.0.1:${opsPort}/livez`)).rejects.toThrow();
  });

  it('fails the start when the registry and the configuration disagree on the services a process calls', () => {
    const grpc = { job: '127.0.0.1:1', submission: '127.0.0.1:1', policy: '127.0.0.1:1' };
    expect(() => createClients('worker', { grpc, grpcTimeoutMs: 100, grpcCallStreams: true }, new Registry())).toThrow(/registry job, submission, policy, events; configured job, submission, policy/);
  });
});

describe('supervised loops', () => {
  it('runs a pass again after it failed, never two at once, and waits for the running pass on stop', async () => {
    const loops = supervisedLoops(logger);
    let passes = 0;
    let running = 0;
    let most = 0;
    loops.every({
      name: 'flaky',
      intervalMs: 5,
      run: async () => {
        passes++;
        running++;
        most = Math.max(most, running);
        await sleep(20);
        running--;
        if (passes % 2 === 1) throw new Error('database down');
      },
    });
    for (let waited = 0; passes < 3 && waited < 5_000; waited += 10) await sleep(10);
    await loops.stop();
    expect(passes).toBeGreaterThanOrEqual(3);
    expect(most).toBe(1);
    expect(running).toBe(0);
  });
});
