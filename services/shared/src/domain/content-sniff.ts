// An attachment's declared media type checked against its leading bytes (issue 35), for the types the
// service knows by their signature: PDF, PNG, JPEG, and the ZIP-based formats (the Office Open XML
// documents, .docx/.xlsx/.pptx, and ZIP itself). A small table rather than a detection library: the
// check is "do these bytes begin as the declared type must", which needs the first bytes only (a
// library would have to parse the whole ZIP to tell a .docx from a .zip). Other declared types are
// not checked.

/** What a file of each media type begins with (any one of the signatures). */
const SIGNATURES: { types: readonly string[]; name: string; magic: readonly (readonly number[])[] }[] = [
  { types: ['application/pdf'], name: 'a PDF', magic: [[0x25, 0x50, 0x44, 0x46, 0x2d]] }, // %PDF-
  { types: ['image/png'], name: 'a PNG image', magic: [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]] },
  { types: ['image/jpeg'], name: 'a JPEG image', magic: [[0xff, 0xd8, 0xff]] },
  {
    types: [
      'application/zip',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    ],
    name: 'a ZIP archive (as Office documents are)',
    // A local file header, or the end record of an empty archive.
    magic: [
      [0x50, 0x4b, 0x03, 0x04],
      [0x50, 0x4b, 0x05, 0x06],
    ],
  },
];

/** How many leading bytes the check reads. */
export const SNIFF_BYTES = 8;

const begins = (head: Uint8Array, magic: readonly number[]) => head.length >= magic.length && magic.every((b, i) => head[i] === b);

/** What the leading bytes are, by the table (undefined: none of its types). */
export function sniffedAs(head: Uint8Array): string | undefined {
  return SIGNATURES.find((s) => s.magic.some((m) => begins(head, m)))?.name;
}

/**
 * Why the file's leading bytes do not fit its declared media type, or undefined when they do (or the
 * type is not one the table knows).
 */
export function contentTypeMismatch(declared: string, head: Uint8Array): string | undefined {
  const rule = SIGNATURES.find((s) => s.types.includes(declared));
  if (!rule || rule.magic.some((m) => begins(head, m))) return undefined;
  const actual = sniffedAs(head);
  return `is ${declared}, but the file's first bytes are not ${rule.name}'s${actual ? ` (they are ${actual}'s)` : ''}`;
}

/** The first bytes a file of this type must have (for the tests' generated files); empty for a type the table does not know. */
export function signatureOf(mediaType: string): Uint8Array {
  return Uint8Array.from(SIGNATURES.find((s) => s.types.includes(mediaType))?.magic[0] ?? []);
}
