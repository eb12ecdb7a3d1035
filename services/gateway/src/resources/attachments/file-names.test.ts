import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { contentDisposition, sanitiseFileName } from './file-names.js';
// The submission service stores only names the shared check accepts: every sanitised name must pass.
import { isSafeFileName } from '@partner/shared/domain/attachments';

describe('sanitiseFileName', () => {
  it.each([
    ['report.pdf', 'report.pdf'],
    ['../../etc/passwd', 'passwd'],
    ['..\\..\\windows\\win.ini', 'win.ini'],
    ['/abs/path/to/file.txt', 'file.txt'],
    ['dir/', 'attachment'],
    ['..', 'attachment'],
    ['', 'attachment'],
    ['   ', 'attachment'],
    ['.bashrc', 'bashrc'],
    ['...pdf', 'pdf'],
    ['name.pdf...', 'name.pdf'],
    ['a"b"c.pdf', 'a_b_c.pdf'],
    ['x:y*z?<>|.pdf', 'x_y_z____.pdf'],
    ['evil.pdf\r\nSet-Cookie: a=b', 'evil.pdfSet-Cookie_ a=b'],
    ['nul\u0000byte.pdf', 'nulbyte.pdf'],
    ['rtl\u202Eexe.pdf', 'rtlexe.pdf'],
    ['zero\u200Bwidth.pdf', 'zerowidth.pdf'],
    ['tabs\tand  spaces\u00A0 here.pdf', 'tabsand spaces here.pdf'],
    ['line\u2028sep.pdf', 'linesep.pdf'],
    ['cafe\u0301.pdf', 'café.pdf'],
    ['Schadenübersicht – 2024 ✓.pdf', 'Schadenübersicht – 2024 ✓.pdf'],
    ['日本語のファイル.xlsx', '日本語のファイル.xlsx'],
    ['lone\uD800surrogate.pdf', 'lonesurrogate.pdf'],
  ])('%j -> %j', (raw, expected) => {
    expect(sanitiseFileName(raw)).toBe(expected);
    expect(isSafeFileName(sanitiseFileName(raw))).toBe(true);
  });

  it('cuts long names to 255 UTF-8 bytes at a character boundary, keeping the extension', () => {
    const ascii = sanitiseFileName(`${'a'.repeat(300)}.docx`);
    expect(ascii).toBe(`${'a'.repeat(250)}.docx`);
    const wide = sanitiseFileName(`${'😀'.repeat(100)}.pdf`);
    expect(Buffer.byteLength(wide)).toBeLessThanOrEqual(255);
    expect(wide).toMatch(/^(😀)+\.pdf$/u);
    const noExt = sanitiseFileName('ä'.repeat(200));
    expect(Buffer.byteLength(noExt)).toBe(254);
  });

  it('always yields a name the submission service accepts, without line breaks or path parts', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (raw) => {
        const name = sanitiseFileName(raw);
        expect(isSafeFileName(name)).toBe(true);
        expect(name).not.toMatch(/[\r\n/\\"]/);
        expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255);
        expect(sanitiseFileName(name)).toBe(name);
      }),
      { numRuns: 2_000 },
    );
    // Dense in the characters that matter, which random Unicode rarely hits.
    const risky = fc.constantFrom(...'/\\.."*:<>?|\r\n\t\u0000\u202e\u200b\u2028\u00a0\u0301 aé日😀'.split(''), '..', '.pdf');
    fc.assert(
      fc.property(fc.array(risky, { maxLength: 80 }), (parts) => {
        const name = sanitiseFileName(parts.join(''));
        expect(isSafeFileName(name)).toBe(true);
        expect(sanitiseFileName(name)).toBe(name);
      }),
      { numRuns: 5_000 },
    );
  });
});

describe('contentDisposition', () => {
  it('gives an ASCII fallback and the RFC 5987 UTF-8 form', () => {
    expect(contentDisposition('loss run.pdf')).toBe(`attachment; filename="loss run.pdf"; filename*=UTF-8''loss%20run.pdf`);
    expect(contentDisposition('Schadenübersicht (2024)*.pdf')).toBe(
      `attachment; filename="Schadenubersicht (2024)*.pdf"; filename*=UTF-8''Schaden%C3%BCbersicht%20%282024%29%2A.pdf`,
    );
    expect(contentDisposition("it's 100%.csv")).toBe(`attachment; filename="it's 100_.csv"; filename*=UTF-8''it%27s%20100%25.csv`);
    expect(contentDisposition('日本.pdf')).toBe(`attachment; filename="__.pdf"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.pdf`);
  });

  it('is a valid header value for any sanitised name, decoding back to it', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (raw) => {
        const name = sanitiseFileName(raw);
        const header = contentDisposition(name);
        expect(header).toMatch(/^attachment; filename="[\x20\x21\x23-\x7e]*"; filename\*=UTF-8''[A-Za-z0-9!#$&+\-.^_`|~%]+$/);
        expect(decodeURIComponent(header.split("UTF-8''")[1]!)).toBe(name);
      }),
      { numRuns: 1_000 },
    );
  });
});
