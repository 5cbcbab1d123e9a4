// `npm run reconcile -- 2026-11-22 [live|test]`: the reconciliation report of a UTC day, printed as JSON, with exit
// code 1 when there are mismatches (for cron and alerting).
import { ConfigError, loadConfig } from '../config.js';
import { openDb } from '../db/db.js';
import { FolderInUseError } from '../db/folder-lock.js';
import { migrate } from '../db/migrate.js';
import { isReportDay, ReconciliationService, REPORT_DAY_RULE } from '../modules/reconciliation/service.js';
import { createFiscalModules, createRails } from '../rails/index.js';

const [date = new Date().toISOString().slice(0, 10), mode = 'live'] = process.argv.slice(2);
if (!isReportDay(date) || (mode !== 'live' && mode !== 'test')) {
  process.stderr.write(`usage: npm run reconcile -- [YYYY-MM-DD] [live|test]: the day is ${REPORT_DAY_RULE}\n`);
  process.exit(2);
}
let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`reconcile: ${error.message}\n`);
    process.exit(2);
  }
  throw error;
}
let db;
try {
  db = await openDb(config);
} catch (error) {
  if (error instanceof FolderInUseError) {
    // Most often the service itself, which answers the same report over its operator API.
    process.stderr.write(`reconcile: ${error.message}. If it is Tolov, ask it instead: ` +
      `GET /admin/v1/reconciliation?date=${date}&mode=${mode} with the operator token.\n`);
    process.exit(2);
  }
  throw error;
}
try {
  await migrate(db);
  const report = await new ReconciliationService(db, createRails(db, config), createFiscalModules(db, config)).report(date, mode === 'live');
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  process.exitCode = report.mismatches.length > 0 || (report.receipts?.mismatches.length ?? 0) > 0 || report.receipts?.error ? 1 : 0;
} finally {
  await db.close();
}
