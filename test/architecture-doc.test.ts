// docs/architecture.md walks a mutation through the code with `file:line` `symbol` stops: each must
// still point at a line of that file that names the symbol, so the tour cannot drift from the code.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './support/stack.js';

const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
const stops = [...doc.matchAll(/`((?:services|sdk|scripts|test)\/[\w./-]+\.ts):(\d+)`\s+`([\w.]+)`/g)].map((m) => ({ file: m[1]!, line: Number(m[2]), symbol: m[3]! }));

describe('docs/architecture.md', () => {
  it('has its stops', () => {
    expect(stops.length).toBeGreaterThanOrEqual(15);
  });

  it.each(stops.map((s) => [`${s.file}:${s.line} ${s.symbol}`, s] as const))('%s is where it says', (_name, stop) => {
    const path = join(ROOT, stop.file);
    expect(existsSync(path), stop.file).toBe(true);
    const line = readFileSync(path, 'utf8').split('\n')[stop.line - 1] ?? '';
    expect(line, `${stop.file}:${stop.line}`).toContain(stop.symbol);
  });
});
