import type { Queryable } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import type { Listed } from '../../core/pagination.js';

export interface NewEntry {
  id: string;
  productId: string;
  livemode: boolean;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  idempotencyKey: string | null;
  at: Date;
}

export interface EntryRow {
  id: string;
  livemode: boolean;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  idempotency_key: string | null;
  created_at: Date;
}

const COLUMNS = 'id, livemode, method, path, status, duration_ms, idempotency_key, created_at';
export const REQUEST_LOG_LIST: Listed = { table: 'request_log', columns: COLUMNS };

/** Writes a batch of entries in one statement. */
export async function insertEntries(db: Queryable, entries: NewEntry[]): Promise<void> {
  const column = <T>(of: (entry: NewEntry) => T) => entries.map(of);
  await db.query(
    `INSERT INTO request_log (id, product_id, livemode, method, path, status, duration_ms, idempotency_key, created_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::text[], $6::smallint[], $7::integer[], $8::text[], $9::timestamptz[])`,
    [
      column((e) => e.id),
      column((e) => e.productId),
      column((e) => e.livemode),
      column((e) => e.method),
      column((e) => e.path),
      column((e) => e.status),
      column((e) => e.durationMs),
      column((e) => e.idempotencyKey),
      column((e) => e.at.toISOString()),
    ],
  );
}

/** Deletes all but the latest `kept` entries of each product and mode given, latest in the order the log is listed. */
export async function trim(db: Queryable, pairs: Array<{ productId: string; livemode: boolean }>, kept: number): Promise<void> {
  await db.query(
    `DELETE FROM request_log r USING (
       SELECT t.product_id, t.livemode, x.created_at, x.seq
         FROM unnest($1::text[], $2::boolean[]) AS t (product_id, livemode)
         JOIN LATERAL (SELECT created_at, seq FROM request_log x WHERE x.product_id = t.product_id AND x.livemode = t.livemode
                        ORDER BY created_at DESC, seq DESC OFFSET $3 LIMIT 1) x ON true) f
      WHERE r.product_id = f.product_id AND r.livemode = f.livemode AND (r.created_at, r.seq) <= (f.created_at, f.seq)`,
    [pairs.map((pair) => pair.productId), pairs.map((pair) => pair.livemode), kept],
  );
}

/** The entries right after the merchant's entry `id`, at most `limit`, oldest first; undefined if `id` is not one. */
export async function entriesAfter(db: Queryable, merchant: Merchant, id: string, limit: number): Promise<EntryRow[] | undefined> {
  const [cursor] = await db.query<{ created: string; seq: number }>(
    'SELECT created_at::text AS created, seq FROM request_log WHERE id = $1 AND product_id = $2 AND livemode = $3',
    [id, merchant.productId, merchant.livemode],
  );
  if (!cursor) return undefined;
  return db.query<EntryRow>(
    `SELECT ${COLUMNS} FROM request_log WHERE product_id = $1 AND livemode = $2 AND (created_at, seq) > ($3::timestamptz, $4)
      ORDER BY created_at, seq LIMIT $5`,
    [merchant.productId, merchant.livemode, cursor.created, cursor.seq, limit],
  );
}
