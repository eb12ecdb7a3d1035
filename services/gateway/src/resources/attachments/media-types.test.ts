import { describe, expect, it } from 'vitest';
import { ALLOWED_MEDIA_TYPES, isDocumentType, resolveMediaType } from './media-types.js';

describe('resolveMediaType', () => {
  it('keeps an allowed declared type, without parameters and in lowercase', () => {
    expect(resolveMediaType('application/pdf', 'a.pdf')).toBe('application/pdf');
    expect(resolveMediaType('Text/Plain; charset=UTF-8', 'a.txt')).toBe('text/plain');
    // The declared type wins over the extension.
    expect(resolveMediaType('image/png', 'scan.pdf')).toBe('image/png');
  });

  it('maps common aliases', () => {
    expect(resolveMediaType('image/jpg', 'a.jpg')).toBe('image/jpeg');
    expect(resolveMediaType('application/x-pdf', 'a.pdf')).toBe('application/pdf');
  });

  it('resolves an unknown type (application/octet-stream) by the extension', () => {
    expect(resolveMediaType('application/octet-stream', 'SOV.XLSX')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(resolveMediaType('application/octet-stream', 'app.docx')).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(resolveMediaType('', 'scan.TIF')).toBe('image/tiff');
    expect(resolveMediaType(undefined, 'loss.xls')).toBe('application/vnd.ms-excel');
    expect(resolveMediaType('application/octet-stream', 'blob.bin')).toBeUndefined();
    expect(resolveMediaType('application/octet-stream', 'noextension')).toBeUndefined();
  });

  it('refuses everything outside the allowlist', () => {
    for (const type of ['text/html', 'image/svg+xml', 'application/x-msdownload', 'application/zip', 'application/javascript', 'video/mp4']) {
      expect(resolveMediaType(type, 'x.pdf')).toBeUndefined();
    }
  });

  it('lists each extension once', () => {
    const exts = Object.values(ALLOWED_MEDIA_TYPES).flat();
    expect(new Set(exts).size).toBe(exts.length);
  });
});

it('knows the document types', () => {
  expect(['application', 'loss_run', 'schedule_of_values', 'financials', 'other'].every(isDocumentType)).toBe(true);
  expect(isDocumentType('invoice')).toBe(false);
  expect(isDocumentType('toString')).toBe(false);
});
