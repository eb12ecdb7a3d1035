import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './attachment-cursor.js';

const scope = { tenantId: 't1', partnerId: 'p1', submissionId: '01a1fe2a-20c8-72f8-b92b-a3c5fced4944' };
const pos = { createdAtMs: Date.UTC(2026, 10, 21, 12, 0, 0, 123), attachmentId: '01a1fe2a-20ef-711a-9556-dd8a87e79394' };

describe('attachment list cursors', () => {
  it('round-trips a position as 50 URL-safe characters', () => {
    const token = encodeCursor(pos, scope);
    expect(token).toMatch(/^[A-Za-z0-9_-]{50}$/);
    expect(decodeCursor(token, scope)).toEqual(pos);
    // The submission id's case does not matter.
    expect(decodeCursor(token, { ...scope, submissionId: scope.submissionId.toUpperCase() })).toEqual(pos);
  });

  it('is only valid for the owner and submission it was issued for', () => {
    const token = encodeCursor(pos, scope);
    expect(decodeCursor(token, { ...scope, submissionId: '01a1fe2a-20c8-72f8-b92b-a3c5fced4945' })).toBeUndefined();
    expect(decodeCursor(token, { ...scope, partnerId: 'p2' })).toBeUndefined();
    expect(decodeCursor(token, { ...scope, tenantId: 't2' })).toBeUndefined();
  });

  it('refuses garbled tokens', () => {
    const token = encodeCursor(pos, scope);
    for (let i = 0; i < token.length; i++) {
      const c = token[i] === 'A' ? 'B' : 'A';
      expect(decodeCursor(token.slice(0, i) + c + token.slice(i + 1), scope), `char ${i}`).toBeUndefined();
    }
    for (const bad of ['', 'abc', token + 'A', token.slice(1), `${token.slice(0, 49)}=`, '!'.repeat(50)]) {
      expect(decodeCursor(bad, scope)).toBeUndefined();
    }
  });
});
