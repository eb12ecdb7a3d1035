// Where `partner events tail` and `partner listen` start following the feed: now, unless told to go
// back (--from-start: the oldest retained event; --since TIME; --cursor CURSOR: where a run stopped).
import type { FollowStart } from '@partner/sdk';
import { UsageError, type Values } from '../command.js';

export function feedStart(v: Values): FollowStart {
  const given = [v['from-start'] ? '--from-start' : undefined, v.since !== undefined ? '--since' : undefined, v.cursor !== undefined ? '--cursor' : undefined].filter(Boolean);
  if (given.length > 1) throw new UsageError(`give one of --from-start, --since or --cursor, not ${given.join(' and ')}`);
  if (v.cursor !== undefined) return { cursor: v.cursor };
  if (v.since !== undefined) return { since: v.since };
  return { from: v['from-start'] ? 'start' : 'now' };
}
