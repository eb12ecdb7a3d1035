import { describe, expect, it } from 'vitest';
import { isSafeFileName } from './attachments.js';

describe('isSafeFileName', () => {
  it('accepts ordinary and international names', () => {
    for (const name of ['a.pdf', 'loss run 2024.pdf', 'Schadenübersicht – 2024 ✓.pdf', '日本語.xlsx', 'x'.repeat(255)]) {
      expect(isSafeFileName(name), name).toBe(true);
    }
  });

  it('refuses paths, control and invisible characters, quotes, odd spacing and long names', () => {
    for (const name of [
      '',
      '../x.pdf',
      'a/b.pdf',
      'a\\b.pdf',
      '.hidden',
      ' lead.pdf',
      'trail.pdf ',
      'two  spaces.pdf',
      'a"b.pdf',
      'a\r\nb.pdf',
      'nul\u0000.pdf',
      'rtl\u202e.pdf',
      'cafe\u0301.pdf',
      'lone\ud800.pdf',
      'x'.repeat(256),
      'ä'.repeat(128),
    ]) {
      expect(isSafeFileName(name), JSON.stringify(name)).toBe(false);
    }
  });
});
