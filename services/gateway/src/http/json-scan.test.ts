import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ErrorDetail } from '@partner/shared/domain/errors';
import { DEFAULT_MAX_JSON_VALUES, MAX_JSON_DEPTH, scanJson, type JsonScanLimits } from './json-scan.js';
import { textIssue } from './text.js';

const LIMITS: JsonScanLimits = { maxDepth: MAX_JSON_DEPTH, maxValues: DEFAULT_MAX_JSON_VALUES };
const UNLIMITED: JsonScanLimits = { maxDepth: Infinity, maxValues: Infinity };
const scan = (text: string, limits = LIMITS) => scanJson(text, limits);

/** The error scanJson throws for text, or undefined when it returns. */
function refusal(text: string, limits = LIMITS): { code: string; message: string; details?: ErrorDetail[] } | undefined {
  try {
    scanJson(text, limits);
    return undefined;
  } catch (err) {
    return err as { code: string; message: string; details?: ErrorDetail[] };
  }
}

/**
 * The text check as it was before the scan (a recursive walk of the parsed value): the reference the
 * scan's text problems must agree with.
 */
function referenceTextDetails(value: unknown, details: ErrorDetail[] = [], path = ''): ErrorDetail[] {
  if (typeof value === 'string') {
    const issue = textIssue(value);
    if (issue) details.push({ field: path || '(body)', issue });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => referenceTextDetails(v, details, path ? `${path}.${i}` : String(i)));
  } else if (value !== null && typeof value === 'object') {
    for (const [name, member] of Object.entries(value)) {
      const field = path ? `${path}.${name}` : name;
      const issue = textIssue(name);
      if (issue) details.push({ field: JSON.stringify(field), issue: `(a member name) ${issue}` });
      else referenceTextDetails(member, details, field);
    }
  }
  return details;
}

const sorted = (d: ErrorDetail[]) => d.map((x) => JSON.stringify(x)).sort();

/**
 * JSON text for a value, each string character escaped as \uXXXX or written as it is, and white
 * space between tokens, as `choices` say (cycled): the many texts of one value.
 */
function serialize(value: unknown, choices: boolean[]): string {
  let k = 0;
  const pick = () => choices.length > 0 && choices[k++ % choices.length]!;
  const ws = () => (pick() ? ' \n\t\r'[k % 4]! : '');
  const str = (s: string) => {
    let out = '"';
    for (const ch of s.split('')) {
      const code = ch.charCodeAt(0);
      const mustEscape = ch === '"' || ch === '\\' || code < 0x20;
      if (mustEscape || pick()) out += pick() && ch === '"' ? '\\"' : `\\u${code.toString(16).padStart(4, '0')}`;
      else out += ch;
    }
    return `${out}"`;
  };
  const walk = (v: unknown): string => {
    if (typeof v === 'string') return str(v);
    if (Array.isArray(v)) return `[${ws()}${v.map((x) => `${walk(x)}${ws()}`).join(`,${ws()}`)}]`;
    if (v !== null && typeof v === 'object') {
      return `{${ws()}${Object.entries(v).map(([name, x]) => `${str(name)}${ws()}:${ws()}${walk(x)}${ws()}`).join(`,${ws()}`)}}`;
    }
    return JSON.stringify(v);
  };
  return `${ws()}${walk(value)}${ws()}`;
}

// Characters of strings: ordinary ones, and those the text rule refuses or that need escaping.
const unit = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  fc.constantFrom('\u0000', '\u0008', '\t', '\n', '\u001f', '\u007f', '\ud800', '\udbff', '\udc00', '\udfff', '"', '\\', '/', 'é', '東', '🏢', '\u200b'),
);
const jsonValue = fc.jsonValue({ maxDepth: 4, stringUnit: unit });

