// Where the cursor-signing secret comes from: POLICY_CURSOR_SECRET when configured, else the key
// the first start generated into policy.cursor_keys (so replicas agree and restarts keep cursors).
import type { Pool } from '@partner/shared/pg';
import { CursorCodec, newCursorSecret } from './cursor.js';

export async function loadCursorCodec(pool: Pool, configured: readonly string[]): Promise<CursorCodec> {
  if (configured.length > 0) return new CursorCodec(configured);
  await pool.query('INSERT INTO cursor_keys (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [newCursorSecret()]);
  const r = await pool.query<{ secret: string }>('SELECT secret FROM cursor_keys WHERE id = 1');
  return new CursorCodec([r.rows[0]!.secret]);
}
