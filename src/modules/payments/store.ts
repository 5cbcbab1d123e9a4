import type { Queryable } from '../../db/db.js';
import { Statement } from '../../db/statement.js';
import type { Merchant } from '../../http/auth.js';
import type { Metadata, IntentStatus } from './schema.js';

export interface IntentRow {
  id: string;
  product_id: string;
  livemode: boolean;
  amount: number;
  fee: number;
  currency: 'UZS';
  status: IntentStatus;
  failure_code: string | null;
  card_id: string | null;
  rail_token: string;
  order_id: string | null;
  rail: 'uzcard' | 'humo';
  description: string | null;
  metadata: Metadata;
  amount_refunded: number;
  reconcile_count: number;
  succeeded_at: Date | null;
  created_at: Date;
}

export interface NewIntent {
  id: string;
  amount: number;
  fee: number;
  status: 'REQUIRES_PAYMENT' | 'PROCESSING';
  /** A saved card, or null for an order paid with a card captured by its session. */
  cardId: string | null;
  orderId: string | null;
  railToken: string;
  rail: 'uzcard' | 'humo';
  description: string | null;
  metadata: Metadata;
  /** For PROCESSING: how long the debit may be in flight before reconciliation may look. */
  inFlightMs: number | null;
}

export async function insertIntent(tx: Queryable, merchant: Pick<Merchant, 'productId' | 'livemode'>, intent: NewIntent): Promise<IntentRow> {
  const [row] = await tx.query<IntentRow>(
    `INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, order_id, rail_token, rail,
                                  description, metadata, reconcile_after)
     VALUES ($1, $2, $3, $4, $5, 'UZS', $6, $7, $12, $13, $8, $9, $10, now() + $11 * interval '1 millisecond')
     RETURNING *`,
    [
      intent.id,
      merchant.productId,
      merchant.livemode,
      intent.amount,
      intent.fee,
      intent.status,
      intent.cardId,
      intent.rail,
      intent.description,
      JSON.stringify(intent.metadata),
      intent.inFlightMs,
      intent.orderId,
      intent.railToken,
    ],
  );
  return row!;
}

/**
 * A charge's PROCESSING intent on a saved card, in one statement: written only if the card is the merchant's, in the
 * same mode, and ACTIVE; undefined otherwise (the caller then says which of these failed). `also` may add writes
 * joined to the usable card, and name the expression the intent's own write then joins (the idempotency key's claim).
 */
export async function insertIntentOnActiveCard(
  db: Queryable,
  merchant: Pick<Merchant, 'productId' | 'livemode'>,
  cardId: string,
  intent: { id: string; amount: number; fee: number; description: string | null; metadata: Metadata; inFlightMs: number },
  also: (st: Statement, card: string) => string = (_st, card) => card,
): Promise<IntentRow | undefined> {
  const st = new Statement();
  st.with(
    'card',
    `SELECT id, product_id, livemode, rail_token, rail FROM cards
      WHERE id = ${st.param(cardId)} AND product_id = ${st.param(merchant.productId)} AND livemode = ${st.param(merchant.livemode, 'boolean')}
        AND status = 'ACTIVE'`,
  );
  const guard = also(st, 'card');
  const [row] = await st.run<IntentRow>(
    db,
    `INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, rail_token, rail,
                                  description, metadata, reconcile_after)
     SELECT ${st.param(intent.id)}, c.product_id, c.livemode, ${st.param(intent.amount, 'bigint')}, ${st.param(intent.fee, 'bigint')}, 'UZS',
            'PROCESSING', c.id, c.rail_token, c.rail, ${st.param(intent.description)}, ${st.param(JSON.stringify(intent.metadata), 'jsonb')},
            now() + ${st.param(intent.inFlightMs, 'integer')} * interval '1 millisecond'
       FROM card c WHERE EXISTS (SELECT 1 FROM ${guard})
     RETURNING *`,
  );
  return row;
}

export async function findIntent(db: Queryable, merchant: Merchant, id: string, lock = false): Promise<IntentRow | undefined> {
  const [row] = await db.query<IntentRow>(
    `SELECT * FROM payment_intents WHERE id = $1 AND product_id = $2 AND livemode = $3${lock ? ' FOR UPDATE' : ''}`,
    [id, merchant.productId, merchant.livemode],
  );
  return row;
}

/** By id alone: for phases and workers that already hold an id made by a scoped call. */
export async function intentById(db: Queryable, id: string): Promise<IntentRow> {
  const [row] = await db.query<IntentRow>('SELECT * FROM payment_intents WHERE id = $1', [id]);
  if (!row) throw new Error(`payment intent ${id} vanished`);
  return row;
}