describe('scanJson agrees with JSON.parse', () => {
  it('accepts every JSON text of a value within the limits, whatever its escapes and white space, and reports the same text problems as the walk of the parsed value', () => {
    fc.assert(
      fc.property(jsonValue, fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }), (value, choices) => {
        const text = serialize(value, choices);
        const parsed = JSON.parse(text) as unknown;
        const expected = referenceTextDetails(parsed);
        const details = scan(text, UNLIMITED);
        if (expected.length < 20) expect(sorted(details)).toEqual(sorted(expected));
        else expect(details).toHaveLength(20);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses, as invalid_json, exactly the texts JSON.parse refuses (random and mutated texts)', () => {
    const token = fc.constantFrom('{', '}', '[', ']', ',', ':', '"', '\\', '\\u00', 'u', '0', '1', '-', '.', 'e', 'E', '+', 'true', 'fals', 'null', 'a', ' ', '\n', '\u0001', '\u007f', '\ufeff', '\ud800');
    const random = fc.array(token, { maxLength: 24 }).map((t) => t.join(''));
    const mutated = fc
      .tuple(jsonValue.map((v) => JSON.stringify(v)), fc.nat(), fc.oneof(fc.constant(''), token))
      .map(([text, at, insert]) => {
        const p = at % (text.length + 1);
        return text.slice(0, p) + insert + text.slice(p + (insert ? 0 : 1));
      });
    fc.assert(
      fc.property(fc.oneof(random, mutated), (text) => {
        let parses = true;
        try {
          JSON.parse(text);
        } catch {
          parses = false;
        }
        const r = refusal(text, UNLIMITED);
        if (!parses) expect(r?.code, text).toBe('invalid_json');
        // What parses is accepted, unless it repeats a key (which JSON.parse hides by keeping the last).
        else if (r) expect(r.message, text).toMatch(/repeats a key/);
      }),
      { numRuns: 5000 },
    );
  });

  it.each(['', ' ', '\ufeff{}', '{}x', '[1,]', '{"a":1,}', '01', '1.', '.5', '-', '1e', '+1', 'tru', 'nul', "'a'", '"\\x"', '"\\u12g4"', '"a\nb"', '{"a" 1}', '{a:1}', '[1 2]', 'NaN', 'Infinity', '"abc'])(
    'refuses %j as invalid_json, as JSON.parse does',
    (text) => {
      expect(() => JSON.parse(text)).toThrow();
      expect(refusal(text)).toMatchObject({ code: 'invalid_json', message: expect.stringMatching(/not valid JSON/) });
    },
  );

  it.each(['0', '-0.5e+10', '1E-2', '"x"', 'null', ' true ', '[]', '{}', '[[],{}]', '{"":""}', '"\\ud83d\\ude00"', '"\\/\\b\\f\\n\\r\\t"', '1e999', '{"__proto__":1}'])(
    'accepts %j',
    (text) => {
      expect(() => scan(text)).not.toThrow();
    },
  );
});

describe('limits', () => {
  const nest = (depth: number, open = '[', close = ']', inner = '1') => open.repeat(depth) + inner + close.repeat(depth);

  it(`allows ${MAX_JSON_DEPTH} levels of arrays and objects, and refuses ${MAX_JSON_DEPTH + 1} naming the limit`, () => {
    expect(scan(nest(32))).toEqual([]);
    expect(scan(nest(32, '{"a":', '}'))).toEqual([]);
    for (const text of [nest(33), nest(33, '{"a":', '}'), `{"a":[${nest(31, '{"b":', '}')}]}`]) {
      expect(refusal(text)).toMatchObject({ code: 'invalid_json', message: expect.stringContaining('deeper than 32 levels') });
    }
    expect(refusal(nest(33, '{"a":', '}'))?.details).toEqual([{ field: Array(32).fill('a').join('.'), issue: 'nests deeper than 32 levels' }]);
  });

  it('refuses {"a": x 8,000 (48 KB) as invalid_json without overflowing the stack', () => {
    const text = nest(8000, '{"a":', '}');
    expect(text.length).toBe(48_001);
    expect(refusal(text)).toMatchObject({ code: 'invalid_json', message: expect.stringContaining('32 levels') });
    // Unterminated, as the attack sent it, too.
    expect(refusal('{"a":'.repeat(8000))).toMatchObject({ code: 'invalid_json' });
  });

  it('is iterative: a million levels scan without a stack overflow when no depth limit applies', () => {
    expect(scan(nest(1_000_000), UNLIMITED)).toEqual([]);
    expect(scan(nest(200_000, '{"a":', '}', '"\\u0000"'), UNLIMITED)).toHaveLength(1);
  });

  it(`allows ${DEFAULT_MAX_JSON_VALUES} values and refuses one more, naming the limit (a 200,000-element array)`, () => {
    const array = (n: number) => `[${new Array(n).fill('0').join(',')}]`;
    // The array itself is a value.
    expect(scan(array(DEFAULT_MAX_JSON_VALUES - 1))).toEqual([]);
    expect(refusal(array(DEFAULT_MAX_JSON_VALUES))).toMatchObject({ code: 'invalid_json', message: expect.stringContaining(`more than ${DEFAULT_MAX_JSON_VALUES} values`) });
    expect(refusal(array(200_000))).toMatchObject({ code: 'invalid_json', message: expect.stringContaining('(the limit)') });
    expect(refusal('{"a":[1,2,{"b":3}]}', { maxDepth: 32, maxValues: 5 })).toMatchObject({ message: expect.stringContaining('more than 5 values') });
    expect(scan('{"a":[1,2,{"b":3}]}', { maxDepth: 32, maxValues: 6 })).toEqual([]);
  });

  it('takes time linear in the length of the text', () => {
    const body = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ [`k${i}`]: `v\u0000${i}`, n: [i, true, null], ['\u0075rl']: 'x' })));
    const time = (text: string) => {
      let best = Infinity;
      for (let r = 0; r < 5; r++) {
        const t = process.hrtime.bigint();
        scan(text, UNLIMITED);
        best = Math.min(best, Number(process.hrtime.bigint() - t));
      }
      return best;
    };
    const small = body(5_000);
    const large = body(40_000);
    // Eight times the text; a quadratic scan would take about 64 times as long.
    expect(time(large) / time(small)).toBeLessThan(24);
  });
});

