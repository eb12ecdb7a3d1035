// What the static docs test (test/docs-static.test.ts) reads from the Markdown documents: their
// TypeScript snippets, the commands their shell blocks run, the tools .ci/run installs, the variables
// the blocks use, and the links with the headings they point at. General on purpose: a section anyone
// adds is checked the same way.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import GithubSlugger from 'github-slugger';
import { shellBlocks, SKIP_MARKER } from './doc-blocks.js';

/** A hidden line before a ```ts fence: declarations the fragment assumes (an Express app, a queue). */
export const DECLARE_MARKER = /^<!--\s*docs-test:\s*declare\s+([\s\S]*?)\s*-->\s*$/;

export interface TsSnippet {
  line: number;
  code: string;
  /** Declarations its marker gives (empty when none). */
  declarations: string;
}

/** The Markdown files of the repository (tracked or new, never node_modules). */
export function markdownFiles(root: string): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.md'], { cwd: root, encoding: 'utf8' });
  return out.split('\n').filter(Boolean).sort();
}

/** Each line of a document, with whether it sits inside a code fence. */
function fenced(text: string): { line: string; inFence: boolean; fence?: string }[] {
  let open: string | undefined;
  return text.split('\n').map((line) => {
    const m = /^(```+|~~~+)\s*(\S*)/.exec(line);
    if (m) {
      if (!open) {
        open = m[1]!;
        return { line, inFence: true, fence: m[2] ?? '' };
      }
      if (line.trim() === open) {
        open = undefined;
        return { line, inFence: true };
      }
    }
    return { line, inFence: open !== undefined };
  });
}

export function tsSnippets(file: string): TsSnippet[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const snippets: TsSnippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!m || !m[1]) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    if (['ts', 'typescript'].includes(m[1])) {
      const marker = i > 0 ? DECLARE_MARKER.exec(lines[i - 1]!) : null;
      snippets.push({ line: i + 1, code: lines.slice(i + 1, end).join('\n'), declarations: marker?.[1] ?? '' });
    }
    i = end;
  }
  return snippets;
}

const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'while', 'until', 'do', 'done', 'case', 'esac', 'in', '!', '{', '}', 'function', 'time']);

/**
 * The commands a shell block runs: the first word of every simple command, also inside $(…), `…`
 * and "…$(…)…", after VAR=value assignments and keywords; not redirection targets, heredoc bodies,
 * comments, or the words of a for header.
 */
export function shellCommands(code: string): string[] {
  const commands: string[] = [];
  let i = 0;
  const text = code;

  function scan(stop: string | undefined): void {
    let expectCmd = true;
    let word = '';
    let wordStarted = false;
    let redirect = false;
    let forHeader = false;
    // case WORD in PATTERN) … ;; PATTERN) … ;; esac: the header and the patterns are not commands.
    let caseHeader = false;
    let casePattern = false;
    const endWord = () => {
      if (!wordStarted) return;
      const w = word;
      word = '';
      wordStarted = false;
      if (redirect) {
        redirect = false;
        return;
      }
      if (forHeader) {
        if (w === 'do') {
          forHeader = false;
          expectCmd = true;
        }
        return;
      }
      if (caseHeader) {
        if (w === 'in') {
          caseHeader = false;
          casePattern = true;
        }
        return;
      }
      if (casePattern) {
        if (w === 'esac') {
          casePattern = false;
          expectCmd = false;
        }
        return;
      }
      if (!expectCmd) return;
      if (/^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(w)) return; // an assignment: the command follows
      if (w === 'for' || w === 'select') {
        forHeader = true;
        return;
      }
      if (w === 'case') {
        caseHeader = true;
        return;
      }
      if (KEYWORDS.has(w)) return;
      commands.push(w);
      expectCmd = false;
    };
    while (i < text.length) {
      const c = text[i]!;
      const next = text[i + 1];
      if (stop && c === stop && stop === '`') {
        endWord();
        i++;
        return;
      }
      if (c === '\\') {
        if (next === '\n') i += 2;
        else {
          word += next ?? '';
          wordStarted = true;
          i += 2;
        }
        continue;
      }
      if (c === '#' && !wordStarted) {
        while (i < text.length && text[i] !== '\n') i++;
        continue;
      }
      if (c === "'") {
        const close = text.indexOf("'", i + 1);
        word += text.slice(i + 1, close < 0 ? text.length : close);
        wordStarted = true;
        i = close < 0 ? text.length : close + 1;
        continue;
      }
      if (c === '"') {
        i++;
        wordStarted = true;
        while (i < text.length && text[i] !== '"') {
          if (text[i] === '\\') i += 2;
          else if (text[i] === '$' && text[i + 1] === '(' && text[i + 2] !== '(') {
            i += 2;
            scan(')');
          } else if (text[i] === '`') {
            i++;
            scan('`');
          } else word += text[i++];
        }
        i++;
        continue;
      }
      if (c === '$' && next === '(' && text[i + 2] === '(') {
        // $(( arithmetic )): no commands.
        let depth = 0;
        for (i += 1; i < text.length; i++) {
          if (text[i] === '(') depth++;
          else if (text[i] === ')' && --depth === 0) break;
        }
        i++;
        wordStarted = true;
        continue;
      }
      if (c === '$' && next === '(') {
        i += 2;
        scan(')');
        wordStarted = true;
        continue;
      }
      if (c === '`') {
        i++;
        scan('`');
        wordStarted = true;
        continue;
      }
      if (casePattern && (c === ')' || c === '|')) {
        endWord();
        if (c === ')') {
          casePattern = false;
          expectCmd = true;
        }
        i++;
        continue;
      }
      if (c === ';' && next === ';') {
        endWord();
        casePattern = true;
        i += 2;
        continue;
      }
      if (c === ')' && stop === ')') {
        endWord();
        i++;
        return;
      }
      if (c === '<' && next === '<' && text[i + 2] !== '<') {
        // A heredoc: its body is data.
        endWord();
        const m = /^<<-?\s*['"]?(\w+)['"]?/.exec(text.slice(i));
        if (m) {
          const lineEnd = text.indexOf('\n', i);
          const body = text.slice(lineEnd + 1);
          const close = new RegExp(`^\\s*${m[1]}\\s*$`, 'm').exec(body);
          // The rest of the heredoc's own line is still code.
          const rest = text.slice(i + m[0].length, lineEnd < 0 ? text.length : lineEnd).replace(/^\s*[|;&]+/, '');
          commands.push(...shellCommands(rest));
          i = close ? lineEnd + 1 + close.index + close[0].length : text.length;
          expectCmd = true;
          continue;
        }
      }
      if (c === '>' || c === '<') {
        if (/^\d+$/.test(word)) {
          word = '';
          wordStarted = false;
        } else endWord();
        i++;
        while (text[i] === '>' || text[i] === '&' || text[i] === '|') i++;
        if (text[i] === '(') {
          // <(…) / >(…): a process substitution runs commands.
          i++;
          scan(')');
          continue;
        }
        redirect = true;
        continue;
      }
      if (c === '|' || c === '&' || c === ';' || c === '\n' || c === '(' || c === ')') {
        endWord();
        redirect = false;
        // A new command follows (a for header goes on to its `do`, which endWord watches for).
        if (!forHeader) expectCmd = true;
        i++;
        continue;
      }
      if (c === ' ' || c === '\t') {
        endWord();
        i++;
        continue;
      }
      word += c;
      wordStarted = true;
      i++;
    }
    endWord();
  }
  scan(undefined);
  return commands;
}

/** A hidden line in a document naming the tools its blocks need beyond .ci/run's (a cluster's kubectl, helm). */
export const TOOLS_MARKER = /^<!--\s*docs-test:\s*tools\s+([^>]*?)\s*-->\s*$/m;

export function declaredTools(file: string): string[] {
  const m = TOOLS_MARKER.exec(readFileSync(file, 'utf8'));
  return m ? m[1]!.split(/[\s,]+/).filter(Boolean) : [];
}

/** The tools a machine set up by .ci/run has: what it checks for or installs, with Debian's base and Node. */
export function ciTools(ciRun: string): Set<string> {
  const tools = new Set<string>();
  for (const m of ciRun.matchAll(/command -v (\S+)/g)) tools.add(m[1]!);
  // Packages it installs, by the commands they bring.
  const BRINGS: Record<string, string[]> = { 'postgresql-client': ['psql', 'pg_isready'], postgresql: ['pg_ctlcluster'], 'nats-server': ['nats-server'] };
  for (const m of ciRun.matchAll(/missing\+=\(([^)]*)\)/g)) for (const pkg of m[1]!.split(/\s+/).filter(Boolean)) for (const t of BRINGS[pkg] ?? [pkg]) tools.add(t);
  // A Debian machine's essentials (coreutils, grep, sed, findutils, gzip, tar, bash builtins) and Node.js with npm.
  for (const t of [
    'node', 'npm', 'npx', 'bash', 'sh', 'env', 'cat', 'echo', 'printf', 'cd', 'pwd', 'ls', 'mkdir', 'rm', 'rmdir', 'cp', 'mv', 'ln', 'touch',
    'chmod', 'head', 'tail', 'tee', 'cut', 'tr', 'sort', 'uniq', 'wc', 'grep', 'sed', 'find', 'xargs', 'sha256sum', 'base64', 'date',
    'sleep', 'seq', 'test', '[', '[[', 'true', 'false', ':', 'export', 'set', 'unset', 'read', 'exit', 'source', '.', 'trap', 'wait',
    'kill', 'break', 'continue', 'return', 'shift', 'eval', 'exec', 'local', 'declare', 'let', 'tar', 'gzip', 'basename', 'dirname', 'realpath', 'mktemp', 'diff', 'stat', 'id', 'uname', 'which', 'command', 'type',
  ]) tools.add(t);
  return tools;
}

