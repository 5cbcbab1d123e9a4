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
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: postgresUrl ? [engine('pglite'), engine('postgres')] : [engine('pglite')],
  },
});
