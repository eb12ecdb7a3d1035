// ESLint flat config: typescript-eslint's recommended rules for every package, tests included, and the
// layering (docs/architecture.md): a service imports only @partner/shared and its own files, never
// another service; shared imports no service; the SDK and CLI import no server code. Inside shared,
// the floors (services/shared/README.md): config/ imports nothing of the project; domain/ only
// config/ and generated/ (no IO: no db/, nats/, grpc/, http/, net/, process/); telemetry/ only those;
// nothing but process/ imports process/. No package has an import cycle, type imports included
// (import-x/no-cycle, and import-cycles/no-type-cycle for the cycles only type imports close). Every
// import of a package is declared in the package.json of the workspace package that makes it
// (production code: in dependencies, since images install with --omit=dev).
// test/eslint-config.test.ts plants a violation of each rule and checks that lint fails.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import { servicePackages } from './scripts/lib/processes.mjs';
import { workspaceDirs } from './scripts/lib/workspaces.mjs';
import { importCycles } from './scripts/lib/eslint-import-cycles.mjs';

/** The service packages (services/<name>) that hold the registry's processes. */
const SERVICES = servicePackages();
/** Import patterns that reach into the named services (by package name or by a relative path). */
const reaching = (names) =>
  names.flatMap((n) => [`@partner/${n}`, `@partner/${n}/*`, `**/${n}/src/**`, `**/services/${n}/**`]);
/** Workspace packages (root package.json's globs, expanded), each with its own package.json for the dependency check. */
const WORKSPACES = workspaceDirs();
/** Files that never ship: tests and test helpers, which may import devDependencies. */
const DEV_FILES = ['**/*.test.ts', '**/*.test-helper.ts', '**/test/**', '**/scripts/**'];
/** An import of a package not declared in `packageDir`'s package.json fails (import-x/no-extraneous-dependencies). */
const declared = (files, packageDir, devDependencies) => ({
  files,
  plugins: { 'import-x': importX },
  rules: {
    'import-x/no-extraneous-dependencies': [
      'error',
      { packageDir, devDependencies, optionalDependencies: false, peerDependencies: false, includeTypes: false },
    ],
  },
});
const layer = (files, forbidden, message) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [{ group: forbidden, message }] }] },
});

const SHARED_NO_SERVICE = { group: reaching(SERVICES), message: 'shared imports no service' };
/**
 * Shared's floors, bottom up: config/ < domain/ < telemetry/ < the IO folders (db/, nats/, net/,
 * http/, grpc/, crypto/) < process/. A file imports only its own floor and those below. Each entry
 * repeats the no-service rule: the last config that sets no-restricted-imports for a file wins.
 * Tests may compose floors (a tracing test sends a span through NATS headers), so they are exempt.
 * The patterns are regexes over the specifier, relative ('../db/pg.js') or by package
 * ('@partner/shared/db/pg', '@partner/shared/grpc').
 */
const sharedFloor = (folder, pattern, message) => ({
  files: [`services/shared/src/${folder}/**/*.ts`],
  ignores: ['**/*.test.ts'],
  rules: { 'no-restricted-imports': ['error', { patterns: [SHARED_NO_SERVICE, { ...pattern, message }] }] },
});
const SHARED_FLOORS = [
  {
    files: ['services/shared/src/**/*.ts'],
    ignores: ['services/shared/src/process/**', '**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [SHARED_NO_SERVICE, { regex: '^(?:\\.\\./|@partner/shared/)process(?:/|$)', message: 'process/ starts processes from the floors below it: nothing below imports it' }] },
      ],
    },
  },
  sharedFloor('config', { regex: '^(?:\\.\\./|@partner/)' }, 'config/ is the ground floor: it imports nothing of the project'),
  sharedFloor('domain', { regex: `^(?:\\.\\./|@partner/shared/)(?!(?:config|domain|generated)/)` }, 'domain/ is free of IO: it imports only config/ and generated/ (not db/, nats/, grpc/, http/, net/, process/, crypto/, telemetry/)'),
  sharedFloor('telemetry', { regex: `^(?:\\.\\./|@partner/shared/)(?!(?:config|domain|generated|telemetry)/)` }, 'telemetry/ imports only config/, domain/ and generated/: the IO folders and process/ use it, not the other way'),
];

/**
 * import-x follows imports itself, and by default sees no edge through TypeScript: its resolver does
 * not map './foo.js' to foo.ts (NodeNext specifiers), and it parses only .js files. Its own resolver
 * (unrs-resolver) with the .js -> .ts alias, and .ts parsed by typescript-eslint, make every import
 * of a package an edge of the graph no-cycle walks (the settings of import-x's typescript preset).
 */
const RESOLVER = createNodeResolver({
  extensions: ['.ts', '.mjs', '.js', '.json', '.node'],
  extensionAlias: { '.js': ['.ts', '.js'], '.mjs': ['.mts', '.mjs'] },
});
/**
 * No import cycle inside any package (a cycle between packages cannot exist: the layering forbids it).
 * import-x/no-cycle skips type-only imports by design; import-cycles/no-type-cycle reports the
 * cycles that only they close (scripts/lib/eslint-import-cycles.mjs).
 */
const noCycle = {
  files: WORKSPACES.map((dir) => `${dir}/**/*.ts`),
  plugins: { 'import-x': importX, 'import-cycles': importCycles },
  settings: {
    'import-x/resolver-next': [RESOLVER],
    'import-x/extensions': ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'],
    'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.mts', '.cts'] },
  },
  rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }], 'import-cycles/no-type-cycle': 'error' },
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'services/shared/src/generated/**', 'charts/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  ...SERVICES.map((name) =>
    layer(
      [`services/${name}/**/*.ts`],
      reaching(SERVICES.filter((n) => n !== name)),
      `services talk over gRPC and NATS, never by importing each other: put what two services share in @partner/shared`,
    ),
  ),
  layer(['services/shared/**/*.ts'], reaching(SERVICES), 'shared imports no service'),
  // The partner console's browser code: plain ES modules the gateway serves as they are.
  { files: ['services/gateway/console/**/*.js'], languageOptions: { globals: { ...globals.browser } } },
  ...SHARED_FLOORS,
  layer(['sdk/**/*.ts'], [...reaching(SERVICES), '@partner/shared', '@partner/shared/*', '**/services/**'], 'the SDK and CLI are standalone: they import no server code'),
  // Root files (scripts, tests, bench) against the root package.json; each workspace package against
  // its own, production files against its dependencies only.
  declared(['**/*.{ts,js,mjs}'], '.', true),
  ...WORKSPACES.map((dir) => declared([`${dir}/**/*.{ts,js,mjs}`], dir, DEV_FILES.map((g) => `${dir}/${g}`))),
  noCycle,
);
