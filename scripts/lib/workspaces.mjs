// The npm workspaces of the root package.json as directories: its `workspaces` are globs (services/*,
// sdk/*), expanded as npm expands them (every directory a pattern matches that holds a package.json),
// for what needs one entry per package: eslint.config.js (each package's dependency check) and the
// image's build-context test. Only a trailing `/*` is a pattern; any other entry is a directory.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The workspace package directories, relative to the repository, in the order of the patterns and by
 * name within one.
 * @returns {string[]}
 */
export function workspaceDirs() {
  /** @type {string[]} */
  const patterns = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).workspaces;
  return patterns.flatMap((pattern) => {
    if (!pattern.endsWith('/*')) return [pattern];
    const parent = pattern.slice(0, -2);
    return readdirSync(join(ROOT, parent), { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(join(ROOT, parent, e.name, 'package.json')))
      .map((e) => `${parent}/${e.name}`)
      .sort();
  });
}
