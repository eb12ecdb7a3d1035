// Issue 32: what signed receipts cost. Submit + wait at 64 connections with receipt issuing switched
// off (RECEIPTS_ISSUE=false, a bench-only setting: the submission service restarted with it), then on
// again (the default), each beside the floor pipeline in the same slices so the floor shows how the
// machine drifted between the two. Receipts may cost at most 10 % of throughput and of CPU per submit.
import { cpuDuring, submitPath, submitPathWithDatabase } from './stack.mjs';
import { cannon, interleave } from './load.mjs';
import { checks, floorSubmit, productSubmit } from './phases.mjs';

/** @param {{ stack: import('./stack.mjs').BenchStack, floorUrl: string, floorCpu: (fn: () => Promise<unknown>) => Promise<unknown>, P: { rounds: number, warmS: number, concS: number }, say: (msg: string) => void }} opts */
export async function receiptsCost({ stack, floorUrl, floorCpu, P, say }) {
  const gw = stack.gatewayUrl;
  const run = async (env) => {
    await stack.stopService('submission');
    await stack.startService('submission', { env });
    await cannon({ url: gw, request: productSubmit(stack), check: checks.submitted, connections: 64, duration: P.warmS });
    const procs = Object.fromEntries(submitPath().map((s) => [s, stack.procs.get(s)]));
    return interleave(
      [
        { name: 'floor', url: floorUrl, request: floorSubmit(stack), check: checks.submitted, measure: floorCpu },
        {
          name: 'product',
          url: gw,
          request: productSubmit(stack),
          check: checks.submitted,
          measure: (fn) => cpuDuring(stack, { procs, pgApps: submitPathWithDatabase() }, fn),
        },
      ],
      { rounds: P.rounds, seconds: P.concS / P.rounds, connections: 64 },
    );
  };
  const off = await run({ RECEIPTS_ISSUE: 'false' });
  const on = await run({});
  say(
    `64 connections, receipts off: ${off.product.rps} req/s, ${off.product.cpuMsPerRequest?.total} ms CPU/req (floor ${off.floor.rps} req/s); ` +
      `receipts on: ${on.product.rps} req/s, ${on.product.cpuMsPerRequest?.total} ms CPU/req (floor ${on.floor.rps} req/s)`,
  );
  return { off: { product: off.product, floor: off.floor }, on: { product: on.product, floor: on.floor } };
}
