// The money checks' queries: each finds what breaks one rule, at most `limit` rows of it.
import type { Queryable } from '../../db/types.js';

/** The ledger's total per mode, as text so that it is exact (zero when every posting balanced). */
export function ledgerTotals(db: Queryable) {
  return db.query<{ livemode: boolean; total: string }>(
    `SELECT livemode, sum(amount)::text AS total FROM ledger_entries GROUP BY livemode HAVING sum(amount) <> 0`,
  );
}

/** Ledger transactions whose entries do not sum to zero. */
export function unbalancedTransactions(db: Queryable, limit: number) {
  return db.query<{ transaction_id: string; product_id: string; livemode: boolean; total: string }>(
    `SELECT transaction_id, min(product_id) AS product_id, bool_or(livemode) AS livemode, sum(amount)::text AS total
       FROM ledger_entries GROUP BY transaction_id HAVING sum(amount) <> 0 LIMIT $1`,
    [limit],
  );
}

export interface ProductMoney {
  product_id: string;
  livemode: boolean;
  available: string;
  pending: string;
  statement_available: string;
  statement_pending: string;
  /** Σ succeeded amounts − fees − succeeded refunds − payouts not FAILED or CANCELED. */
  expected: string;
}

/**
 * Each product's balance three ways: the ledger's balance rows, its statement's rows, and the identity of its
 * payments, refunds and payouts. Only products with money are read.
 */
export function productMoney(db: Queryable) {
  return db.query<ProductMoney>(
    `WITH ledger AS (
       SELECT product_id, livemode, sum(amount) FILTER (WHERE account = 'merchant_available') AS available,
              sum(amount) FILTER (WHERE account = 'merchant_pending') AS pending
         FROM ledger_balances WHERE account IN ('merchant_available', 'merchant_pending') GROUP BY product_id, livemode),
     statement AS (
       SELECT product_id, livemode, sum(net) FILTER (WHERE status = 'available') AS available, sum(net) FILTER (WHERE status = 'pending') AS pending
         FROM balance_transactions GROUP BY product_id, livemode),
     charged AS (SELECT product_id, livemode, sum(amount - fee) AS total FROM payment_intents WHERE status = 'SUCCEEDED' GROUP BY product_id, livemode),
     refunded AS (SELECT product_id, livemode, sum(amount) AS total FROM refunds WHERE status = 'SUCCEEDED' GROUP BY product_id, livemode),
     paid_out AS (SELECT product_id, livemode, sum(amount) AS total FROM payouts WHERE status NOT IN ('FAILED', 'CANCELED') GROUP BY product_id, livemode)
     SELECT l.product_id, l.livemode,
            coalesce(l.available, 0)::text AS available, coalesce(l.pending, 0)::text AS pending,
            coalesce(s.available, 0)::text AS statement_available, coalesce(s.pending, 0)::text AS statement_pending,
            (coalesce(c.total, 0) - coalesce(r.total, 0) - coalesce(p.total, 0))::text AS expected
       FROM ledger l
       LEFT JOIN statement s USING (product_id, livemode)
       LEFT JOIN charged c USING (product_id, livemode)
       LEFT JOIN refunded r USING (product_id, livemode)
       LEFT JOIN paid_out p USING (product_id, livemode)`,
  );
}

/** When each table's objects went to the bank (or were made): a payment intent's debit may follow its creation by days. */
const SINCE = {
  payment_intents: 'coalesce(debit_started_at, created_at)',
  refunds: 'created_at',
  hold_ends: 'created_at',
  receipts: 'created_at',
  payouts: 'coalesce(sent_at, created_at)',
} as const;

/** A held payment PROCESSING is waiting for its capture or release, which hold_ends dates and lists. */
const OWN_PHASE: Partial<Record<keyof typeof SINCE, string>> = { payment_intents: 'held_at IS NULL' };

/**
 * Objects of `table` in `status` since over `olderThanSeconds` ago, oldest first; with `withinDays`, only those since
 * within that many days (a final status stays listed that long, an open one for as long as it lasts).
 */
export function stuck(
  db: Queryable,
  table: keyof typeof SINCE,
  query: { status: string; olderThanSeconds: number; withinDays: number | null; limit: number },
) {
  const since = SINCE[table];
  return db.query<{ id: string; product_id: string; livemode: boolean; created_at: Date }>(
    `SELECT id, product_id, livemode, ${since} AS created_at FROM ${table}
      WHERE status = $1 AND ${since} < now() - $2 * interval '1 second' AND ($3::int IS NULL OR ${since} > now() - $3 * interval '1 day')
        AND ${OWN_PHASE[table] ?? 'true'}
      ORDER BY ${since} LIMIT $4`,
    [query.status, query.olderThanSeconds, query.withinDays, query.limit],
  );
}

/** Enabled endpoints whose every attempt for at least the last day failed: a failure a day old, no success since. */
export function failingEndpoints(db: Queryable, limit: number) {
  return db.query<{ id: string; product_id: string; livemode: boolean; url: string; failing_since: Date }>(
    `SELECT e.id, e.product_id, e.livemode, e.url, f.failing_since
       FROM webhook_endpoints e
       CROSS JOIN LATERAL (
         SELECT min(a.attempted_at) AS failing_since FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id
          WHERE d.endpoint_id = e.id AND a.attempted_at > coalesce((
            SELECT max(s.attempted_at) FROM webhook_deliveries sd JOIN webhook_attempts s ON s.delivery_id = sd.id
             WHERE sd.endpoint_id = e.id AND s.status_code BETWEEN 200 AND 299), '-infinity')) f
      WHERE e.status = 'enabled' AND f.failing_since < now() - interval '1 day'
      ORDER BY f.failing_since LIMIT $1`,
    [limit],
  );
}
