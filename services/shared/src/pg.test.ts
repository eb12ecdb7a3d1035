import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { prepared, registerPoolMetrics, type Pool } from './pg.js';

describe('registerPoolMetrics', () => {
  it('reads connections in use and idle, waiting checkouts and the ceiling at scrape time', async () => {
    const pool = { totalCount: 7, idleCount: 3, waitingCount: 2 };
    const registry = new Registry();
    registerPoolMetrics(pool as unknown as Pool, registry, 10);
    const text = async () => registry.metrics();
    expect(await text()).toContain('partner_db_pool_connections{state="in_use"} 4');
    expect(await text()).toContain('partner_db_pool_connections{state="idle"} 3');
    expect(await text()).toContain('partner_db_pool_waiting_requests 2');
    expect(await text()).toContain('partner_db_pool_max_connections 10');
    pool.idleCount = 7;
    pool.waitingCount = 0;
    expect(await text()).toContain('partner_db_pool_connections{state="in_use"} 0');
    expect(await text()).toContain('partner_db_pool_waiting_requests 0');
  });
});

describe('prepared', () => {
  it('names a statement by its text: one text, one name, on every call', () => {
    const a = prepared('SELECT 1 WHERE $1::int = 1', [1]);
    expect(a).toEqual({ name: expect.stringMatching(/^p_[0-9a-f]{24}$/), text: 'SELECT 1 WHERE $1::int = 1', values: [1] });
    expect(prepared('SELECT 1 WHERE $1::int = 1', [2]).name).toBe(a.name);
    expect(prepared('SELECT 2 WHERE $1::int = 1', [1]).name).not.toBe(a.name);
  });
});
