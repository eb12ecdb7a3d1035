// The declarations PDF read back by a real PDF text extractor (pdfjs-dist): it names what it must,
// draws applicant-supplied text literally, and its sha256 is the hash of its bytes.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFStream, StandardFonts } from 'pdf-lib';
import { MAX_LINES, pdfText, renderDeclarations, wrapText, type Declarations } from './declarations.js';

const standardFontDataUrl = join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'standard_fonts/');

async function textOf(bytes: Uint8Array): Promise<string> {
  const pdf = await getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, standardFontDataUrl, isEvalSupported: false }).promise;
  let text = '';
  for (let i = 1; i <= pdf.numPages; i++) {
    const content = await (await pdf.getPage(i)).getTextContent();
    text += content.items.map((it) => ('str' in it ? it.str : '')).join('\n') + '\n';
  }
  await pdf.destroy();
  return text;
}

const base: Declarations = {
  policyNumber: 'P-2026-00000042',
  insured: 'Acme Widgets LLC',
  product: 'Cyber Liability',
  limit: '1000000',
  retention: '10000',
  premium: { amount: '1234.50', currency: 'EUR' },
  effectiveDate: '2026-12-01',
  expirationDate: '2027-12-01',
  issuedAt: new Date('2026-11-27T05:00:00.000Z'),
};

describe('declarations PDF', () => {
  it('names the policy number, insured, product, limit, retention, premium and both dates; sha256 is of its bytes', async () => {
    const doc = await renderDeclarations(base);
    expect(doc.contentType).toBe('application/pdf');
    expect(doc.fileName).toBe('declarations-P-2026-00000042.pdf');
    expect(doc.sha256).toBe(createHash('sha256').update(doc.bytes).digest('hex'));
    const text = await textOf(doc.bytes);
    for (const s of ['P-2026-00000042', 'Acme Widgets LLC', 'Cyber Liability', '1000000 EUR', '10000 EUR', '1234.50 EUR', '2026-12-01', '2027-12-01']) {
      expect(text).toContain(s);
    }
    // The same policy renders the same bytes (a redelivered issue stores what the first computed).
    expect((await renderDeclarations(base)).sha256).toBe(doc.sha256);
  });

  it('draws PDF operators in a name as literal text', async () => {
    const insured = 'ET BT /F1 99 Tf (pwn) Tj ) Tj \\ %%EOF endstream';
    const text = await textOf((await renderDeclarations({ ...base, insured })).bytes);
    expect(text).toContain(insured);
  });

  it('draws a URL and PDF action names in a name as text: no link annotation, URI action or JavaScript in the file', async () => {
    const insured = 'https://evil.example/pay <</Type /Annot /Subtype /Link /A <</S /URI /URI (https://evil.example)>>>> /JavaScript /JS (app.alert(1)) /OpenAction';
    const bytes = (await renderDeclarations({ ...base, insured })).bytes;
    expect((await textOf(bytes)).replace(/\s+/g, '')).toContain(insured.replace(/\s+/g, ''));

    // pdfjs: no annotation on any page, no JavaScript or open action in the document.
    const pdf = await getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, standardFontDataUrl, isEvalSupported: false }).promise;
    for (let i = 1; i <= pdf.numPages; i++) expect(await (await pdf.getPage(i)).getAnnotations()).toEqual([]);
    expect(await pdf.getJSActions()).toBeNull();
    expect(await pdf.getOpenAction()).toBeNull();
    await pdf.destroy();

    // pdf-lib, every object of the file: no dictionary is an annotation or an action, none names one;
    // a page's annotation list (pdf-lib writes one) is empty.
    const doc = await PDFDocument.load(bytes);
    for (const page of doc.getPages()) expect(page.node.Annots()?.size() ?? 0).toBe(0);
    const forbidden = new Set(['Annot', 'Link', 'URI', 'JavaScript', 'JS', 'OpenAction', 'AA', 'Launch', 'SubmitForm', 'AcroForm', 'Names']);
    const all: string[] = [];
    for (const [, object] of doc.context.enumerateIndirectObjects()) {
      const dict = object instanceof PDFStream ? object.dict : object instanceof PDFDict ? object : undefined;
      if (!dict) continue;
      for (const [key, value] of dict.entries()) {
        if (key.decodeText() === 'Annots') expect(doc.context.lookup(value, PDFArray).size()).toBe(0);
        all.push(...[key, value].filter((n): n is PDFName => n instanceof PDFName).map((n) => n.decodeText()));
      }
    }
    expect(all).toContain('Page'); // the walk reached the pages
    expect(all.filter((n) => forbidden.has(n))).toEqual([]);
  });

  it('shows right-to-left marks and characters the font cannot encode as visible replacements', async () => {
    const insured = 'Evil\u202Eodnetni Corp \u200F \u5B89\u5168 \u{1F600} caf\u00E9';
    const text = await textOf((await renderDeclarations({ ...base, insured })).bytes);
    // Wrapped onto two lines: compared without the line breaks.
    expect(text.replace(/\s+/g, '')).toContain('Evil<U+202E>odnetniCorp<U+200F><U+5B89><U+5168><U+1F600>caf\u00E9');
  });

  it('wraps a 200-character name onto several lines and keeps every character', async () => {
    const insured = Array.from({ length: 20 }, (_, i) => `Word${String(i).padStart(5, '0')}`).join(' ').padEnd(200, '!');
    expect(insured).toHaveLength(200);
    const text = await textOf((await renderDeclarations({ ...base, insured })).bytes);
    expect(text.replace(/\s+/g, '')).toContain(insured.replace(/\s+/g, ''));
    const one = 'X'.repeat(200);
    const t2 = await textOf((await renderDeclarations({ ...base, insured: one })).bytes);
    expect(t2.replace(/\s+/g, '')).toContain(one);
  });
});

