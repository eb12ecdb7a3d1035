// One pass over the text of a JSON request body, before it is parsed (http/body.ts): the grammar of
// RFC 8259 as JSON.parse reads it, the nesting depth and the number of values, every object's keys
// (a repeated one is refused: parsers disagree about which of two copies counts), and the text rule
// of http/text.ts for every string, values and member names. Iterative and linear in the length of
// the text: a path to a field is built only for a problem it reports.
//
// Structure problems (not JSON, too deep, too many values, a repeated key) throw 400 invalid_json at
// once. Text problems are collected (at most MAX_TEXT_DETAILS) and returned: the caller answers them
// with 400 validation_error naming each field, as it did when the check walked the parsed value.
import { DomainError, type ErrorDetail } from '@partner/shared/domain/errors';
import { CONTROL_ISSUE, MAX_TEXT_DETAILS, SURROGATE_ISSUE } from './text.js';

/** Levels of arrays and objects a body may nest (docs/api.md "Requests"). */
export const MAX_JSON_DEPTH = 32;
/** Values (numbers, strings, true/false/null, arrays, objects, the body itself) a body may hold by default (JSON_MAX_VALUES). */
export const DEFAULT_MAX_JSON_VALUES = 10_000;

export interface JsonScanLimits {
  maxDepth: number;
  maxValues: number;
}

/** An open array or object: where the scan is inside it. */
interface Frame {
  array: boolean;
  /** Arrays: the index of the current element. */
  index: number;
  /** Objects: the current member's name (decoded), and every name seen so far. */
  key: string;
  keys: Set<string> | undefined;
}

