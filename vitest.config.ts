// Two projects: unit tests beside the code, and black-box system tests in test/ that start real
// services against real PostgreSQL, NATS JetStream, gRPC and HTTP. Sources run as TypeScript; the
// shared package resolves to its source so classes (DomainError) are one and the same everywhere.
import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

const shared = fileURLToPath(new URL('./services/shared/src/', import.meta.url));
const resolve = {
  alias: [
    { find: /^@partner\/shared\/grpc$/, replacement: `${shared}grpc/index.ts` },
    { find: /^@partner\/shared\/(.*)$/, replacement: `${shared}$1.ts` },
  ],
};

export default defineConfig({
  test: {
    // Build first (incremental): system tests spawn services from dist/, which must match src/.
    globalSetup: ['test/support/build.ts'],
    projects: [
      {
        resolve,
        test: {
          name: 'unit',
          include: ['services/*/src/**/*.test.ts', 'sdk/*/src/**/*.test.ts'],
          environment: 'node',
          sequence: { groupOrder: 0 },
        },
      },
      {
        resolve,
        test: {
          name: 'system',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          sequence: { groupOrder: 1 },
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Each file starts its own stack (own database, own NATS prefix); two at a time on 2 cores.
          maxWorkers: 2,
        },
      },
    ],
  },
});
