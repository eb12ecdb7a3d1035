import { describe, expect, it } from 'vitest';
import { bindingOf, CursorCodec, JOB_IDS, newCursorSecret } from './list-cursor.js';

const CONTEXT = 'partner.policy.v1/list-cursor';

const owner = { tenantId: 'tenant-a', partnerId: 'partner-a' };
const binding = bindingOf(owner, ['active', undefined, undefined, undefined]);
const pos = { createdAtMs: Date.parse('2025-03-01T12:34:56.789Z'), id: '0192f1a4-7c3e-7b2a-9d4e-1f2a3b4c5d6e' };

describe('CursorCodec', () => {
  const codec = new CursorCodec([newCursorSecret()], CONTEXT);

  it('round-trips a position for the same binding', () => {
    const token = codec.encode(pos, binding);
    expect(token).toMatch(/^[A-Za-z0-9_-]{55}$/);
    expect(codec.decode(token, binding)).toEqual(pos);
  });

  it('refuses the cursor for another partner, another tenant or other filters', () => {
    const token = codec.encode(pos, binding);
    expect(codec.decode(token, bindingOf({ ...owner, partnerId: 'partner-b' }, ['active', undefined, undefined, undefined]))).toBeUndefined();
    expect(codec.decode(token, bindingOf({ ...owner, tenantId: 'tenant-b' }, ['active', undefined, undefined, undefined]))).toBeUndefined();
    expect(codec.decode(token, bindingOf(owner, [undefined, undefined, undefined, undefined]))).toBeUndefined();
    expect(codec.decode(token, bindingOf(owner, ['pending', undefined, undefined, undefined]))).toBeUndefined();
  });

  it('refuses a cursor signed with another secret', () => {
    const other = new CursorCodec([newCursorSecret()], CONTEXT);
    expect(codec.decode(other.encode(pos, binding), binding)).toBeUndefined();
  });

  it('refuses every single-character change and every truncation', () => {
    const token = codec.encode(pos, binding);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = 0; i < token.length; i++) {
      for (const ch of ['A', 'z', '-', alphabet[(alphabet.indexOf(token[i]!) + 1) % alphabet.length]!]) {
        if (ch === token[i]) continue;
        const forged = token.slice(0, i) + ch + token.slice(i + 1);
        expect(codec.decode(forged, binding), `position ${i} -> ${ch}`).toBeUndefined();
      }
      expect(codec.decode(token.slice(0, i), binding)).toBeUndefined();
    }
    expect(codec.decode(`${token}A`, binding)).toBeUndefined();
  });

  it('refuses garbage without throwing', () => {
    for (const junk of ['', 'x', '!!!', "' OR 1=1 --", 'a'.repeat(55), '='.repeat(55), '\u0000'.repeat(55), 'ü'.repeat(55)]) {
      expect(codec.decode(junk, binding)).toBeUndefined();
    }
  });

  it('verifies with every configured secret but signs with the first (rotation)', () => {
    const [oldSecret, newSecret] = [newCursorSecret(), newCursorSecret()];
    const before = new CursorCodec([oldSecret], CONTEXT);
    const during = new CursorCodec([newSecret, oldSecret], CONTEXT);
    const after = new CursorCodec([newSecret], CONTEXT);
    const oldToken = before.encode(pos, binding);
    expect(during.decode(oldToken, binding)).toEqual(pos);
    const newToken = during.encode(pos, binding);
    expect(before.decode(newToken, binding)).toBeUndefined();
    expect(after.decode(newToken, binding)).toEqual(pos);
  });

  it('refuses a cursor of another list under the same secret', () => {
    const secret = newCursorSecret();
    const token = new CursorCodec([secret], CONTEXT).encode(pos, binding);
    expect(new CursorCodec([secret], 'partner.submission.v1/list-cursor').decode(token, binding)).toBeUndefined();
  });

  it('carries job handles as well as UUIDs', () => {
    const jobs = new CursorCodec([newCursorSecret()], 'partner.job.v1/list-cursor', JOB_IDS);
    const jobPos = { createdAtMs: pos.createdAtMs, id: 'job_0199a3e47c1d7b529a0e3f2d4c5b6a72' };
    expect(jobs.decode(jobs.encode(jobPos, binding), binding)).toEqual(jobPos);
  });
});
