// ESLint flat config: typescript-eslint's recommended rules for every package, tests included, and the
// layering (docs/architecture.md): a service imports only @partner/shared and its own files, never
// another service; shared imports no service; the SDK and CLI import no server code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { servicePackages } from './scripts/lib/processes.mjs';

/** The service packages (services/<name>) that hold the registry's processes. */
const SERVICES = servicePackages();
/** Import patterns that reach into the named services (by package name or by a relative path). */
const reaching = (names) =>
  names.flatMap((n) => [`@partner/${n}`, `@partner/${n}/*`, `**/${n}/src/**`, `**/services/${n}/**`]);
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
);
