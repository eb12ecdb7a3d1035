// "Is this the caller's?", the check before a job about a submission or a quote is accepted (or a
// submission's quotes are listed): answered from what this gateway knows (cache/known-resources.ts),
// or by the service that owns the resource (another partner's, or none: 404 not_found), whose yes is
// then kept.
import { grpcOptions, ownerOf, type GatewayContext } from '../context.js';
import type { KnownResource } from '../cache/known-resources.js';
import type { RouteDeps } from './deps.js';

export async function requireOwn(ctx: GatewayContext, deps: RouteDeps, resource: KnownResource, id: string): Promise<void> {
  const owner = ownerOf(ctx);
  const known = deps.waiters.knownResources;
  if (known.has(owner, resource, id)) return;
  const options = grpcOptions(ctx, deps.config.grpcTimeoutMs);
  if (resource === 'submission') await deps.clients.submission.GetSubmission({ owner, submissionId: id }, options);
  else await deps.clients.policy.GetQuote({ owner, quoteId: id }, options);
  known.remember(owner, resource, id);
}
