// A product's payments per day, for the dashboard's overview: what came in, how many, how many were declined. Each
// read is one index range over the period's payments. The days before today change little (a late settlement, a
// reconciled debit), so they are kept ten minutes per product and mode; today is read afresh each time.
import type { Db } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { setNewest } from '../../lib/bounded-map.js';

export interface Day {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  succeededCount: number;
  /** In tiyin; a BigInt, since a day's sum may pass 2^53. */
  succeededAmount: bigint;
  failedCount: number;
}

export const ACTIVITY_DAYS = 30;
const PAST_KEPT_MS = 10 * 60_000;
const ENTRIES_MAX = 1_000;
const DAY_MS = 86_400_000;

export class PaymentActivity {
  private readonly past = new Map<string, { at: number; today: string; days: Day[] }>();

  constructor(private readonly db: Db) {}

  /** The last ACTIVITY_DAYS UTC days, oldest first, today included; days without payments are zeros. */
  async daily(merchant: Merchant, nowMs = Date.now()): Promise<Day[]> {
    const todayStart = Math.floor(nowMs / DAY_MS) * DAY_MS;
    const today = new Date(todayStart).toISOString().slice(0, 10);
    const key = `${merchant.productId}/${merchant.livemode}`;
    let kept = this.past.get(key);
    if (!kept || kept.today !== today || nowMs - kept.at >= PAST_KEPT_MS) {
      kept = { at: nowMs, today, days: await this.days(merchant, todayStart - (ACTIVITY_DAYS - 1) * DAY_MS, ACTIVITY_DAYS - 1) };
      setNewest(this.past, key, kept, ENTRIES_MAX);
    }
    return [...kept.days, ...(await this.days(merchant, todayStart, 1))];
  }

  /** `count` UTC days from the one starting at `fromMs`. */
  private async days(merchant: Merchant, fromMs: number, count: number): Promise<Day[]> {
    const rows = await this.db.query<{ day: string; succeeded_count: number; succeeded_amount: string; failed_count: number }>(
      `SELECT to_char(d.day AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
              count(p.id) FILTER (WHERE p.status = 'SUCCEEDED')::int AS succeeded_count,
              coalesce(sum(p.amount) FILTER (WHERE p.status = 'SUCCEEDED'), 0)::text AS succeeded_amount,
              count(p.id) FILTER (WHERE p.status = 'FAILED')::int AS failed_count
         FROM generate_series($3::timestamptz, $3::timestamptz + ($4 - 1) * interval '1 day', interval '1 day') AS d (day)
         LEFT JOIN payment_intents p
           ON p.product_id = $1 AND p.livemode = $2 AND p.created_at >= d.day AND p.created_at < d.day + interval '1 day'
        GROUP BY d.day ORDER BY d.day`,
      [merchant.productId, merchant.livemode, new Date(fromMs).toISOString(), count],
    );
    return rows.map((row) => ({ day: row.day, succeededCount: row.succeeded_count, succeededAmount: BigInt(row.succeeded_amount), failedCount: row.failed_count }));
  }
}
