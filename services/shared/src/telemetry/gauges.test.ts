import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { scrapedGauge, scrapedGauges, scrapeSource } from './gauges.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('scrape-time gauges', () => {
  it('share one read per scrape, and read NaN with the failure counted when the source fails', async () => {
    const registry = new Registry();
    let reads = 0;
    let fail = false;
    const source = scrapeSource(registry, 'partner_test_backlog', async () => {
      reads++;
      if (fail) throw new Error('down');
      return { n: 3, age: 7 };
    });
    scrapedGauge(registry, source, { name: 'partner_test_backlog', help: 'h', value: (r) => r.n });
    scrapedGauge(registry, source, { name: 'partner_test_age', help: 'h', value: (r) => r.age });
    const text = await registry.metrics();
    expect(text).toContain('partner_test_backlog 3');
    expect(text).toContain('partner_test_age 7');
    expect(reads).toBe(1);
    await sleep(150);
    fail = true;
    const down = await registry.metrics();
    expect(down).toMatch(/^partner_test_backlog Nan$/m);
    // The counter is rendered before the gauges that count into it: the next scrape shows the failure.
    expect(await registry.metrics()).toMatch(/^partner_metric_source_failures_total\{metric="partner_test_backlog"\} [1-9]/m);
  });

  it('scrapedGauges: several gauges on one read, failures counted under the first', async () => {
    const registry = new Registry();
    let reads = 0;
    scrapedGauges(registry, async () => {
      reads++;
      if (reads > 1) throw new Error('down');
      return { n: 3, age: 7 };
    }, [
      { name: 'partner_test_backlog', help: 'h', value: (r) => r.n },
      { name: 'partner_test_age', help: 'h', value: (r) => r.age },
    ]);
    const text = await registry.metrics();
    expect(text).toContain('partner_test_backlog 3');
    expect(text).toContain('partner_test_age 7');
    expect(reads).toBe(1);
    await sleep(150);
    await registry.metrics();
    expect(await registry.metrics()).toMatch(/^partner_metric_source_failures_total\{metric="partner_test_backlog"\} [1-9]/m);
  });
});
