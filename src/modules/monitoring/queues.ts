// The depths of the queues the workers drain, read for monitoring: each count uses the partial index its worker
// leases from, so reading them costs what one lease costs.
import type { Queryable } from '../../db/types.js';

export interface QueueDepths {
  /** Webhook deliveries due now. */
  webhook_deliveries_due: number;
  /** Payments awaiting the bank: debits, and captures or releases of holds, in flight or unclear and awaiting reconciliation. */
  payments_processing: number;
  /** Receipts not yet registered with the fiscal module. */
  receipts_pending: number;
  /** Payouts not yet sent, and sent but not yet settled. */
  payouts_pending: number;
  payouts_in_transit: number;
}

/**
 * The statement, exported for the test of its plan. A PROCESSING payment is a debit (its reconcile_after set, which
 * puts it in the reconciler's index) or a hold's end (its PENDING row in hold_ends): counted by status alone, the
 * count would read every payment's entry.
 */
export const QUEUE_DEPTHS_SQL = `
  SELECT (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now())::int AS webhook_deliveries_due,
         ((SELECT count(*) FROM payment_intents WHERE reconcile_after IS NOT NULL AND status = 'PROCESSING')
          + (SELECT count(*) FROM hold_ends WHERE status = 'PENDING'))::int AS payments_processing,
         (SELECT count(*) FROM receipts WHERE status = 'PENDING')::int AS receipts_pending,
         (SELECT count(*) FROM payouts WHERE status = 'PENDING')::int AS payouts_pending,
         (SELECT count(*) FROM payouts WHERE status = 'IN_TRANSIT')::int AS payouts_in_transit`;

export async function queueDepths(db: Queryable): Promise<QueueDepths> {
  const [row] = await db.query<QueueDepths>(QUEUE_DEPTHS_SQL);
  return row!;
}
