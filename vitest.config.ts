import { defineConfig } from 'vitest/config';

const postgresUrl = process.env.TOLOV_TEST_DATABASE_URL;
if (!postgresUrl) {
  process.stderr.write('TOLOV_TEST_DATABASE_URL is unset: the PostgreSQL project is skipped; the embedded (PGlite) project runs alone.\n');
}

const engine = (name: 'pglite' | 'postgres') => ({
  extends: true as const,
  test: { name, env: { TOLOV_TEST_ENGINE: name }, globalSetup: [`test/support/setup-${name}.ts`] },
});

export default defineConfig({
  // The packages' sources, as the repository's own code sees them (their dist/ is built only to pack them).
  resolve: { alias: { '@tolov/node': new URL('./packages/node/src/index.ts', import.meta.url).pathname } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: postgresUrl ? [engine('pglite'), engine('postgres')] : [engine('pglite')],
  },
});
