import { describe, expect, it } from 'vitest';
import { isEventId, newEventId } from '@partner/shared/domain/events';
import { copiesForEveryPartner, feedWake, WAKE_BYTES_MAX, WAKE_EVENTS_MAX } from './writer.js';
import { FeedCursors } from './cursor.js';

describe('an event for every partner', () => {
  const event = { id: newEventId(), type: 'product.requirements_changed' as const, timestamp: '2026-11-26T10:00:00.000Z', data: { productId: 'p' } };
  const original = { position: 42n, msg: { tenantId: '*', partnerId: '*', event } };
  const partners = [
    { tenantId: 't1', partnerId: 'a' },
    { tenantId: 't1', partnerId: 'b' },
    { tenantId: 't2', partnerId: 'a' },
  ];

  it('becomes one event per partner at the same position, each with its own valid id', () => {
    const copies = copiesForEveryPartner(original, partners);
    expect(copies.map((c) => [c.msg.tenantId, c.msg.partnerId])).toEqual(partners.map((p) => [p.tenantId, p.partnerId]));
    expect(copies.every((c) => c.position === 42n && isEventId(c.msg.event.id) && c.msg.event.type === event.type)).toBe(true);
    expect(new Set(copies.map((c) => c.msg.event.id)).size).toBe(3);
    expect(copies.map((c) => c.msg.event.id)).not.toContain(event.id);
    expect(copies[0]!.msg.event.data).toEqual(event.data);
  });

  it('gets the same ids when the stream is read again (so nothing is stored twice)', () => {
    expect(copiesForEveryPartner(original, partners).map((c) => c.msg.event.id)).toEqual(copiesForEveryPartner(original, partners).map((c) => c.msg.event.id));
  });
});

describe('a feed wake-up', () => {
  const owner = { tenantId: 't1', partnerId: 'a' };
  const cursors = new FeedCursors(['secret']);
  const rows = (from: number, n: number, data = '{"a": 1}') =>
    Array.from({ length: n }, (_, i) => ({ partner_seq: String(from + i), event_id: `evt_${from + i}`, type: 'job.succeeded', timestamp: new Date('2026-11-27T08:00:00.123Z'), data_json: data }));

  it('names the head, and carries the events as ListEvents returns them, each with its seq and the cursor past it', () => {
    const w = feedWake(owner, rows(5, 3), cursors);
    expect(w).toMatchObject({ tenantId: 't1', partnerId: 'a', seq: '7', after: cursors.encode(4n, owner) });
    expect(w.events).toEqual([5, 6, 7].map((s) => ({ id: `evt_${s}`, type: 'job.succeeded', timestamp: '2026-11-27T08:00:00.123Z', dataJson: '{"a": 1}', seq: String(s), cursor: cursors.encode(BigInt(s), owner) })));
  });

  it('is the plain wake-up of before without the cursors', () => {
    expect(feedWake(owner, rows(1, 2))).toEqual({ tenantId: 't1', partnerId: 'a', seq: '2' });
  });

  it(`carries at most ${WAKE_EVENTS_MAX} events and ${WAKE_BYTES_MAX} bytes of them: a prefix, or none`, () => {
    const many = feedWake(owner, rows(1, WAKE_EVENTS_MAX + 5), cursors);
    expect(many.seq).toBe(String(WAKE_EVENTS_MAX + 5));
    expect(many.events!.map((e) => e.seq)).toEqual(Array.from({ length: WAKE_EVENTS_MAX }, (_, i) => String(i + 1)));
    const big = JSON.stringify({ s: 'x'.repeat(WAKE_BYTES_MAX / 3) });
    const prefix = feedWake(owner, rows(1, 4, big), cursors);
    expect(prefix.events!.length).toBe(2);
    expect(Buffer.byteLength(JSON.stringify(prefix))).toBeLessThan(WAKE_BYTES_MAX + 1024);
    const tooBig = feedWake(owner, rows(1, 2, JSON.stringify({ s: 'x'.repeat(WAKE_BYTES_MAX) })), cursors);
    expect(tooBig).toEqual({ tenantId: 't1', partnerId: 'a', seq: '2' });
  });
});
