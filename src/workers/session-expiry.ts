import type { Db } from '../db/db.js';
import { expireDueSessions } from '../modules/checkout/store.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 500;

/** Marks open card-binding sessions past their time EXPIRED (reads apply the same rule before this runs). */
export function sessionExpiry(db: Db, intervalMs: number): Worker {
  return {
    name: 'session-expiry',
    intervalMs,
    batchMax: BATCH_MAX,
    runOnce: () => expireDueSessions(db, BATCH_MAX),
  };
}
