// Issue 48 (6): no regular expression the services run can backtrack catastrophically. A pattern
// that is exponential or polynomial in its input (the visible-text pattern was quadratic: one
// validate request of 80,000 characters held the gateway for 6 s) is found here by recheck, which
// proves an attack string or the pattern's linearity, before it reaches a partner's request.
//
// What is checked: every regular-expression literal and every `RegExp(...)` of a string literal in
// the services' and the SDK's sources (read with the TypeScript parser, so none is missed), and
// every `pattern` of the served OpenAPI document (the JSON Schemas the gateway's Ajv and a product's
// published submission schema run). A `RegExp` built from anything else must be listed in DYNAMIC
// with what it is built from; a new one fails the test until it is.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { isPlantedFixture } from './support/fixtures.js';
import { check } from 'recheck';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * RegExp built from something other than a literal, by file: how many such calls it makes (a new call
 * site fails the test even in a file listed here) and why their patterns are safe.
 */
const DYNAMIC: Record<string, [calls: number, why: string]> = {
  // SQL statement names for span names: the text is the services' own SQL, never a partner's; the
  // patterns are checked below through spanNamePatterns().
  'services/shared/src/telemetry/span-name.ts': [7, 'patterns of fixed keywords around IDENT, checked as built'],
  // The sandbox directive keys, joined: checked below as built (SANDBOX_PART).
  'services/shared/src/domain/sandbox.ts': [1, 'the keys of SANDBOX_DIRECTIVES, checked as built'],
  // The secret format: PARTNER_SECRET_PATTERN is in the OpenAPI document (webhook endpoint secret).
  'services/shared/src/domain/webhooks.ts': [1, 'PARTNER_SECRET_PATTERN, checked through the OpenAPI document'],
  // Deprecation rules come from the operator's configuration, not from a request; the path pattern
  // is the operator's, anchored, with their own parameters as [^/]+.
  'services/gateway/src/http/deprecation.ts': [1, "the operator's DEPRECATIONS setting"],
};

