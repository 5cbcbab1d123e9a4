// The event outbox: an event is written in the same transaction as the change it reports, with a pending
// delivery for each endpoint that wants it; the delivery worker sends them after the commit.
import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { newId } from '../../core/ids.js';
import type { Listed } from '../../core/pagination.js';

export interface EventRow {
  id: string;
  type: string;
  livemode: boolean;
  created_at: Date;
  data: unknown;
}

const EVENT_COLUMNS = 'id, type, livemode, created_at, data';
/** What a merchant's list of events reads. */
export const EVENT_LIST: Listed = { table: 'events', columns: EVENT_COLUMNS };

export async function findEvent(db: Queryable, merchant: Merchant, id: string): Promise<EventRow | undefined> {
  const [row] = await db.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE id = $1 AND product_id = $2 AND livemode = $3`, [
    id,
    merchant.productId,
    merchant.livemode,
  ]);
  return row;
}

/** The types Tolov sends. */
export const SENT_EVENT_TYPES = [
  'order.paid',
  'order.failed',
  'order.expired',
  'payment_intent.succeeded',
  'payment_intent.failed',
  'payment_intent.requires_capture',
  'payment_intent.hold_released',
  'receipt.fiscalized',
  'receipt.failed',
  'payout_account.updated',
  'payout.paid',
  'payout.failed',
] as const;
export type EventType = (typeof SENT_EVENT_TYPES)[number];

/** The type of the event the dashboard's "Send test event" sends, to one endpoint alone. */
export const TEST_EVENT_TYPE = 'webhook_endpoint.test';

/** What an endpoint may subscribe to: the types sent, and those the interface names as subscribable but never sent. */
export const SUBSCRIBABLE_EVENT_TYPES = [
  ...SENT_EVENT_TYPES,
  'payment_intent.canceled',
  'refund.succeeded',
  'card.created',
  'card.deleted',
  'checkout_session.completed',
  'checkout_session.expired',
] as const;

export interface NewEvent {
  productId: string;
  livemode: boolean;
  type: EventType;
  /** The object as the API returns it at this moment; it never changes afterwards. */
  data: { id: string } & Record<string, unknown>;
}

/**
 * Writes an event into the outbox, in the transaction of the state change it reports, and in the same statement one
 * pending delivery for each enabled endpoint of the product and mode that subscribes to the type (none: every type).
 */
export function recordEvent(tx: Transaction, event: NewEvent): void {
  tx.write(
    `WITH e AS (
       INSERT INTO events (id, product_id, livemode, type, object_id, data) VALUES ($1, $2, $3, $4, $5, $6::json)
       RETURNING id, product_id, livemode, type)
     INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, next_attempt_at)
     SELECT 'wd_' || replace(gen_random_uuid()::text, '-', ''), w.id, e.id, 'pending', now()
       FROM e JOIN webhook_endpoints w
         ON w.product_id = e.product_id AND w.livemode = e.livemode AND w.status = 'enabled'
        AND (cardinality(w.enabled_events) = 0 OR e.type = ANY (w.enabled_events))`,
    [newId('evt'), event.productId, event.livemode, event.type, event.data.id, JSON.stringify(event.data)],
  );
}

/**
 * A place in a product's stream of events: after the event written by transaction `txid` with sequence `seq`. Events
 * are streamed in (txid, seq) order, and only once every transaction before them has ended (see migration 015).
 */
export interface StreamCursor {
  txid: string;
  seq: number;
}

export type StreamedRow = EventRow & { txid: string; seq: number };

/** Where a stream that starts now begins: after every transaction that ended. */
export async function streamStart(db: Queryable): Promise<StreamCursor> {
  const [row] = await db.query<{ xmin: string }>('SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin');
  return { txid: row!.xmin, seq: -1 };
}

/** The place just after one of the merchant's events; undefined if it has none such (or it was written before streams). */
export async function streamCursorAfter(db: Queryable, merchant: Merchant, eventId: string): Promise<StreamCursor | undefined> {
  const [row] = await db.query<{ txid: string | null; seq: number }>(
    'SELECT txid::text AS txid, seq FROM events WHERE id = $1 AND product_id = $2 AND livemode = $3',
    [eventId, merchant.productId, merchant.livemode],
  );
  if (!row) return undefined;
  return row.txid === null ? streamStart(db) : { txid: row.txid, seq: row.seq };
}

/**
 * The next events after `cursor`, at most `limit`, with the oldest transaction still running when they were read
 * (`xmin`): only those written by a transaction before it are final; the rest wait for it to end.
 */
export async function readStream(db: Queryable, merchant: Merchant, cursor: StreamCursor, limit: number): Promise<{ xmin: string; rows: StreamedRow[] }> {
  const rows = await db.query<Partial<StreamedRow> & { xmin: string }>(
    `SELECT s.xmin, e.* FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin) s
       LEFT JOIN LATERAL (
         SELECT ${EVENT_COLUMNS}, txid::text AS txid, seq FROM events
          WHERE product_id = $1 AND livemode = $2 AND (txid, seq) > ($3::xid8, $4::bigint)
          ORDER BY txid, seq LIMIT $5) e ON true`,
    [merchant.productId, merchant.livemode, cursor.txid, cursor.seq, limit],
  );
  return { xmin: rows[0]!.xmin, rows: rows.filter((row): row is StreamedRow & { xmin: string } => row.id != null) };
}