export async function startDebit(tx: Queryable, id: string, inFlightMs: number): Promise<IntentRow> {
  const [row] = await tx.query<IntentRow>(
    `UPDATE payment_intents SET status = 'PROCESSING', reconcile_after = now() + $2 * interval '1 millisecond'
      WHERE id = $1 AND status = 'REQUIRES_PAYMENT' RETURNING *`,
    [id, inFlightMs],
  );
  if (!row) throw new Error(`payment intent ${id} left REQUIRES_PAYMENT under its lock`);
  return row;
}

export type FinalOutcome = { status: 'SUCCEEDED' } | { status: 'FAILED'; failureCode: string };

/** Adds `finished` to `st`: PROCESSING → SUCCEEDED or FAILED, once; it has the row only for the caller that made the change. */
export function addFinishDebit(st: Statement, id: string, outcome: FinalOutcome): void {
  const status = st.param(outcome.status);
  st.with(
    'finished',
    `UPDATE payment_intents
        SET status = ${status}, failure_code = ${st.param(outcome.status === 'FAILED' ? outcome.failureCode : null)}, reconcile_after = NULL,
            succeeded_at = CASE WHEN ${status} = 'SUCCEEDED' THEN now() END
      WHERE id = ${st.param(id)} AND status = 'PROCESSING'
      RETURNING *`,
  );
}

export async function finishDebit(tx: Queryable, id: string, outcome: FinalOutcome): Promise<IntentRow | undefined> {
  const st = new Statement();
  addFinishDebit(st, id, outcome);
  const [row] = await st.run<IntentRow>(tx, 'SELECT * FROM finished');
  return row;
}

/** Leaves a debit PROCESSING and tells reconciliation when to ask next. */
export async function deferDebit(tx: Queryable, id: string, delayMs: number): Promise<void> {
  await tx.query(
    `UPDATE payment_intents SET reconcile_after = now() + $2 * interval '1 millisecond' WHERE id = $1 AND status = 'PROCESSING'`,
    [id, delayMs],
  );
}

export async function cancelIntent(tx: Queryable, id: string): Promise<IntentRow | undefined> {
  const [row] = await tx.query<IntentRow>(
    `UPDATE payment_intents SET status = 'CANCELED' WHERE id = $1 AND status = 'REQUIRES_PAYMENT' RETURNING *`,
    [id],
  );
  return row;
}

/**
 * Leases a bounded batch of PROCESSING debits due for reconciliation: each is pushed `leaseMs` into the future, so
 * another process skips it while this one asks the rail (outside any transaction).
 */
export async function leaseDebitsToReconcile(db: Queryable, batchMax: number, leaseMs: number): Promise<IntentRow[]> {
  return db.query<IntentRow>(
    `UPDATE payment_intents SET reconcile_after = now() + $2 * interval '1 millisecond', reconcile_count = reconcile_count + 1
      WHERE id IN (
        SELECT id FROM payment_intents WHERE status = 'PROCESSING' AND reconcile_after <= now()
         ORDER BY reconcile_after LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [batchMax, leaseMs],
  );
}

/** Succeeded payments whose settlement delay has passed, locked for this transaction. */
export async function lockDueForSettlement(tx: Queryable, delaySeconds: number, batchMax: number): Promise<IntentRow[]> {
  return tx.query<IntentRow>(
    `SELECT * FROM payment_intents
      WHERE status = 'SUCCEEDED' AND settled_at IS NULL AND succeeded_at <= now() - $1 * interval '1 second'
      ORDER BY succeeded_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [delaySeconds, batchMax],
  );
}

export async function markSettled(tx: Queryable, ids: string[]): Promise<void> {
  await tx.query('UPDATE payment_intents SET settled_at = now() WHERE id = ANY($1)', [ids]);
}

export function addBlockCard(st: Statement, cardId: string, guard: string | null): void {
  st.with(
    'card_blocked',
    `UPDATE cards SET status = 'BLOCKED' WHERE id = ${st.param(cardId)} AND status = 'ACTIVE'${guard === null ? '' : ` AND EXISTS (SELECT 1 FROM ${guard})`}`,
  );
}

export async function recordRefunded(tx: Queryable, id: string, amount: number): Promise<void> {
  await tx.query('UPDATE payment_intents SET amount_refunded = $2 WHERE id = $1', [id, amount]);
}

/** Records the card an order payment saved (the buyer asked to keep it). */
export async function attachCard(tx: Queryable, id: string, cardId: string): Promise<IntentRow> {
  const [row] = await tx.query<IntentRow>('UPDATE payment_intents SET card_id = $2 WHERE id = $1 RETURNING *', [id, cardId]);
  return row!;
}
