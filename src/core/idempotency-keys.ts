// The upkeep of the idempotency keys' table: locks left by a process that died, and keys past their retention.
import type { Queryable } from '../db/types.js';
import { IDEMPOTENCY_LOCK_TIMEOUT_MS } from './idempotency.js';

const IDEMPOTENCY_RETENTION_HOURS = 24;

/**
 * Unlocks every key at once, for a process that knows no other process is using the database: each lock left belongs
 * to a request of a process that died, whose client may retry now instead of after the lock lapses.
 */
export async function releaseAllLocks(db: Queryable): Promise<void> {
  await db.query('UPDATE idempotency_keys SET locked_at = NULL, lock_token = NULL WHERE locked_at IS NOT NULL');
}

/** Deletes at most `batchMax` keys past their retention, oldest first; returns how many. */
export async function deleteExpiredKeys(db: Queryable, batchMax: number): Promise<number> {
  const rows = await db.query(
    `DELETE FROM idempotency_keys k USING (
       SELECT product_id, livemode, key FROM idempotency_keys
        WHERE created_at < now() - $1 * interval '1 hour'
          -- A request still running on its key keeps it until it lets go or its lock lapses.
          AND (response_status IS NOT NULL OR locked_at IS NULL OR locked_at < now() - $3 * interval '1 millisecond')
        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED) expired
      WHERE k.product_id = expired.product_id AND k.livemode = expired.livemode AND k.key = expired.key
     RETURNING k.key`,
    [IDEMPOTENCY_RETENTION_HOURS, batchMax, IDEMPOTENCY_LOCK_TIMEOUT_MS],
  );
  return rows.length;
}
