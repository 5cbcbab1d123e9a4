import type { Queryable } from '../../db/db.js';
import { Statement } from '../../db/statement.js';
import { newId } from '../../lib/ids.js';

/** The types Tolov sends. */
export const SENT_EVENT_TYPES = ['order.paid', 'order.failed', 'order.expired', 'payment_intent.succeeded', 'payment_intent.failed'] as const;
export type EventType = (typeof SENT_EVENT_TYPES)[number];

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
export async function recordEvent(tx: Queryable, event: NewEvent): Promise<void> {
  const st = new Statement();
  addEvent(st, event);
  await st.run(tx, 'SELECT 1');
}

/** Adds the writes of `recordEvent` to `st`; only if `guard` (an expression of the statement) has a row, when given. */
export function addEvent(st: Statement, event: NewEvent, guard: string | null = null): void {
  st.with(
    'event_e',
    `INSERT INTO events (id, product_id, livemode, type, object_id, data)
     SELECT ${st.param(newId('evt'))}, ${st.param(event.productId)}, ${st.param(event.livemode, 'boolean')}, ${st.param(event.type)},
            ${st.param(event.data.id)}, ${st.param(JSON.stringify(event.data), 'jsonb')}${guard === null ? '' : ` FROM ${guard}`}
     RETURNING id, product_id, livemode, type`,
  );
  st.with(
    'event_d',
    `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, next_attempt_at)
     SELECT 'wd_' || replace(gen_random_uuid()::text, '-', ''), w.id, e.id, 'pending', now()
       FROM event_e e JOIN webhook_endpoints w
         ON w.product_id = e.product_id AND w.livemode = e.livemode AND w.status = 'enabled'
        AND (cardinality(w.enabled_events) = 0 OR e.type = ANY (w.enabled_events))`,
  );
}
