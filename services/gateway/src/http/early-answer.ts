// A request answered before its body was read to the end (an upload refused with 404, 413, 415 or
// 400, a JSON body refused by the rate limit or the token check) still has bytes on their way.
import { JSON_COST_UNIT } from '../middleware/rate-limit.js';
import type { GatewayContext } from '../context.js';

/** How long a client refused early may go on sending before it is cut off. */
export const LINGER_MS = 5_000;

/**
 * Reads and drops the rest of the body after the answer, so the client gets to read it (closing at
 * once would reset the connection under a client still sending, and many then report a broken pipe
 * instead of the 413). A client that neither finishes nor stops within LINGER_MS is cut off. Once per
 * request: the pipeline calls it for any error answered early, a route may call it first.
 */
export function drainAfterEarlyAnswer(ctx: GatewayContext): void {
  if (ctx.state.draining) return;
  ctx.state.draining = true;
  const { req } = ctx;
  req.resume();
  const cut = setTimeout(() => req.socket.destroy(), LINGER_MS);
  cut.unref();
  const done = () => clearTimeout(cut);
  req.once('end', done);
  req.once('close', done);
}

/**
 * After an error answered before the body was read: a JSON body of more than JSON_COST_UNIT bytes (or
 * of unknown length) is not read at all — the connection closes after the answer, so a client flooding
 * large bodies cannot make the gateway take in what it will never judge (issue 48, 3); anything else
 * (an upload, a small body) is drained, so the connection stays usable.
 */
export function afterEarlyAnswer(ctx: GatewayContext): void {
  if (ctx.req.complete || ctx.state.draining) return;
  const declared = ctx.request.length;
  const largeJson = ctx.is('application/json') && (declared === undefined || declared > JSON_COST_UNIT);
  if (largeJson) ctx.set('Connection', 'close');
  else drainAfterEarlyAnswer(ctx);
}
