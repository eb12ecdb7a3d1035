// The request log's redaction as a table: each row a body or headers as the partner sent (or we
// answered) them, and exactly what the log keeps.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { REQUEST_LOG_BODY_LIMIT_BYTES } from '@partner/shared/domain/request-log';
import { allowedHeaders, boundedRedactedJsonText, logBody, maskTaxId, redactedJsonText, redactJson, truncateUtf8, unchangingBody, type CapturedBody } from './redact.js';

describe('request log redaction: headers', () => {
  const rows: [string, Record<string, string | string[] | undefined>, Record<string, string>][] = [
    ['Authorization dropped', { authorization: 'Bearer eyJhbGciOi.x.y', 'content-type': 'application/json' }, { 'content-type': 'application/json' }],
    ['cookies dropped', { cookie: 'session=abc', 'set-cookie': ['a=b'], 'user-agent': 'acme/1.0' }, { 'user-agent': 'acme/1.0' }],
    [
      'every allow-listed header kept, lower-cased',
      {
        'Content-Type': 'application/json',
        Prefer: 'wait=10',
        'Idempotency-Key': 'k-1',
        'X-Principal-Id': 'broker-7',
        'User-Agent': 'acme/1.0',
        'X-Request-Id': 'r-1',
      },
      { 'content-type': 'application/json', prefer: 'wait=10', 'idempotency-key': 'k-1', 'x-principal-id': 'broker-7', 'user-agent': 'acme/1.0', 'x-request-id': 'r-1' },
    ],
    ['anything else dropped', { 'x-api-key': 'k', 'proxy-authorization': 'Basic x', 'x-forwarded-for': '10.0.0.1', host: 'api', traceparent: '00-…' }, {}],
    ['a repeated header joined', { prefer: ['wait=5', 'return=minimal'] }, { prefer: 'wait=5, return=minimal' }],
  ];
  it.each(rows)('%s', (_name, given, kept) => {
    expect(allowedHeaders(given)).toEqual(kept);
  });
});

describe('request log redaction: JSON bodies', () => {
  const rows: [string, unknown, unknown][] = [
    ['a top-level secret removed', { url: 'https://x.test/h', secret: 'whsec_abc' }, { url: 'https://x.test/h' }],
    ['a nested secret removed', { endpoint: { id: 'we_1', config: { secret: 'whsec_abc', keep: 1 } } }, { endpoint: { id: 'we_1', config: { keep: 1 } } }],
    ['secrets in arrays removed', { items: [{ secret: 's', a: 1 }, { b: [{ secret: 't' }] }] }, { items: [{ a: 1 }, { b: [{}] }] }],
    ['other spellings of secret removed', { clientSecret: 'sk_1', webhook_secret: 'w', Secret: 'x', SECRET: 'y', kept: 'z' }, { kept: 'z' }],
    ['a secret holding an object removed whole', { secret: { value: 'x' }, n: 1 }, { n: 1 }],
    ['names only containing "secret" kept', { previousSecretExpiresAt: '2026-01-01T00:00:00.000Z', secretive: 1 }, { previousSecretExpiresAt: '2026-01-01T00:00:00.000Z', secretive: 1 }],
    ['applicant.taxId masked (digits)', { applicant: { name: 'Acme', taxId: '123456789' } }, { applicant: { name: 'Acme', taxId: '****6789' } }],
    ['taxId with dashes masked', { applicant: { taxId: '12-3456789' } }, { applicant: { taxId: '****6789' } }],
    ['taxId SSN format masked', { applicant: { taxId: '123-45-6789' } }, { applicant: { taxId: '****6789' } }],
    ['taxId with spaces masked', { applicant: { taxId: '12 345 6789' } }, { applicant: { taxId: '****6789' } }],
    ['taxId as a number masked', { applicant: { taxId: 123456789 } }, { applicant: { taxId: '****6789' } }],
    ['a short taxId masked whole', { applicant: { taxId: '123' } }, { applicant: { taxId: '****' } }],
    ['tax_id, TaxID, tax-id, TAXID masked', { a: { tax_id: '111223333' }, b: { TaxID: '444556666' }, c: { 'tax-id': '777-88-9999' }, d: { TAXID: '000001234' } }, { a: { tax_id: '****3333' }, b: { TaxID: '****6666' }, c: { 'tax-id': '****9999' }, d: { TAXID: '****1234' } }],
    ['other tax id names masked', { tin: '98-7654321', ssn: '123-45-6789', ein: '12-3456789', taxIdentifier: 'DE123456789' }, { tin: '****4321', ssn: '****6789', ein: '****6789', taxIdentifier: '****6789' }],
    [
      'taxId deep in a response masked (clearance matches)',
      { result: { matches: [{ submissionId: 's1', applicant: { taxId: '123456789' } }] } },
      { result: { matches: [{ submissionId: 's1', applicant: { taxId: '****6789' } }] } },
    ],
    ['a null taxId left null', { applicant: { taxId: null } }, { applicant: { taxId: null } }],
    ['scalars and arrays untouched', [1, 'two', true, null], [1, 'two', true, null]],
  ];
  it.each(rows)('%s', (_name, given, kept) => {
    const before = JSON.stringify(given);
    expect(redactJson(given)).toEqual(kept);
    // The one-pass text (what logBody stores) is the same redaction.
    expect(JSON.parse(redactedJsonText(given)!)).toEqual(kept);
    // The original is not changed (the route's value may still be in use).
    expect(JSON.stringify(given)).toBe(before);
  });

  it('masks to the last four digits whatever the format', () => {
    expect(maskTaxId('123-45-6789')).toBe('****6789');
    expect(maskTaxId(' 1 2 3 4 5 ')).toBe('****2345');
    expect(maskTaxId(undefined)).toBe('****');
  });
});

