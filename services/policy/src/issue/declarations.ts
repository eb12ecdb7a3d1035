// The declarations document of an issued policy: a one-page PDF (pdf-lib, standard Helvetica) that
// names the policy number, insured, product, limit, retention, premium and both dates.
//
// Every value is drawn as text: pdf-lib writes each string as a hex string operand of Tj, so PDF
// operators in an applicant's name ("BT /F1 12 Tf", ") Tj", "%%EOF") stay literal characters. A
// standard font encodes WinAnsi only: every other character (right-to-left marks, CJK, emoji,
// controls) becomes a visible replacement naming its code point (pdfText, the one function that
// decides it), never dropped silently. A long value wraps to the page width and, past MAX_LINES,
// is cut with a visible ellipsis.
import { PDFDocument, StandardFonts, type PDFFont } from 'pdf-lib';
import { createHash } from 'node:crypto';

export interface Declarations {
  policyNumber: string;
  insured: string;
  product: string;
  limit: string;
  retention: string;
  premium: { amount: string; currency: string };
  effectiveDate: string;
  expirationDate: string;
  /** When the policy was issued: the PDF's creation date (so the same policy renders the same bytes). */
  issuedAt: Date;
}

export interface RenderedDocument {
  bytes: Uint8Array;
  sha256: string;
  fileName: string;
  contentType: 'application/pdf';
}

/** Lines a value may take before it is cut (a 200-character name takes about three). */
export const MAX_LINES = 4;
const ELLIPSIS = '\u2026';

/**
 * The text a standard font can draw for `s`: each character outside `charset` (the font's WinAnsi
 * repertoire) becomes `<U+XXXX>`, so nothing is dropped or interpreted. Pure; tested with tables.
 */
export function pdfText(s: string, charset: ReadonlySet<number>): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    out += charset.has(cp) && cp >= 0x20 && cp !== 0x7f ? ch : `<U+${cp.toString(16).toUpperCase().padStart(4, '0')}>`;
  }
  return out;
}

/** Splits `text` into lines no wider than `width` (breaking words longer than a line), at most `maxLines`; a cut ends with an ellipsis. */
export function wrapText(text: string, fits: (line: string) => boolean, maxLines = MAX_LINES): string[] {
  const lines: string[] = [];
  let line = '';
  for (const ch of [...text]) {
    const next = line + ch;
    if (fits(next) || line === '') {
      line = next;
      continue;
    }
    // Break at the last space of the line when there is one.
    const space = line.lastIndexOf(' ');
    if (ch !== ' ' && space > 0) {
      lines.push(line.slice(0, space));
      line = line.slice(space + 1) + ch;
    } else {
      lines.push(line);
      line = ch === ' ' ? '' : ch;
    }
  }
  if (line !== '' || lines.length === 0) lines.push(line);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  let last = kept[maxLines - 1]!;
  while (last !== '' && !fits(last + ELLIPSIS)) last = [...last].slice(0, -1).join('');
  kept[maxLines - 1] = last + ELLIPSIS;
  return kept;
}

export const declarationsFileName = (policyNumber: string): string => `declarations-${policyNumber.replace(/[^A-Za-z0-9_-]/g, '_')}.pdf`;

export async function renderDeclarations(d: Declarations): Promise<RenderedDocument> {
  const doc = await PDFDocument.create();
  doc.setTitle(`Declarations ${d.policyNumber}`);
  doc.setProducer('Partner Submission Service');
  doc.setCreator('Partner Submission Service');
  doc.setCreationDate(d.issuedAt);
  doc.setModificationDate(d.issuedAt);
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const page = doc.addPage([612, 792]);
  const margin = 56;
  const labelWidth = 130;
  const valueWidth = page.getWidth() - margin * 2 - labelWidth;
  let y = page.getHeight() - margin;
  page.drawText('Policy declarations', { x: margin, y, size: 20, font: bold });
  y -= 36;
  const row = (label: string, value: string, font: PDFFont = regular) => {
    const charset = new Set(font.getCharacterSet());
    const lines = wrapText(pdfText(value, charset), (l) => font.widthOfTextAtSize(l, 11) <= valueWidth);
    page.drawText(label, { x: margin, y, size: 11, font: bold });
    for (const l of lines) {
      page.drawText(l, { x: margin + labelWidth, y, size: 11, font });
      y -= 16;
    }
    y -= 6;
  };
  row('Policy number', d.policyNumber);
  row('Insured', d.insured);
  row('Product', d.product);
  row('Limit', `${d.limit} ${d.premium.currency}`);
  row('Retention', `${d.retention} ${d.premium.currency}`);
  row('Premium', `${d.premium.amount} ${d.premium.currency}`);
  row('Effective date', d.effectiveDate);
  row('Expiration date', d.expirationDate);
  const bytes = await doc.save({ useObjectStreams: false });
  return {
    bytes,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    fileName: declarationsFileName(d.policyNumber),
    contentType: 'application/pdf',
  };
}
