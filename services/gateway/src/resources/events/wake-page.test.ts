import { describe, expect, it } from 'vitest';
import { FEED_DEFAULT_PAGE_SIZE, type FeedWake } from '@partner/shared/domain/events';
import { pageFromWake } from './wake-page.js';

const event = (seq: number) => ({ id: `evt_${seq}`, type: 'job.succeeded', timestamp: '2026-11-27T08:00:00.123Z', dataJson: `{"n": ${seq}}`, seq: String(seq), cursor: `c${seq}` });
const wake = (from: number, n: number, head = from + n - 1): FeedWake => ({
  tenantId: 't',
  partnerId: 'p',
  seq: String(head),
  after: `c${from - 1}`,
  events: Array.from({ length: n }, (_, i) => event(from + i)),
});
const page = (seqs: number[], next: string) => ({ page: pageOf(seqs, next) });
const pageOf = (seqs: number[], next: string) => ({ events: seqs.map((s) => ({ id: `evt_${s}`, type: 'job.succeeded', timestamp: '2026-11-27T08:00:00.123Z', dataJson: `{"n": ${s}}` })), nextPageToken: next });

describe("a waiting feed reader's page from its wake-up", () => {
  it('is the events after the reader\'s cursor, with the cursor past the last, when they run to the head', () => {
    expect(pageFromWake(wake(4, 3), { pageToken: 'c3' })).toEqual(page([4, 5, 6], 'c6'));
  });

  it('is the first `limit` of them, ending at the last of those (a full page), even when more were stored', () => {
    expect(pageFromWake(wake(4, 3), { pageToken: 'c3', pageSize: 2 })).toEqual(page([4, 5], 'c5'));
    expect(pageFromWake(wake(1, 3, 10), { pageToken: 'c0', pageSize: 3 })).toEqual(page([1, 2, 3], 'c3'));
    const full = pageFromWake(wake(1, FEED_DEFAULT_PAGE_SIZE + 1), { pageToken: 'c0' });
    expect(full && 'page' in full && full.page.events).toHaveLength(FEED_DEFAULT_PAGE_SIZE);
    expect(full && 'page' in full && full.page.nextPageToken).toBe(`c${FEED_DEFAULT_PAGE_SIZE}`);
  });

  it("is the events of the reader's types: a full page ends at its last, a short one at the head", () => {
    const mixed = wake(1, 4);
    mixed.events![0]!.type = 'submission.created';
    mixed.events![2]!.type = 'submission.created';
    expect(pageFromWake(mixed, { pageToken: 'c0', types: ['job.succeeded'] })).toEqual(page([2, 4], 'c4'));
    expect(pageFromWake(mixed, { pageToken: 'c0', types: ['job.succeeded'], pageSize: 1 })).toEqual(page([2], 'c2'));
    const both = pageFromWake(mixed, { pageToken: 'c0', types: ['submission.created', 'job.succeeded'], pageSize: 3 });
    expect(both && 'page' in both && [both.page.events.map((e) => [e.id, e.type]), both.page.nextPageToken]).toEqual([
      [
        ['evt_1', 'submission.created'],
        ['evt_2', 'job.succeeded'],
        ['evt_3', 'submission.created'],
      ],
      'c3',
    ]);
    // Only a prefix carried: enough of the types for a full page, or nothing.
    const prefix = { ...mixed, seq: '9' };
    expect(pageFromWake(prefix, { pageToken: 'c0', types: ['job.succeeded'], pageSize: 2 })).toEqual(page([2, 4], 'c4'));
    expect(pageFromWake(prefix, { pageToken: 'c0', types: ['job.succeeded'], pageSize: 3 })).toBeUndefined();
  });

  it('is passed (the reader keeps waiting, from the head) when all the events are carried and none is of its types; read again when only a prefix is', () => {
    expect(pageFromWake(wake(4, 3), { pageToken: 'c3', types: ['submission.created'] })).toEqual({ passed: 'c6' });
    expect(pageFromWake(wake(4, 3, 9), { pageToken: 'c3', types: ['submission.created'] })).toBeUndefined();
  });

  it('is none (read again) for a reader at another cursor, or an old wake-up without events', () => {
    expect(pageFromWake(wake(4, 3), { pageToken: 'c2' })).toBeUndefined();
    expect(pageFromWake(wake(4, 3), { pageToken: 'c4', types: ['job.succeeded'] })).toBeUndefined();
    expect(pageFromWake({ tenantId: 't', partnerId: 'p', seq: '6' }, { pageToken: 'c3' })).toBeUndefined();
    expect(pageFromWake(undefined, { pageToken: 'c3' })).toBeUndefined();
  });

  it('is none when the wake-up carries only a prefix shorter than the page, or events that are not contiguous', () => {
    expect(pageFromWake(wake(1, 3, 10), { pageToken: 'c0', pageSize: 4 })).toBeUndefined();
    const gap = wake(1, 3);
    gap.events![1] = event(5);
    expect(pageFromWake(gap, { pageToken: 'c0' })).toBeUndefined();
    expect(pageFromWake({ ...wake(1, 3), seq: '2' }, { pageToken: 'c0' })).toBeUndefined();
  });
});
