// Throttle rows: one per guarded subject, read and written under its row lock.
import type { Queryable, Transaction } from '../../db/types.js';

export interface ThrottleRow {
  hits: number;
  window_start: Date;
  next_at: Date;
  /** The database's clock, so that every process judges by the same one. */
  now: Date;
}

/** The subject's row, made if new, locked until the transaction ends: of two turns taken at once, one waits. */
export async function lockThrottle(tx: Transaction, key: string): Promise<ThrottleRow> {
  const [row] = await tx.query<ThrottleRow>(
    `INSERT INTO throttles (key, window_start, hits, next_at, expires_at) VALUES ($1, now(), 0, now(), now())
     ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key
     RETURNING hits, window_start, next_at, now() AS now`,
    [key],
  );
  return row!;
}

export async function saveThrottle(tx: Transaction, key: string, row: { hits: number; windowStart: Date; nextAt: Date; expiresAt: Date }): Promise<void> {
  await tx.query('UPDATE throttles SET hits = $2, window_start = $3, next_at = $4, expires_at = $5 WHERE key = $1', [
    key,
    row.hits,
    row.windowStart,
    row.nextAt,
    row.expiresAt,
  ]);
}

/** Gives one turn back to the window it was taken in; a window since begun keeps its count. */
export async function giveBack(db: Queryable, key: string, windowStart: Date): Promise<void> {
  await db.query('UPDATE throttles SET hits = hits - 1 WHERE key = $1 AND hits > 0 AND window_start = $2', [key, windowStart]);
}

export async function clearThrottle(db: Queryable, key: string): Promise<void> {
  await db.query('DELETE FROM throttles WHERE key = $1', [key]);
}

/** Deletes rows that hold nothing back any more, a bounded batch. */
export async function deleteExpired(db: Queryable, batchMax: number): Promise<number> {
  const rows = await db.query(
    `DELETE FROM throttles WHERE key IN (SELECT key FROM throttles WHERE expires_at < now() LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING 1`,
    [batchMax],
  );
  return rows.length;
}
