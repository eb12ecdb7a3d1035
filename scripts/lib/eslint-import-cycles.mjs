// An ESLint rule for the import cycles import-x/no-cycle cannot see. import-x skips every type-only
// import (`import type`, `export type … from`) by design, so two files that only name each other's
// types, or a value import whose way back passes through a type import, are a circle it never reports;
// the module structure still has that circle. This rule walks the package's imports, types included,
// and reports an import that leads back to its own file, unless import-x reports it already (a value
// import with a way back through value imports alone), so each cycle is reported once.
//
// Only relative specifiers are followed (a package imports itself by relative paths; another package
// is reached by name, and the layering forbids a cycle between packages), inside the package (the
// nearest package.json). Files on disk are read with the TypeScript parser and cached by mtime.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** @typedef {{ to: string, typeOnly: boolean }} Edge */

const packageRoots = new Map();
/** The directory of the nearest package.json above a file. */
function packageRootOf(file) {
  const dir = dirname(file);
  if (!packageRoots.has(dir)) {
    let d = dir;
    while (!existsSync(join(d, 'package.json')) && dirname(d) !== d) d = dirname(d);
    packageRoots.set(dir, d);
  }
  return packageRoots.get(dir);
}

/** The file a relative specifier names, NodeNext style (a specifier ending in .js names the .ts beside it), or undefined. */
function resolveSpecifier(fromFile, specifier) {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const base = resolve(dirname(fromFile), specifier);
  const candidates = /\.js$/.test(base)
    ? [base.replace(/\.js$/, '.ts'), base]
    : /\.mjs$/.test(base)
      ? [base.replace(/\.mjs$/, '.mts'), base]
      : [base, `${base}.ts`, join(base, 'index.ts'), `${base}.js`];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

/** Whether a TypeScript import or export declaration brings types alone. */
function tsTypeOnly(node) {
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause;
    if (!clause) return false; // a side-effect import
    if (clause.isTypeOnly) return true;
    const named = clause.namedBindings;
    return !clause.name && named !== undefined && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
  }
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
}

const diskEdges = new Map();
/** The imports of a file on disk, from its top-level import and export-from declarations. */
function edgesOnDisk(file) {
  const mtime = statSync(file).mtimeMs;
  const cached = diskEdges.get(file);
  if (cached?.mtime === mtime) return cached.edges;
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  /** @type {Edge[]} */
  const edges = [];
  for (const node of source.statements) {
    if (!(ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) || !node.moduleSpecifier || !ts.isStringLiteral(node.moduleSpecifier)) continue;
    const to = resolveSpecifier(file, node.moduleSpecifier.text);
    if (to) edges.push({ to, typeOnly: tsTypeOnly(node) });
  }
  diskEdges.set(file, { mtime, edges });
  return edges;
}

/** The shortest way from `start` back to `target` inside `root` (file list), or undefined. */
function wayBack(start, target, root, valueOnly) {
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const { to, typeOnly } of edgesOnDisk(file)) {
      if ((valueOnly && typeOnly) || previous.has(to) || relative(root, to).startsWith('..')) continue;
      previous.set(to, file);
      if (to === target) {
        const way = [];
        for (let f = to; f !== undefined; f = previous.get(f)) way.unshift(f);
        return way;
      }
      queue.push(to);
    }
  }
  return undefined;
}

/** Whether an ESTree import or export declaration brings types alone (typescript-eslint's AST). */
function esTypeOnly(node) {
  if (node.importKind === 'type' || node.exportKind === 'type') return true;
  const specifiers = node.specifiers ?? [];
  return specifiers.length > 0 && specifiers.every((s) => s.importKind === 'type' || s.exportKind === 'type');
}

const noTypeCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'No import cycle inside a package, type-only imports included (import-x/no-cycle reports the value cycles)' },
    schema: [],
    messages: { cycle: 'Import cycle, type imports included: {{route}}. Move what both sides need into a module of its own.' },
  },
  create(context) {
    const file = context.physicalFilename;
    if (!existsSync(dirname(file))) return {};
    const root = packageRootOf(file);
    const check = (node) => {
      if (!node.source || typeof node.source.value !== 'string') return;
      const to = resolveSpecifier(file, node.source.value);
      if (!to || to === file || relative(root, to).startsWith('..')) return;
      const way = wayBack(to, file, root, false);
      if (!way) return;
      // A value import with a way back through value imports alone is import-x/no-cycle's report.
      if (!esTypeOnly(node) && wayBack(to, file, root, true)) return;
      const route = [file, ...way].map((f) => relative(root, f)).join(' → ');
      context.report({ node, messageId: 'cycle', data: { route } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};

export const importCycles = { meta: { name: 'import-cycles' }, rules: { 'no-type-cycle': noTypeCycle } };
