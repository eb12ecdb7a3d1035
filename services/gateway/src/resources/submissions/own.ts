// "Is this submission the caller's?", the check before a job about it is accepted (or its quotes are
// listed): answered from the submissions this gateway knows (cache/known-submissions.ts), or by the
// submission service (another partner's submission, or none: 404 not_found), whose yes is then kept.
import { grpcOptions, ownerOf, type GatewayContext } from '../../context.js';
import type { RouteDeps } from '../deps.js';

export async function requireOwnSubmission(ctx: GatewayContext, deps: RouteDeps, submissionId: string): Promise<void> {
  const owner = ownerOf(ctx);
  const known = deps.waiters.knownSubmissions;
  if (known.has(owner, submissionId)) return;
  await deps.clients.submission.GetSubmission({ owner, submissionId }, grpcOptions(ctx, deps.config.grpcTimeoutMs));
  known.remember(owner, submissionId);
}
