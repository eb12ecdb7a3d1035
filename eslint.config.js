// ESLint flat config: typescript-eslint's recommended rules for every package, tests included, and the
// layering (docs/architecture.md): a service imports only @partner/shared and its own files, never
// another service; shared imports no service; the SDK and CLI import no server code. Every import of
// a package is declared in the package.json of the workspace package that makes it (production code:
// in dependencies, since images install with --omit=dev).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import importX from 'eslint-plugin-import-x';
import { servicePackages } from './scripts/lib/processes.mjs';
import { workspaceDirs } from './scripts/lib/workspaces.mjs';

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
  layer(['sdk/**/*.ts'], [...reaching(SERVICES), '@partner/shared', '@partner/shared/*', '**/services/**'], 'the SDK and CLI are standalone: they import no server code'),
  // Root files (scripts, tests, bench) against the root package.json; each workspace package against
  // its own, production files against its dependencies only.
  declared(['**/*.{ts,js,mjs}'], '.', true),
  ...WORKSPACES.map((dir) => declared([`${dir}/**/*.{ts,js,mjs}`], dir, DEV_FILES.map((g) => `${dir}/${g}`))),
);
