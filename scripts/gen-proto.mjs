// Generates TypeScript types for the protos into services/shared/src/generated (built, never
// committed). The flags mirror PROTO_LOADER_OPTIONS in services/shared/src/grpc/index.ts: keep them in step.
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const protoDir = join(root, 'proto');
const outDir = join(root, 'services/shared/src/generated');

const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.proto') ? [relative(protoDir, p)] : [];
  });

rmSync(outDir, { recursive: true, force: true });
execFileSync(
  join(root, 'node_modules/.bin/proto-loader-gen-types'),
  [
    '--longs=String',
    '--enums=String',
    '--defaults',
    '--oneofs',
    '--grpcLib=@grpc/grpc-js',
    '--importFileExtension=.js',
    `--includeDirs=${protoDir}`,
    `--outDir=${outDir}`,
    ...walk(protoDir),
  ],
  { stdio: ['ignore', 'ignore', 'inherit'] },
);
