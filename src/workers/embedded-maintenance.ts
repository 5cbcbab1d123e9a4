import type { Db } from '../db/db.js';
import type { Worker } from './loop.js';

const INTERVAL_MS = 5 * 60 * 1000;
const VACUUM_EVERY_RUNS = 12;

/**
 * The embedded engine has no autovacuum: without fresh statistics the planner keeps its empty-table estimates and
 * sorts a merchant's whole history for each page of a list. This keeps statistics fresh (ANALYZE at start and every
 * five minutes) and reclaims dead rows hourly (VACUUM). PostgreSQL servers do both on their own.
 */
export function embeddedMaintenance(db: Db): Worker {
  let runs = 0;
  return {
    name: 'embedded-maintenance',
    intervalMs: INTERVAL_MS,
    batchMax: 1,
    async runOnce() {
      runs += 1;
      await db.exec(runs % VACUUM_EVERY_RUNS === 0 ? 'VACUUM (ANALYZE)' : 'ANALYZE');
      return 0;
    },
  };
}