/** `$NAME`/`${NAME…}` references and `NAME=` assignments of a shell block. */
export function shellVariables(code: string): Set<string> {
  const names = new Set<string>();
  for (const m of code.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)) names.add(m[1]!);
  for (const m of code.matchAll(/(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=/gm)) names.add(m[1]!);
  return names;
}

export interface Link {
  line: number;
  target: string;
}

/** The relative links of a document (not inside code): [text](target) and <a href>. */
export function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  fenced(readFileSync(file, 'utf8')).forEach(({ line, inFence }, index) => {
    if (inFence) return;
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      links.push({ line: index + 1, target });
    }
  });
  return links;
}

/** The anchors a document's headings get on GitHub (github-slugger: duplicates get -1, -2, …). */
export function headingAnchors(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const { line, inFence } of fenced(readFileSync(file, 'utf8'))) {
    if (inFence) continue;
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    // What GitHub slugs is the heading's text: code spans and links keep their text only.
    const text = m[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`([^`]*)`/g, '$1').replace(/[*_]{1,2}([^*_]+)[*_]{1,2}/g, '$1');
    anchors.add(slugger.slug(text));
  }
  for (const m of readFileSync(file, 'utf8').matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]!);
  return anchors;
}

export { shellBlocks, SKIP_MARKER };