describe('repeated keys', () => {
  it.each([
    ['{"url":"a","url":"b"}', 'url'],
    ['{"url":"a","\\u0075rl":"b"}', 'url'],
    ['{"\\u0075\\u0072\\u006c":1,"url":2}', 'url'],
    ['{"a":1,"b":2,"a":3}', 'a'],
    ['{"applicant":{"legalName":"A","legalName":"B"}}', 'applicant.legalName'],
    ['{"list":[{"x":1},{"x":1,"x":2}]}', 'list.1.x'],
    ['{"":1,"":2}', ''],
    ['{"__proto__":1,"__proto__":2}', '__proto__'],
    ['{"\\ud800":1,"\\ud800":2}', '\ud800'],
  ])('refuses %s as invalid_json naming %j', (text, field) => {
    expect(refusal(text)).toMatchObject({ code: 'invalid_json', message: expect.stringContaining('repeats a key'), details: [{ field, issue: expect.stringMatching(/repeats a key/) }] });
  });

  it('allows the same key in different objects, and keys that differ only in case or escapes of other characters', () => {
    expect(scan('[{"x":1},{"x":2}]')).toEqual([]);
    expect(scan('{"a":{"b":1},"b":{"a":2}}')).toEqual([]);
    expect(scan('{"url":1,"URL":2,"ur\\u006c2":3}')).toEqual([]);
  });
});

describe('text of strings', () => {
  it('names every bad string of a body at any depth, member names included, and not the values under a bad name', () => {
    const body = JSON.stringify({ externalRef: 'a\u0000b', applicant: { legalName: 'Acme \ud800' }, list: ['ok', '\u0001'], ['k\u0000']: { inner: '\u0000' }, n: 5, del: 'x\u007f' });
    expect(scan(body).map((d) => d.field)).toEqual(['externalRef', 'applicant.legalName', 'list.1', '"k\\u0000"', 'del']);
    expect(scan('"\\u0000"')).toEqual([{ field: '(body)', issue: expect.stringMatching(/control/) }]);
    expect(scan('"\\udc00x"')).toEqual([{ field: '(body)', issue: expect.stringMatching(/surrogate/) }]);
    // Control characters win over surrogates, as textIssue says.
    expect(scan('["\\ud800\\u0001"]')).toEqual([{ field: '0', issue: expect.stringMatching(/control/) }]);
  });

  it('accepts surrogate pairs, raw or escaped, and reports at most 20 fields', () => {
    expect(scan('["🏢", "\\ud83c\\udfe2", "\\ud83c\udfe2"]')).toEqual([]);
    expect(scan('["\\ud83c🏢"]')).toEqual([{ field: '0', issue: expect.stringMatching(/surrogate/) }]);
    expect(scan(JSON.stringify(Array(50).fill('\u0000')))).toHaveLength(20);
  });

  it('checks the structure after a text problem: a bad string in invalid JSON is invalid_json', () => {
    expect(refusal('["\\u0000",]')).toMatchObject({ code: 'invalid_json' });
  });
});
