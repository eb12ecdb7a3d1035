import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { Batcher, dbBatcher, rowCausedError } from './batcher.js';
import { sqlStateError } from '../domain/errors.js';

/** A step whose batches finish only when the test says so; records every batch it was given. */
function gatedStep(fail?: (item: number) => unknown) {
  const batches: number[][] = [];
  const gates: Array<() => void> = [];
  const run = async (items: number[]) => {
    batches.push(items);
    await new Promise<void>((resolve) => gates.push(resolve));
    for (const i of items) {
      const err = fail?.(i);
      if (err) throw err;
    }
    return items.map((i) => i * 10);
  };
  /** Lets every batch started so far finish, then waits for the promises the test holds. */
  const release = () => {
    for (const g of gates.splice(0)) g();
  };
  return { run, batches, release };
}

/** Lets the slot a finished batch freed start the next one. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const sqlError = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code });

describe('Batcher', () => {
  it('runs a lone call at once, alone (no waiting for company)', async () => {
    const step = gatedStep();
    const b = new Batcher(step.run, { maxSize: 64, maxInFlight: 2 });
    const out = b.call(1);
    expect(step.batches).toEqual([[1]]);
    step.release();
    expect(await out).toBe(10);
  });

  it('queues calls that find every slot busy and runs them as one batch when a slot frees', async () => {
    const step = gatedStep();
    const sizes: number[] = [];
    const b = new Batcher(step.run, { maxSize: 64, maxInFlight: 2, observe: (n) => sizes.push(n) });
    const outs = [1, 2, 3, 4, 5, 6].map((i) => b.call(i));
    expect(step.batches).toEqual([[1], [2]]);
    expect(b.waiting).toBe(4);
    step.release();
    await Promise.all(outs.slice(0, 2));
    await settle();
    expect(step.batches.slice(2)).toEqual([[3, 4, 5, 6]]);
    step.release();
    expect(await Promise.all(outs)).toEqual([10, 20, 30, 40, 50, 60]);
    expect(sizes).toEqual([1, 1, 4]);
  });

  it('caps a batch at maxSize', async () => {
    const step = gatedStep();
    const b = new Batcher(step.run, { maxSize: 3, maxInFlight: 1 });
    const outs = [1, 2, 3, 4, 5, 6, 7, 8].map((i) => b.call(i));
    step.release();
    await outs[0];
    await settle();
    expect(step.batches[1]).toEqual([2, 3, 4]);
    step.release();
    await outs[3];
    await settle();
    step.release();
    await outs[6];
    await settle();
    step.release();
    await Promise.all(outs);
    expect(step.batches).toEqual([[1], [2, 3, 4], [5, 6, 7], [8]]);
  });

  it('never puts two calls with one key in one batch', async () => {
    const step = gatedStep();
    const b = new Batcher(step.run, { maxSize: 64, maxInFlight: 1, keyOf: (i) => (i % 2 === 0 ? 'even' : undefined) });
    const outs = [1, 2, 3, 4, 5, 6].map((i) => b.call(i));
    step.release();
    await outs[0];
    await settle();
    expect(step.batches[1]).toEqual([2, 3, 5]);
    step.release();
    await outs[1];
    await settle();
    expect(step.batches[2]).toEqual([4]);
    step.release();
    await outs[3];
    await settle();
    step.release();
    expect(await Promise.all(outs)).toEqual([10, 20, 30, 40, 50, 60]);
    expect(step.batches[3]).toEqual([6]);
  });

  it('splits a batch that a row broke, so only the bad call fails', async () => {
    const run = async (items: number[]) => {
      if (items.includes(13)) throw sqlError('23514');
      return items.map((i) => i * 10);
    };
    const step = gatedStep();
    const sizes: number[] = [];
    // The first (gated) call holds the only slot, so the next eight form one batch.
    const b = new Batcher(async (items: number[]) => (items[0] === 0 ? step.run(items) : run(items)), {
      maxSize: 64,
      maxInFlight: 1,
      splittable: rowCausedError,
      observe: (n) => sizes.push(n),
    });
    const first = b.call(0);
    const outs = [10, 11, 12, 13, 14, 15, 16, 17].map((i) => b.call(i).then((v) => v, (e: Error) => e.message));
    step.release();
    await first;
    expect(await Promise.all(outs)).toEqual([100, 110, 120, 'sqlstate 23514', 140, 150, 160, 170]);
    expect(sizes).toEqual([1, 8, 4, 4, 2, 2, 1, 1]);
  });

  it('fails a whole batch at once on an error no row caused (no split storm while the database is down)', async () => {
    let runs = 0;
    const step = gatedStep();
    const b = new Batcher(
      async (items: number[]) => {
        runs++;
        if (items[0] === 0) return step.run(items);
        throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      },
      { maxSize: 64, maxInFlight: 1, splittable: rowCausedError },
    );
    const first = b.call(0);
    const outs = [1, 2, 3, 4].map((i) => b.call(i).then(() => 'ok', (e: Error) => e.message));
    step.release();
    await first;
    expect(await Promise.all(outs)).toEqual(Array(4).fill('connect ECONNREFUSED'));
    expect(runs).toBe(2);
  });

  it('rejects a batch that answers the wrong number of results', async () => {
    const step = gatedStep();
    const b = new Batcher(async (items: number[]) => (items[0] === 0 ? step.run(items) : [1]), { maxSize: 64, maxInFlight: 1 });
    const first = b.call(0);
    const outs = [1, 2].map((i) => b.call(i).then(() => 'ok', (e: Error) => e.message));
    step.release();
    await first;
    expect(await Promise.all(outs)).toEqual(['batch of 2 returned 1 results', 'batch of 2 returned 1 results']);
  });
});

describe('rowCausedError', () => {
  it('splits on data, constraint, deadlock and limit errors only', () => {
    expect(['22007', '23505', '40P01', '40001', '54000'].map((c) => rowCausedError(sqlError(c)))).toEqual([true, true, true, true, true]);
    expect(['08006', '57P01', 'ECONNRESET', '42601'].map((c) => rowCausedError(sqlError(c)))).toEqual([false, false, false, false]);
    expect(rowCausedError(new Error('no code'))).toBe(false);
  });

  it('judges what withTx made of a database error by its cause', () => {
    expect(rowCausedError(sqlStateError(sqlError('22007')))).toBe(true);
    expect(rowCausedError(sqlStateError(sqlError('40P01')))).toBe(true);
    expect(rowCausedError(sqlStateError(sqlError('57P01')))).toBe(false);
  });
});

describe('dbBatcher', () => {
  it('with DB_BATCH_MAX_SIZE=1 runs every call at once, however many are running', async () => {
    let running = 0;
    let most = 0;
    let open: Array<() => void> = [];
    const b = dbBatcher(
      'Test',
      async (items: number[]) => {
        running++;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => open.push(resolve));
        running--;
        return items;
      },
      { config: { batchMaxSize: 1, batchInFlight: 2 }, registry: new Registry() },
    );
    const outs = [1, 2, 3, 4, 5].map((i) => b.call(i));
    expect(most).toBe(5);
    for (const o of open) o();
    open = [];
    expect(await Promise.all(outs)).toEqual([1, 2, 3, 4, 5]);
  });
});
