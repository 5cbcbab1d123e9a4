import type { Db } from '../db/types.js';
import { IDEMPOTENCY_RETENTION_HOURS } from '../core/idempotency.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 1_000;
const INTERVAL_MS = 60_000;

/** Deletes idempotency keys past their retention, a bounded batch at a time. */
export function idempotencyCleanup(db: Db): Worker {
  return {
    name: 'idempotency-cleanup',
    intervalMs: INTERVAL_MS,
    batchMax: BATCH_MAX,
    async runOnce() {
      const rows = await db.query(
        `DELETE FROM idempotency_keys WHERE id IN (
           SELECT id FROM idempotency_keys WHERE created_at < now() - $1 * interval '1 hour'
            ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING id`,
        [IDEMPOTENCY_RETENTION_HOURS, BATCH_MAX],
      );
      return rows.length;
    },
  };
}