// Characters of a string that need no second look: not a quote, backslash, control character or surrogate.
// eslint-disable-next-line no-control-regex
const PLAIN = /[^"\\\u0000-\u001f\u007f\ud800-\udfff]*/y;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const isWhite = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const hexValue = (c: number): number =>
  c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
const ESCAPES: Record<number, number> = { 0x22: 0x22, 0x5c: 0x5c, 0x2f: 0x2f, 0x62: 0x08, 0x66: 0x0c, 0x6e: 0x0a, 0x72: 0x0d, 0x74: 0x09 };

/**
 * Scans `text` as a JSON body: throws invalid_json (not JSON, deeper than maxDepth, more than
 * maxValues values, a key repeated in an object); otherwise returns the text problems of its
 * strings (empty when every string is usable).
 */
export function scanJson(text: string, limits: JsonScanLimits): ErrorDetail[] {
  const n = text.length;
  const stack: Frame[] = [];
  const details: ErrorDetail[] = [];
  let i = 0;
  let values = 0;
  // Text checks are off below a member whose name is itself unusable (its value is not reported),
  // from the depth of that member's object until the object moves on.
  let muted = -1;

  /** The dotted path of the current position ('' at the top; an empty name adds no dot). */
  const pathHere = (): string => {
    let path = '';
    for (const f of stack) {
      const part = f.array ? String(f.index) : f.key;
      path = path ? `${path}.${part}` : part;
    }
    return path;
  };
  const notJson = (why: string): DomainError =>
    new DomainError('invalid_json', `the request body is not valid JSON: ${why} at character ${Math.min(i, n)}`);
  const skipWhite = (): void => {
    while (i < n && isWhite(text.charCodeAt(i))) i++;
  };

  /**
   * Reads the string starting at text[i] (a quote) and leaves i after its closing quote. Returns its
   * text problem, if any; `decode` also leaves its value in `decoded` (for member names).
   */
  let decoded = '';
  const readString = (decode: boolean): string | undefined => {
    const start = ++i;
    let escaped = false;
    let control = false;
    let lone = false;
    let high = false; // the previous code unit was a high surrogate awaiting its low half
    for (;;) {
      if (!high) {
        // The common case: a run of plain characters, none of which needs a second look.
        PLAIN.lastIndex = i;
        PLAIN.test(text);
        i = PLAIN.lastIndex;
      }
      if (i >= n) throw notJson('unterminated string');
      let unit = text.charCodeAt(i);
      if (unit === QUOTE) break;
      if (unit === BACKSLASH) {
        escaped = true;
        const e = text.charCodeAt(i + 1);
        if (e === 0x75) {
          unit = 0;
          for (let k = 2; k < 6; k++) {
            const h = hexValue(text.charCodeAt(i + k));
            if (h < 0) throw notJson('bad \\u escape');
            unit = unit * 16 + h;
          }
          i += 6;
        } else {
          const u = ESCAPES[e];
          if (u === undefined) throw notJson('bad escape');
          unit = u;
          i += 2;
        }
      } else if (unit < 0x20) {
        throw notJson('control character in a string');
      } else {
        i++;
      }
      if (high) {
        high = false;
        if (unit >= 0xdc00 && unit <= 0xdfff) continue;
        lone = true;
      }
      if (unit >= 0xd800 && unit <= 0xdbff) high = true;
      else if (unit >= 0xdc00 && unit <= 0xdfff) lone = true;
      else if (unit < 0x20 || unit === 0x7f) control = true;
    }
    if (high) lone = true;
    const end = i++;
    if (decode) decoded = escaped ? (JSON.parse(text.slice(start - 1, end + 1)) as string) : text.slice(start, end);
    return control ? CONTROL_ISSUE : lone ? SURROGATE_ISSUE : undefined;
  };

  /** Reads `"name":` of the top object's next member (i at its quote). */
  const readMember = (frame: Frame): void => {
    if (text.charCodeAt(i) !== QUOTE) throw notJson('expected a member name');
    if (muted === stack.length) muted = -1;
    const issue = readString(true);
    const value = decoded;
    frame.key = value;
    if (frame.keys!.has(value)) {
      throw new DomainError('invalid_json', 'the request body repeats a key in an object; see details', {
        details: [{ field: pathHere(), issue: 'repeats a key of its object (each key may appear once)' }],
      });
    }
    frame.keys!.add(value);
    if (issue && muted < 0 && details.length < MAX_TEXT_DETAILS) {
      details.push({ field: JSON.stringify(pathHere()), issue: `(a member name) ${issue}` });
      muted = stack.length;
    }
    skipWhite();
    if (text.charCodeAt(i) !== 0x3a) throw notJson("expected ':'");
    i++;
  };

  const open = (array: boolean): void => {
    if (stack.length >= limits.maxDepth) {
      throw new DomainError('invalid_json', `the request body nests deeper than ${limits.maxDepth} levels (the limit)`, {
        details: [{ field: pathHere() || '(body)', issue: `nests deeper than ${limits.maxDepth} levels` }],
      });
    }
    stack.push({ array, index: 0, key: '', keys: array ? undefined : new Set() });
    i++;
  };

  for (;;) {
    // A value starts here.
    skipWhite();
    if (++values > limits.maxValues) {
      throw new DomainError('invalid_json', `the request body holds more than ${limits.maxValues} values (the limit)`);
    }
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      const array = c === 0x5b;
      open(array);
      skipWhite();
      if (text.charCodeAt(i) === (array ? 0x5d : 0x7d)) {
        i++;
        stack.pop();
      } else {
        // Its first element, or its first member's name and then its value.
        if (!array) readMember(stack[stack.length - 1]!);
        continue;
      }
    } else if (c === QUOTE) {
      const issue = readString(false);
      if (issue && muted < 0 && details.length < MAX_TEXT_DETAILS) details.push({ field: pathHere() || '(body)', issue });
    } else if (c === 0x74 && text.startsWith('true', i)) i += 4;
    else if (c === 0x66 && text.startsWith('false', i)) i += 5;
    else if (c === 0x6e && text.startsWith('null', i)) i += 4;
    else if (c === 0x2d || isDigit(c)) {
      if (c === 0x2d) i++;
      if (text.charCodeAt(i) === 0x30) i++;
      else if (isDigit(text.charCodeAt(i))) while (isDigit(text.charCodeAt(i))) i++;
      else throw notJson('bad number');
      if (text.charCodeAt(i) === 0x2e) {
        i++;
        if (!isDigit(text.charCodeAt(i))) throw notJson('bad number');
        while (isDigit(text.charCodeAt(i))) i++;
      }
      if ((text.charCodeAt(i) | 0x20) === 0x65) {
        i++;
        const sign = text.charCodeAt(i);
        if (sign === 0x2b || sign === 0x2d) i++;
        if (!isDigit(text.charCodeAt(i))) throw notJson('bad number');
        while (isDigit(text.charCodeAt(i))) i++;
      }
    } else {
      throw notJson(i >= n ? 'unexpected end' : 'unexpected character');
    }

    // After a value: a comma and the next one, or the end of its array or object (perhaps several).
    for (;;) {
      skipWhite();
      const frame = stack[stack.length - 1];
      if (!frame) {
        if (i < n) throw notJson('unexpected text after the body');
        return details;
      }
      const d = text.charCodeAt(i);
      if (d === 0x2c) {
        i++;
        skipWhite();
        if (frame.array) frame.index++;
        else readMember(frame);
        break;
      }
      if (d === (frame.array ? 0x5d : 0x7d)) {
        i++;
        if (muted === stack.length) muted = -1;
        stack.pop();
        continue;
      }
      throw notJson(frame.array ? "expected ',' or ']'" : "expected ',' or '}'");
    }
  }
}