interface Found {
  source: string;
  flags: string;
  where: string;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist' || name === 'generated' || isPlantedFixture(name)) continue;
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.test-helper.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const roots = ['services', 'sdk'].flatMap((top) =>
  readdirSync(join(ROOT, top))
    .map((pkg) => join(ROOT, top, pkg, 'src'))
    .filter((p) => {
      try {
        return statSync(p).isDirectory();
      } catch {
        return false;
      }
    }),
);

/** Regex literals and RegExp(...) calls of every source file. */
function scanSources(): { literals: Found[]; dynamic: Found[] } {
  const literals: Found[] = [];
  const dynamic: Found[] = [];
  for (const file of roots.flatMap(sourceFiles)) {
    const text = readFileSync(file, 'utf8');
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const where = (n: ts.Node) => `${relative(ROOT, file)}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;
    const visit = (n: ts.Node): void => {
      if (n.kind === ts.SyntaxKind.RegularExpressionLiteral) {
        const t = n.getText();
        const end = t.lastIndexOf('/');
        literals.push({ source: t.slice(1, end), flags: t.slice(end + 1), where: where(n) });
      } else if ((ts.isNewExpression(n) || ts.isCallExpression(n)) && ts.isIdentifier(n.expression) && n.expression.text === 'RegExp') {
        const [pattern, flags] = n.arguments ?? [];
        const literal = (a: ts.Expression | undefined) => (a && (ts.isStringLiteral(a) || ts.isNoSubstitutionTemplateLiteral(a)) ? a.text : undefined);
        const p = literal(pattern);
        if (p !== undefined && (flags === undefined || literal(flags) !== undefined)) literals.push({ source: p, flags: literal(flags) ?? '', where: where(n) });
        else dynamic.push({ source: pattern?.getText() ?? '', flags: '', where: where(n) });
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return { literals, dynamic };
}

/** Every `pattern` string in a JSON document (the schemas' patterns, Ajv compiles them with `u`). */
function schemaPatterns(doc: unknown, where: string, out: Found[] = []): Found[] {
  if (Array.isArray(doc)) doc.forEach((d) => schemaPatterns(d, where, out));
  else if (typeof doc === 'object' && doc !== null) {
    for (const [k, v] of Object.entries(doc)) {
      if (k === 'pattern' && typeof v === 'string') out.push({ source: v, flags: 'u', where });
      else schemaPatterns(v, where, out);
    }
  }
  return out;
}

async function unsafe(found: Found[]): Promise<string[]> {
  const unique = new Map<string, Found>();
  for (const f of found) unique.set(`${f.flags}\0${f.source}`, f);
  const problems: string[] = [];
  for (const f of unique.values()) {
    // A fixed seed: recheck's fuzzing is random otherwise, and a verdict must not change from run to run.
    const r = await check(f.source, f.flags, { timeout: 10_000, randomSeed: 48 });
    if (r.status !== 'safe') {
      const detail = r.status === 'vulnerable' ? `${r.complexity.type}, attack ${JSON.stringify(r.attack.pattern)}` : r.status === 'unknown' ? `unknown: ${r.error.kind}` : r.status;
      problems.push(`${f.where} /${f.source}/${f.flags}: ${detail}`);
    }
  }
  return problems;
}

describe('regular expressions cannot backtrack catastrophically', () => {
  const { literals, dynamic } = scanSources();

  it('finds the sources it reads (the scan is not empty)', () => {
    expect(literals.length).toBeGreaterThan(50);
  });

  it('every RegExp built from something other than a literal is known', () => {
    const byFile = new Map<string, string[]>();
    for (const d of dynamic) byFile.set(d.where.replace(/:\d+$/, ''), [...(byFile.get(d.where.replace(/:\d+$/, '')) ?? []), `${d.where}: RegExp(${d.source})`]);
    const unknown = [...byFile].filter(([file, calls]) => DYNAMIC[file]?.[0] !== calls.length).flatMap(([, calls]) => calls);
    expect(unknown).toEqual([]);
    expect([...byFile.keys()].sort()).toEqual(Object.keys(DYNAMIC).sort());
  });

  it('every literal in the services and the SDK is linear (recheck)', async () => {
    expect(await unsafe(literals)).toEqual([]);
  }, 300_000);

  it('every pattern of the served OpenAPI document, the SQL span names and the sandbox directives is linear (recheck)', async () => {
    const { buildOpenApiDocument } = (await import(`${ROOT}services/gateway/dist/openapi/document.js`)) as {
      buildOpenApiDocument: (o: Record<string, string>) => unknown;
    };
    const found: Found[] = [];
    for (const environment of ['uat', 'production']) {
      const doc = buildOpenApiDocument({ baseUrl: 'https://api.example.com', tokenUrl: 'https://auth.example.com/oauth2/token', scope: 'api.example.com/access', environment });
      schemaPatterns(doc, `openapi (${environment})`, found);
    }
    expect(found.length).toBeGreaterThan(5);
    const { spanNamePatterns } = (await import(`${ROOT}services/shared/dist/telemetry/span-name.js`)) as { spanNamePatterns: () => RegExp[] };
    for (const re of spanNamePatterns()) found.push({ source: re.source, flags: re.flags, where: 'services/shared/src/telemetry/span-name.ts' });
    const { SANDBOX_PART } = (await import(`${ROOT}services/shared/dist/domain/sandbox.js`)) as { SANDBOX_PART: RegExp };
    found.push({ source: SANDBOX_PART.source, flags: SANDBOX_PART.flags, where: 'services/shared/src/domain/sandbox.ts' });
    expect(await unsafe(found)).toEqual([]);
  }, 300_000);

  it('the check itself finds the pattern of issue 48 quadratic', async () => {
    const usable = '[^\\u0000-\\u001f\\u007f\\p{Cs}]';
    const problems = await unsafe([{ source: `^${usable}*[\\p{L}\\p{N}\\p{P}\\p{S}]${usable}*$`, flags: 'u', where: 'the pattern before issue 48' }]);
    expect(problems).toEqual([expect.stringContaining('polynomial')]);
  }, 60_000);
});
