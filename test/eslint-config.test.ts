// The lint rules that keep the structure (eslint.config.js) fail on a planted violation and pass on
// clean code: shared's floors (domain/ free of IO, config/ importing nothing of the project, nothing
// below process/ importing it) and no import cycle in a package, through value imports
// (import-x/no-cycle) or type imports (import-cycles/no-type-cycle). Run through ESLint's Node API
// with the repository's own config, as `npm run lint` runs it.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

/** The rules a text breaks, linted as if it were the file at `path` (relative to the repository). */
async function broken(path: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: join(ROOT, path) });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe("shared's floors", () => {
  it('domain/ imports no IO folder, by a relative path or by the package name', async () => {
    for (const specifier of ['../db/pg.js', '../nats/client.js', '../grpc/client.js', '../http/ops-server.js', '../net/webhook-targets.js', '../process/start.js', '@partner/shared/db/pg', '@partner/shared/grpc']) {
      const problems = await broken('services/shared/src/domain/planted.ts', `import * as m from '${specifier}';\nexport const x = m;\n`);
      expect(problems, specifier).toEqual([expect.stringMatching(/^no-restricted-imports: .*domain\/ is free of IO/)]);
    }
  });

  it('domain/ may import config/, generated/ and itself', async () => {
    const clean = [
      "import { EnvReader } from '../config/env.js';",
      "import type { Job__Output } from '../generated/partner/job/v1/Job.js';",
      "import { DomainError } from './errors.js';",
      'export const x: [typeof EnvReader, Job__Output | undefined, typeof DomainError] = [EnvReader, undefined, DomainError];',
    ].join('\n');
    expect(await broken('services/shared/src/domain/planted.ts', `${clean}\n`)).toEqual([]);
  });

  it('config/ imports nothing of the project', async () => {
    expect(await broken('services/shared/src/config/planted.ts', "import { DomainError } from '../domain/errors.js';\nexport const x = DomainError;\n")).toEqual([
      expect.stringMatching(/^no-restricted-imports: .*config\/ is the ground floor/),
    ]);
    expect(await broken('services/shared/src/config/planted.ts', "import { DEFAULT_DB_TIMEOUTS } from './db-timeouts.js';\nexport const x = DEFAULT_DB_TIMEOUTS;\n")).toEqual([]);
  });

  it('nothing below process/ imports it; telemetry/ imports no IO folder', async () => {
    expect(await broken('services/shared/src/nats/planted.ts', "import { startProcess } from '../process/start.js';\nexport const x = startProcess;\n")).toEqual([
      expect.stringMatching(/^no-restricted-imports: .*nothing below imports it/),
    ]);
    expect(await broken('services/shared/src/telemetry/planted.ts', "import { createPool } from '../db/pg.js';\nexport const x = createPool;\n")).toEqual([
      expect.stringMatching(/^no-restricted-imports: .*telemetry\/ imports only/),
    ]);
  });

  it('shared still imports no service, in domain/ as elsewhere', async () => {
    // (import-x/no-extraneous-dependencies objects as well: shared does not depend on auth.)
    expect(await broken('services/shared/src/domain/planted.ts', "import { x } from '@partner/auth/app';\nexport const y = x;\n")).toContainEqual(
      expect.stringMatching(/^no-restricted-imports: .*shared imports no service/),
    );
  });
});

describe('import cycles', () => {
  // Planted files on disk, in a package (the cycle rules follow imports from file to file).
  // Named so that the tests walking the sources skip it (isPlantedFixture).
  const dir = join(ROOT, 'services', 'worker', 'src', `lint-fixture-${process.pid}`);
  const plant = (files: Record<string, string>) => {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  };
  const lint = async (name: string) => {
    const [result] = await eslint.lintFiles([join(dir, name)]);
    return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
  };

  beforeAll(() => {
    mkdirSync(dir, { recursive: true });
    plant({
      'value-a.ts': "import { b } from './value-b.js';\nexport const a = (): number => b() + 1;\n",
      'value-b.ts': "import { a } from './value-a.js';\nexport const b = (): number => (a ? 1 : 0);\n",
      'type-c.ts': "import type { D } from './type-d.js';\nexport interface C {\n  d?: D;\n}\n",
      'type-d.ts': "import type { C } from './type-c.js';\nexport interface D {\n  c?: C;\n}\n",
      'clean-e.ts': "import { f, type F } from './clean-f.js';\nexport const e: F = f;\n",
      'clean-f.ts': 'export type F = number;\nexport const f: F = 1;\n',
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a cycle of value imports fails (import-x/no-cycle), on both sides', async () => {
    expect(await lint('value-a.ts')).toEqual(['import-x/no-cycle: Dependency cycle detected']);
    expect(await lint('value-b.ts')).toEqual(['import-x/no-cycle: Dependency cycle detected']);
  });

  it('a cycle of type imports fails too (import-cycles/no-type-cycle), naming the route', async () => {
    expect(await lint('type-c.ts')).toEqual([expect.stringMatching(/^import-cycles\/no-type-cycle: Import cycle, type imports included: src\/lint-fixture-\d+\/type-c\.ts → src\/lint-fixture-\d+\/type-d\.ts → src\/lint-fixture-\d+\/type-c\.ts\./)]);
    expect(await lint('type-d.ts')).toEqual([expect.stringMatching(/^import-cycles\/no-type-cycle: /)]);
  });

  it('imports without a way back pass', async () => {
    expect(await lint('clean-e.ts')).toEqual([]);
    expect(await lint('clean-f.ts')).toEqual([]);
  });
});
