import { describe, expect, it } from 'vitest';
import { Semaphore } from './semaphore.js';

describe('Semaphore', () => {
  it('lets `slots` holders in at once and hands each released slot to the longest waiter', async () => {
    const s = new Semaphore(2);
    await s.acquire();
    await s.acquire();
    const order: number[] = [];
    const third = s.acquire().then(() => order.push(3));
    const fourth = s.acquire().then(() => order.push(4));
    await Promise.resolve();
    expect(order).toEqual([]);
    s.release();
    await third;
    expect(order).toEqual([3]);
    s.release();
    await fourth;
    expect(order).toEqual([3, 4]);
    // Released with nobody waiting: a free slot again.
    s.release();
    await s.acquire();
  });
});