// Member names drawn from the ones redaction acts on as well as any other.
const names = fc.oneof(fc.constantFrom('secret', 'clientSecret', 'webhook_secret', 'taxId', 'tax_id', 'TIN', 'ssn', 'secretive', 'applicant', 'items'), fc.string().filter((s) => s !== '__proto__'));
/** Any JSON value, its strings drawn from `text`, each array and object up to `size` long. */
const jsonOf = (text: fc.Arbitrary<string>, size: number) =>
  fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      text,
      fc.array(tie('value'), { maxLength: size }),
      fc.dictionary(names, tie('value'), { maxKeys: size }),
    ),
  })).value;

describe('request log redaction: the one-pass text', () => {
  const json = jsonOf(fc.string(), 4);
  it('is JSON.stringify(redactJson(value)), byte for byte, for any JSON value', () => {
    fc.assert(fc.property(json, (value) => redactedJsonText(value) === JSON.stringify(redactJson(value))), { numRuns: 2_000 });
  });
});

describe('request log redaction: a large body written only as far as the cut', () => {
  // Text of every kind: ASCII, any code point, and lone surrogates (written as \u escapes).
  const json = jsonOf(
    fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
    ),
    6,
  );

  it('stores exactly what writing it whole and cutting it stores, at any limit', () => {
    fc.assert(
      fc.property(json, fc.integer({ min: 0, max: 120 }), (value, limit) => {
        const whole = logBody({ kind: 'json', value, sizeBytes: null }, limit);
        const bounded = logBody({ kind: 'json', value, sizeBytes: 5 * limit + 1 }, limit);
        expect({ text: bounded.text, truncated: bounded.truncated }).toEqual({ text: whole.text, truncated: whole.truncated });
      }),
      { numRuns: 3_000 },
    );
  });

  it("reads a body's members only as far as the limit (a 100,000-member body: not all of them)", () => {
    let reads = 0;
    const body: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) {
      Object.defineProperty(body, `k${i}`, { enumerable: true, get: () => (reads++, 'x'.repeat(90)) });
    }
    const stored = logBody({ kind: 'json', value: body, sizeBytes: 10_000_000 });
    expect(stored.truncated).toBe(true);
    expect(Buffer.byteLength(stored.body as string)).toBeLessThanOrEqual(REQUEST_LOG_BODY_LIMIT_BYTES);
    expect(reads).toBeLessThan(REQUEST_LOG_BODY_LIMIT_BYTES / 90 + 2);
  });

  it('writes a 1 MB string from its start only, and leaves values that are not plain data to JSON.stringify', () => {
    const long = `${'é'.repeat(600_000)}😀`;
    expect(boundedRedactedJsonText({ legalName: long }, 100)).toEqual({ text: `{"legalName":"${'é'.repeat(101)}"`, complete: false });
    expect(boundedRedactedJsonText({ at: new Date(0) }, 100)).toBeUndefined();
    expect(boundedRedactedJsonText({ a: [1, undefined], secret: 's', b: undefined }, 100)).toEqual({ text: '{"a":[1,null]}', complete: true });
  });
});

