import type { Queryable } from '../../db/db.js';
import { newId } from '../../lib/ids.js';

/** The types Tolov sends; the seed's other subscribable types are never sent. */
export const SENT_EVENT_TYPES = ['order.paid', 'order.failed', 'order.expired', 'payment_intent.succeeded', 'payment_intent.failed'] as const;
export type EventType = (typeof SENT_EVENT_TYPES)[number];

export interface NewEvent {
  productId: string;
  livemode: boolean;
  type: EventType;
  /** The object as the API returns it at this moment; it never changes afterwards. */
  data: { id: string } & Record<string, unknown>;
}

/** Writes an event into the outbox, in the transaction of the state change it reports. */
export async function recordEvent(tx: Queryable, event: NewEvent): Promise<string> {
  const id = newId('evt');
  await tx.query('INSERT INTO events (id, product_id, livemode, type, object_id, data) VALUES ($1, $2, $3, $4, $5, $6)', [
    id,
    event.productId,
    event.livemode,
    event.type,
    event.data.id,
    JSON.stringify(event.data),
  ]);
  return id;
}
