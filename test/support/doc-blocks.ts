// The shell blocks of a Markdown document that the docs test runs: every ```sh fence, in document
// order, unless the line just before it is an HTML comment `<!-- docs-test: skip (why) -->` (shown
// to nobody, read by the test). See README "Tests" for the convention.
import { readFileSync } from 'node:fs';

export interface ShellBlock {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  skipped: boolean;
}

export const SKIP_MARKER = /^<!--\s*docs-test:\s*skip\b.*-->\s*$/;
/** `<!-- docs-test: file NAME -->` before a fence of any language: the test saves it as NAME where the shell blocks run. */
export const FILE_MARKER = /^<!--\s*docs-test:\s*file\s+([\w.-]+)\s*-->\s*$/;

/** The fences a document asks to be saved as files before its shell blocks run. */
export function fileBlocks(file: string): { name: string; code: string }[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const files: { name: string; code: string }[] = [];
  for (let i = 1; i < lines.length; i++) {
    const m = FILE_MARKER.exec(lines[i - 1]!);
    if (!m || !/^```/.test(lines[i]!)) continue;
    const end = closing(lines, i);
    files.push({ name: m[1]!, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return files;
}

export function shellBlocks(file: string): ShellBlock[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|shell)\s*$/.test(lines[i]!)) {
      if (/^```/.test(lines[i]!)) i = closing(lines, i); // skip other fences whole
      continue;
    }
    const end = closing(lines, i);
    blocks.push({ line: i + 1, code: lines.slice(i + 1, end).join('\n'), skipped: i > 0 && SKIP_MARKER.test(lines[i - 1]!) });
    i = end;
  }
  return blocks;
}

function closing(lines: string[], open: number): number {
  for (let j = open + 1; j < lines.length; j++) if (/^```\s*$/.test(lines[j]!)) return j;
  throw new Error(`unclosed code fence at line ${open + 1}`);
}