describe('pdfText', () => {
  it('keeps what WinAnsi Helvetica encodes and names every other code point', async () => {
    const font = await (await PDFDocument.create()).embedFont(StandardFonts.Helvetica);
    const charset = new Set(font.getCharacterSet());
    const cases: [string, string][] = [
      ['Acme (Ltd) / 100% \\ ok', 'Acme (Ltd) / 100% \\ ok'],
      ['M\u00FCller & S\u00F6hne \u20AC', 'M\u00FCller & S\u00F6hne \u20AC'],
      ['a\u200Fb', 'a<U+200F>b'],
      ['a\u202Eb', 'a<U+202E>b'],
      ['tab\there', 'tab<U+0009>here'],
      ['\u{1F600}', '<U+1F600>'],
      ['\u0645\u0631\u062D\u0628\u0627', '<U+0645><U+0631><U+062D><U+0628><U+0627>'],
      ['', ''],
    ];
    for (const [input, want] of cases) expect(pdfText(input, charset)).toBe(want);
    // Whatever it returns, the font can draw (pdf-lib throws on a character it cannot encode).
    for (const [input] of cases) expect(() => font.encodeText(pdfText(input, charset))).not.toThrow();
  });
});

describe('wrapText', () => {
  const fits = (n: number) => (l: string) => [...l].length <= n;
  it('breaks at spaces, splits a word longer than a line, and cuts visibly past the line limit', () => {
    expect(wrapText('alpha beta gamma', fits(10))).toEqual(['alpha beta', 'gamma']);
    expect(wrapText('abcdefghijkl', fits(5))).toEqual(['abcde', 'fghij', 'kl']);
    const cut = wrapText('x'.repeat(100), fits(10));
    expect(cut).toHaveLength(MAX_LINES);
    expect(cut[MAX_LINES - 1]!.endsWith('\u2026')).toBe(true);
    expect(wrapText('', fits(10))).toEqual(['']);
  });
});
