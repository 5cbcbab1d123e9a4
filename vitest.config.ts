import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { fatalReportFlags } from './test/support/fatal-reports.js';

const postgresUrl = process.env.TOLOV_TEST_DATABASE_URL;
if (!postgresUrl) {
  process.stderr.write('TOLOV_TEST_DATABASE_URL is unset: the PostgreSQL project is skipped; the embedded (PGlite) project runs alone.\n');
}

/**
 * Files whose subject the engine does not touch: the pages in a browser, the SDK's types and packages, the CLI and the
 * docs' samples, each over the HTTP API that the other files test on both engines. They run once: on the PostgreSQL
 * server when there is one (it leaves the machine's cores to the browser), on the embedded engine otherwise.
 */
const ENGINE_INDEPENDENT = [
  'test/web/screens.test.ts',
  'test/web/pay-page.test.ts',
  'test/web/bind-page.test.ts',
  'test/web/dashboard.test.ts',
  'test/web/api-reference.test.ts',
  'test/web/widths.test.ts',
  'test/web/localized.test.ts',
  'test/web/receipt-page.test.ts',
  'test/platform/api-examples.test.ts',
  'test/sdk/openapi-types.test.ts',
  'test/sdk/package.test.ts',
  'test/cli/cli.test.ts',
  'test/cli/follow.test.ts',
  'test/cli/payment-links.test.ts',
  'test/docs/samples.test.ts',
  'test/platform/deployment.test.ts',
  'test/payment-links/page-browser.test.ts',
  'test/dashboard/payment-links-browser.test.ts',
  'test/dashboard/holds-browser.test.ts',
];

const engine = (name: 'pglite' | 'postgres') => ({
  extends: true as const,
  test: {
    name,
    env: { TOLOV_TEST_ENGINE: name },
    globalSetup: [`test/support/setup-${name}.ts`],
    ...(name === 'pglite' && postgresUrl ? { exclude: [...configDefaults.exclude, ...ENGINE_INDEPENDENT] } : {}),
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
    // A worker that dies (out of memory) leaves a report of where it was; the summary prints it.
    execArgv: fatalReportFlags(),
    setupFiles: ['test/support/running-test.ts'],
    // Files share their worker's loaded modules: each file's state is its own (its services, databases and processes,
    // closed by its hooks), and loading the service afresh for every file cost a quarter of the suite's time.
    isolate: false,
    // Files wait on the database and on timers more than on the CPU: two at a time on a two-core machine too.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: postgresUrl ? [engine('pglite'), engine('postgres')] : [engine('pglite')],
  },
});
