import { describe, expect, it } from 'vitest';
import { parseDeprecations } from './deprecation.js';

describe('DEPRECATIONS configuration', () => {
  it('reads a list of operations', () => {
    const raw = JSON.stringify([{ operation: 'GET /v1/jobs/:id', deprecation: '2026-01-01', sunset: '2027-01-01', link: 'https://docs.example.com/x' }]);
    expect(parseDeprecations(raw)).toEqual({ rules: JSON.parse(raw), problems: [] });
    expect(parseDeprecations('')).toEqual({ rules: [], problems: [] });
  });

  it.each([
    ['{', 'must be a JSON array'],
    ['{}', 'must be a JSON array'],
    [JSON.stringify([{ operation: 'GET /policies', deprecation: '2026-01-01', link: 'https://x' }]), 'entry 0: operation'],
    [JSON.stringify([{ operation: 'GET /v1/policies', deprecation: 'soon', link: 'https://x' }]), 'entry 0: deprecation'],
    [JSON.stringify([{ operation: 'GET /v1/policies', deprecation: '2026-01-01', sunset: 'later', link: 'https://x' }]), 'entry 0: sunset'],
    [JSON.stringify([{ operation: 'GET /v1/policies', deprecation: '2026-01-01', link: 'docs' }]), 'entry 0: link'],
  ])('refuses %s', (raw, problem) => {
    const r = parseDeprecations(raw);
    expect(r.rules).toEqual([]);
    expect(r.problems.join('\n')).toContain(problem);
  });
});