describe('request log redaction: stored bodies', () => {
  const file = { fileName: 'loss-runs.pdf', contentType: 'application/pdf', sizeBytes: 52_113, sha256: 'a'.repeat(64) };
  const big = { items: Array.from({ length: 20_000 }, (_, i) => ({ i, secret: 's', applicant: { taxId: '123456789' } })) };
  const rows: [string, CapturedBody, { body: unknown; truncated: boolean; sizeBytes: number | null }][] = [
    ['no body', { kind: 'none' }, { body: null, truncated: false, sizeBytes: null }],
    ['JSON redacted', { kind: 'json', value: { secret: 'x', a: 1 }, sizeBytes: 20 }, { body: { a: 1 }, truncated: false, sizeBytes: 20 }],
    ['multipart as its file', { kind: 'multipart', file, sizeBytes: 52_400 }, { body: file, truncated: false, sizeBytes: 52_400 }],
    ['not JSON: null with its size', { kind: 'other', sizeBytes: 1_048_576 }, { body: null, truncated: false, sizeBytes: 1_048_576 }],
    ['JSON of unknown size: the size of its redacted text', { kind: 'json', value: { a: 'é' }, sizeBytes: null }, { body: { a: 'é' }, truncated: false, sizeBytes: 10 }],
  ];
  it.each(rows)('%s', (_name, captured, stored) => {
    const logged = logBody(captured);
    expect({ body: logged.body, truncated: logged.truncated, sizeBytes: logged.sizeBytes }).toEqual(stored);
    // What is shipped and stored is the body's JSON text.
    expect(logged.text === null ? null : JSON.parse(logged.text)).toEqual(stored.body);
  });

  it('writes the redacted text of a body marked unchanging once, for every request it answers', () => {
    // A settled job answered from memory, its result holding a webhook secret.
    const body = unchangingBody({ id: 'job_1', status: 'succeeded', result: { url: 'https://a.example/h', secret: 'whsec_x' } });
    const first = logBody({ kind: 'json', value: body, sizeBytes: null });
    expect(JSON.parse(first.text!)).toEqual({ id: 'job_1', status: 'succeeded', result: { url: 'https://a.example/h' } });
    // Changed behind the log's back (which nothing does): the text written the first time is kept.
    (body.result as { url: string }).url = 'changed';
    expect(logBody({ kind: 'json', value: body, sizeBytes: null }).text).toBe(first.text);
    // A body not so marked is written each time.
    const plain = { a: 1 };
    logBody({ kind: 'json', value: plain, sizeBytes: null });
    plain.a = 2;
    expect(logBody({ kind: 'json', value: plain, sizeBytes: null }).text).toBe('{"a":2}');
    // Nor is one whose text is past the log's limit (it is cut anyway): nothing that large is kept.
    const large = unchangingBody({ a: 'x'.repeat(REQUEST_LOG_BODY_LIMIT_BYTES) });
    logBody({ kind: 'json', value: large, sizeBytes: null });
    large.a = 'y';
    expect(logBody({ kind: 'json', value: large, sizeBytes: null }).text).toBe('{"a":"y"}');
  });

  it('keeps the multipart file without any byte of it', () => {
    const stored = logBody({ kind: 'multipart', file: { ...file, bytes: Buffer.from('%PDF-1.7') } as never, sizeBytes: 1 });
    expect(Object.keys(stored.body as object).sort()).toEqual(['contentType', 'fileName', 'sha256', 'sizeBytes']);
  });

  it('truncates a 1 MiB body at 16 KiB of its redacted text, with the flag', () => {
    const stored = logBody({ kind: 'json', value: big, sizeBytes: 1_048_576 });
    expect(stored.truncated).toBe(true);
    expect(typeof stored.body).toBe('string');
    const text = stored.body as string;
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(REQUEST_LOG_BODY_LIMIT_BYTES);
    expect(Buffer.byteLength(text)).toBeGreaterThan(REQUEST_LOG_BODY_LIMIT_BYTES - 4);
    // Redacted before it was cut.
    expect(text).not.toContain('secret');
    expect(text).not.toContain('123456789');
    expect(text).toContain('****6789');
    expect(stored.sizeBytes).toBe(1_048_576);
    expect(JSON.parse(stored.text!)).toBe(text);
  });

  it('keeps a body of exactly the limit whole', () => {
    const value = 'x'.repeat(REQUEST_LOG_BODY_LIMIT_BYTES - 2);
    expect(logBody({ kind: 'json', value, sizeBytes: null })).toMatchObject({ body: value, truncated: false, sizeBytes: REQUEST_LOG_BODY_LIMIT_BYTES });
  });

  it('never cuts a character in two', () => {
    expect(truncateUtf8('aé', 2)).toBe('a');
    expect(truncateUtf8('a€b', 4)).toBe('a€');
    expect(truncateUtf8('a€b', 3)).toBe('a');
  });
});
