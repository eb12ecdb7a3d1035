import { describe, expect, it } from 'vitest';
import { isEventId, newEventId } from '@partner/shared/domain/events';
import { copiesForEveryPartner } from './writer.js';

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
