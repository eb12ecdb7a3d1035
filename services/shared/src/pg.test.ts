import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { registerPoolMetrics, type Pool } from './pg.js';

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
