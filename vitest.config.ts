import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

const postgresUrl = process.env.TOLOV_TEST_DATABASE_URL;
if (!postgresUrl) {
  process.stderr.write('TOLOV_TEST_DATABASE_URL is unset: the PostgreSQL project is skipped; the embedded (PGlite) project runs alone.\n');
}

/** Files whose subject the engine does not touch (how the pages look, the types made from the OpenAPI text): run once. */
const ENGINE_INDEPENDENT = ['test/web/screens.test.ts', 'test/sdk/openapi-types.test.ts'];

const engine = (name: 'pglite' | 'postgres') => ({
  extends: true as const,
  test: {
    name,
    env: { TOLOV_TEST_ENGINE: name },
    globalSetup: [`test/support/setup-${name}.ts`],
    ...(name === 'postgres' ? { exclude: [...configDefaults.exclude, ...ENGINE_INDEPENDENT] } : {}),
  },
});

export default defineConfig({
  // The packages' sources, as the repository's own code sees them (their dist/ is built only to pack them).
  resolve: { alias: { '@tolov/node': new URL('./packages/node/src/index.ts', import.meta.url).pathname } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A page or a worker reaches the state a test waits for in its own time, later on a machine running two files.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // Files wait on the database and on timers more than on the CPU: two at a time on a two-core machine too.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: postgresUrl ? [engine('pglite'), engine('postgres')] : [engine('pglite')],
  },
});
