// Two of every process on one machine, one of each SIGKILLed mid-run (issue 48, 10): the bounded run of
// `npm run chaos:replicas -- --ci` (scripts/chaos-replicas.mjs, bench/lib/replicas.mjs): two gateways,
// two of each gRPC service dialled as one ipv4:a,b target, two workers, the events writer and its
// standby, two dispatchers, on a three-node JetStream cluster with R3 streams started for the run.
// Each fact the run reports is judged here; docs/reliability.md "Replicas under faults".
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hotPathSwitches } from '../scripts/lib/processes.mjs';
import { ROOT } from './support/stack.js';

// 25–75 s here, alone or beside the off-switch suite (docs/reliability.md); the bound is for a machine many times slower.
const RUN_TIMEOUT_S = 360;

const dir = mkdtempSync(join(tmpdir(), 'replicas-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runChaos(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // --no-build: vitest's globalSetup has built.
    const child = spawn(process.execPath, [`${ROOT}scripts/chaos-replicas.mjs`, '--ci', '--no-build', ...args], { cwd: ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('two replicas of every process, one of each killed mid-run', () => {
  it('settles every accepted job once, answers waits across gateways, shows the feed once in one order and delivers every webhook', { timeout: RUN_TIMEOUT_S * 1000 }, async ({ onTestFailed }) => {
    const out = join(dir, 'ci.json');
    // The run ends by its deadline, 60 s inside this test's timeout, and writes what it saw: a stall shows
    // as a broken invariant with the run's own account (its progress lines, the survivors' logs), not as
    // a timeout that says nothing.
    const { code, output } = await runChaos(['--out', out, '--deadline-s', String(RUN_TIMEOUT_S - 60)]);
    onTestFailed(() => console.log(`npm run chaos:replicas -- --ci (exit ${code}), its last lines:\n${output.slice(-6000)}`));
    expect(existsSync(out), `the run wrote no result (exit ${code})`).toBe(true);
    const r = JSON.parse(readFileSync(out, 'utf8'));
    const c = r.chaos;

    // The run's services took the hot paths' switches this process has (the off-switch run of .ci/run).
    expect(r.meta.hotPathSwitches).toEqual(hotPathSwitches());

    // One replica of every process was killed, with jobs accepted before and after.
    expect(c.replicas).toBe(2);
    expect(c.kills.map((k: { process: string }) => k.process.split('#')[0]).sort()).toEqual(['auth', 'dispatcher', 'events', 'gateway', 'job', 'policy', 'submission', 'worker']);
    expect(Math.min(...c.kills.map((k: { acceptedBefore: number }) => k.acceptedBefore))).toBeGreaterThan(0);
    expect(c.acceptedAfterKills).toBeGreaterThan(0);
    expect(c.failovers).toBeGreaterThan(0); // clients of the killed gateway went on through the other

    // Every accepted job settled exactly once: one job per key, one submission per job, succeeded,
    // one settled event per job in the feed.
    expect(c.jobs).toBe(r.meta.jobs);
    expect(c.outcomes).toEqual({ succeeded: c.jobs });
    expect(c.database).toEqual({ jobs: c.jobs + c.probes.length, notSucceeded: 0, submissionsNotOne: 0, keysNotOneJob: 0 });
    expect(c.feed.jobsWithoutSettledEvent).toBe(0);
    expect(c.feed.jobsSettledMoreThanOnce).toBe(0);

    // A wait on one gateway is answered when the job (held 2 s by sandbox:hold) settles on the other.
    expect(c.probes.length).toBeGreaterThanOrEqual(2);
    for (const p of c.probes) {
      expect(p.submittedOn).not.toBe(p.waitedOn);
      expect(p.statusWhenSubmitted).toBe('accepted');
      expect(p).toMatchObject({ status: 200, jobStatus: 'succeeded' });
      expect(p.waitedMs).toBeGreaterThanOrEqual(1_000);
      expect(p.waitedMs).toBeLessThan(30_000);
    }
    expect(c.crossGateway).toBeGreaterThan(0);

    // The feed: every event once, and the reader that followed it live (across the gateway kill) saw
    // the order the feed shows when read again.
    expect(c.feed.events).toBeGreaterThanOrEqual(2 * c.jobs);
    expect(c.feed).toMatchObject({ duplicates: 0, followedDuplicates: 0, followedIsPrefix: true });
    expect(c.feed.followed).toBe(c.feed.events);

    // Every webhook delivered (deduplicated by webhook-id, which is the event id).
    expect(c.webhooks).toMatchObject({ missing: 0, webhookIdIsEventId: true });
    expect(c.webhooks.expected).toBeGreaterThanOrEqual(2 * c.jobs);
    expect(c.webhooks.distinct).toBeGreaterThanOrEqual(c.webhooks.expected);

    expect(r.violations).toEqual([]);
    expect(code, output.slice(-3000)).toBe(0);
  });
});
