import type { Reporter, TestModule } from 'vitest/node';
import { fatalReportLines } from './fatal-reports.js';

/**
 * Ends the run with one plain line, `tests: N passed, N failed, N skipped`, that any CI can read. A test that never
 * ended (its worker died under it) counts as failed, and its file is named, with the report the worker left as it died,
 * so that a CI log cut to its tail says where.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const unfinished = new Set<string>();
    for (const module of modules) {
      const failedBefore = counts.failed;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'skipped') counts.skipped++;
        else counts.failed++;
        if (state === 'pending') unfinished.add(`${module.project.name} ${module.relativeModuleId}`);
      }
      // A file that failed outside its tests (a hook, its loading) counts once, when none of its tests did.
      if (module.state() === 'failed' && counts.failed === failedBefore) counts.failed++;
    }
    for (const file of unfinished) process.stdout.write(`\nnever ended: ${file}`);
    for (const line of fatalReportLines()) process.stdout.write(`\n${line}`);
    process.stdout.write(`\ntests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
