import { describe, expect, it } from 'vitest';
import { contentTypeMismatch, signatureOf, sniffedAs } from './content-sniff.js';

const bytes = (...xs: (number | string)[]) => Buffer.concat(xs.map((x) => (typeof x === 'string' ? Buffer.from(x, 'latin1') : Buffer.from([x]))));
const PNG = bytes(0x89, 'PNG\r\n\x1a\n', 'rest');
const PDF = bytes('%PDF-1.7\n');
const JPEG = bytes(0xff, 0xd8, 0xff, 0xe0, 'JFIF');
const DOCX = bytes('PK\x03\x04', '\x14\x00');
const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

describe('the declared media type against the leading bytes', () => {
  it('accepts files that begin as their type must', () => {
    expect(contentTypeMismatch('application/pdf', PDF)).toBeUndefined();
    expect(contentTypeMismatch('image/png', PNG)).toBeUndefined();
    expect(contentTypeMismatch('image/jpeg', JPEG)).toBeUndefined();
    for (const t of [DOCX_TYPE, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'application/vnd.openxmlformats-officedocument.presentationml.presentation', 'application/zip']) {
      expect(contentTypeMismatch(t, DOCX), t).toBeUndefined();
    }
    expect(contentTypeMismatch('application/zip', bytes('PK\x05\x06'))).toBeUndefined();
  });

  it('refuses PNG bytes declared as a PDF, and says what they are', () => {
    expect(contentTypeMismatch('application/pdf', PNG)).toBe("is application/pdf, but the file's first bytes are not a PDF's (they are a PNG image's)");
    expect(contentTypeMismatch('image/png', JPEG)).toMatch(/not a PNG image's \(they are a JPEG image's\)/);
    expect(contentTypeMismatch(DOCX_TYPE, PDF)).toMatch(/not a ZIP archive/);
    expect(contentTypeMismatch('application/pdf', bytes('hello'))).toBe("is application/pdf, but the file's first bytes are not a PDF's");
    expect(contentTypeMismatch('application/pdf', bytes('%PD'))).toBeDefined();
  });

  it('leaves types it does not know alone', () => {
    expect(contentTypeMismatch('text/plain', PNG)).toBeUndefined();
    expect(contentTypeMismatch('application/octet-stream', PDF)).toBeUndefined();
    expect(sniffedAs(bytes('plain text'))).toBeUndefined();
    expect(signatureOf('text/csv')).toEqual(new Uint8Array());
    expect(contentTypeMismatch('image/png', signatureOf('image/png'))).toBeUndefined();
  });
});
