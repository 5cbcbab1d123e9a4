import type { Db } from '../db/types.js';
import { deleteExpiredKeys } from '../core/idempotency-keys.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 1_000;
const INTERVAL_MS = 60_000;

/** Deletes idempotency keys past their retention, a bounded batch at a time. */
export function idempotencyCleanup(db: Db): Worker {
  return {
    name: 'idempotency-cleanup',
    intervalMs: INTERVAL_MS,
    batchMax: BATCH_MAX,
    runOnce: () => deleteExpiredKeys(db, BATCH_MAX),
  };
}
