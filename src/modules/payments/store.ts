import type { Queryable, Transaction } from '../../db/types.js';
import { guarded, Statement, type Expression, type Items } from '../../core/statement.js';
import type { Merchant } from '../../core/merchant.js';
import type { Listed } from '../../core/pagination.js';
import type { Metadata, IntentStatus } from './schema.js';

const INTENT_COLUMNS = 'id, product_id, livemode, amount, fee, currency, status, failure_code, card_id, rail_token, order_id, rail, masked_pan, description, metadata, amount_refunded, reconcile_count, created_at';
/** What a merchant's list of them reads. */
export const INTENT_LIST: Listed = { table: 'payment_intents', columns: INTENT_COLUMNS };

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
  /** The card debited, first six and last four digits: what a payment shows of it, saved or not. */
  masked_pan: string;
  description: string | null;
  metadata: Metadata;
  amount_refunded: number;
  reconcile_count: number;
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
  maskedPan: string;
  description: string | null;
  metadata: Metadata;
  /** For PROCESSING: how long the debit may be in flight before reconciliation may look. */
  inFlightMs: number | null;
}

export async function insertIntent(tx: Transaction, merchant: Pick<Merchant, 'productId' | 'livemode'>, intent: NewIntent): Promise<IntentRow> {
  const [row] = await tx.query<IntentRow>(
    `INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, order_id, rail_token, rail,
                                  masked_pan, description, metadata, reconcile_after)
     VALUES ($1, $2, $3, $4, $5, 'UZS', $6, $7, $12, $13, $8, $14, $9, $10, now() + $11 * interval '1 millisecond')
     RETURNING ${INTENT_COLUMNS}`,
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
      intent.maskedPan,
    ],
  );
  return row!;
}

export interface NewCharge {
  productId: string;
  livemode: boolean;
  cardId: string;
  intent: { id: string; amount: number; fee: number; description: string | null; metadata: Metadata; inFlightMs: number };
}

/**
 * Charges' PROCESSING intents on saved cards, in one statement: each written only if its card is the merchant's, in
 * the same mode, and ACTIVE (undefined otherwise; the caller then says which of these failed). `also` may add writes
 * for the items whose card is usable (item i is `charges[i - 1]`) and answer the items whose intent may then be
 * written (the idempotency keys' claims).
 */
export async function insertIntentsOnActiveCards(
  db: Queryable,
  charges: NewCharge[],
  also: (st: Statement, usable: Items) => Items = (_st, usable) => usable,
): Promise<(IntentRow | undefined)[]> {
  const st = new Statement();
  const each = <T>(of: (charge: NewCharge) => T) => charges.map(of);
  const cardIds = st.param(each((c) => c.cardId), 'text[]');
  const values = st.with(
    'charge_v',
    `SELECT * FROM unnest(${st.param(each((c) => c.intent.id), 'text[]')}, ${st.param(each((c) => c.productId), 'text[]')},
                          ${st.param(each((c) => c.livemode), 'boolean[]')}, ${cardIds},
                          ${st.param(each((c) => c.intent.amount), 'bigint[]')}, ${st.param(each((c) => c.intent.fee), 'bigint[]')},
                          ${st.param(each((c) => c.intent.description), 'text[]')}, ${st.param(each((c) => JSON.stringify(c.intent.metadata)), 'text[]')},
                          ${st.param(each((c) => c.intent.inFlightMs), 'integer[]')})
            WITH ORDINALITY AS v (id, product_id, livemode, card_id, amount, fee, description, metadata, in_flight_ms, i)`,
  );
  const usable = st.items(
    'card',
    `SELECT v.i, c.id, c.rail_token, c.rail, c.masked_pan FROM ${values} v
       JOIN cards c ON c.id = ANY(${cardIds}) AND c.id = v.card_id AND c.product_id = v.product_id AND c.livemode = v.livemode AND c.status = 'ACTIVE'`,
  );
  const guard = also(st, usable);
  const rows = await st.run<IntentRow>(
    db,
    `INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, rail_token, rail,
                                  masked_pan, description, metadata, reconcile_after)
     SELECT v.id, v.product_id, v.livemode, v.amount, v.fee, 'UZS', 'PROCESSING', c.id, c.rail_token, c.rail, c.masked_pan, v.description,
            v.metadata::json, now() + v.in_flight_ms * interval '1 millisecond'
       FROM ${values} v JOIN ${usable} c USING (i)
      WHERE ${guarded(guard, 'v.i')}
      ORDER BY v.i
     RETURNING ${INTENT_COLUMNS}`,
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return charges.map((charge) => byId.get(charge.intent.id));
}

export async function findIntent(db: Queryable, merchant: Merchant, id: string, lock = false): Promise<IntentRow | undefined> {
  const [row] = await db.query<IntentRow>(
    `SELECT ${INTENT_COLUMNS} FROM payment_intents WHERE id = $1 AND product_id = $2 AND livemode = $3${lock ? ' FOR UPDATE' : ''}`,
    [id, merchant.productId, merchant.livemode],
  );
  return row;
}

/** By id alone: for phases and workers that already hold an id made by a scoped call. */
export async function intentById(db: Queryable, id: string): Promise<IntentRow> {
  const [row] = await db.query<IntentRow>(`SELECT ${INTENT_COLUMNS} FROM payment_intents WHERE id = $1`, [id]);
  if (!row) throw new Error(`payment intent ${id} vanished`);
  return row;
}

export async function startDebit(tx: Transaction, id: string, inFlightMs: number): Promise<IntentRow> {
  const [row] = await tx.query<IntentRow>(
    `UPDATE payment_intents SET status = 'PROCESSING', reconcile_after = now() + $2 * interval '1 millisecond'
      WHERE id = $1 AND status = 'REQUIRES_PAYMENT' RETURNING ${INTENT_COLUMNS}`,
    [id, inFlightMs],
  );
  if (!row) throw new Error(`payment intent ${id} left REQUIRES_PAYMENT under its lock`);
  return row;
}

export type FinalOutcome = { status: 'SUCCEEDED' } | { status: 'FAILED'; failureCode: string };

/**
 * Adds to `st` debits' moves PROCESSING → SUCCEEDED or FAILED, once each, with the card an order payment saved (null
 * keeps the intent's): `finished` holds the ids of the intents changed (only for the caller that made the change),
 * `finishedItems` their items (`debits[i - 1]`).
 */
export function addFinishDebits(
  st: Statement,
  debits: { id: string; outcome: FinalOutcome; cardId: string | null }[],
): { finished: Expression; finishedItems: Items } {
  const ids = st.param(debits.map((d) => d.id), 'text[]');
  const values = st.with(
    'finish_v',
    `SELECT * FROM unnest(${ids}, ${st.param(debits.map((d) => d.outcome.status), 'text[]')},
                          ${st.param(debits.map((d) => (d.outcome.status === 'FAILED' ? d.outcome.failureCode : null)), 'text[]')},
                          ${st.param(debits.map((d) => d.cardId), 'text[]')})
            WITH ORDINALITY AS v (id, status, failure_code, card_id, i)`,
  );
  const finished = st.with(
    'finished',
    `UPDATE payment_intents p
        SET status = v.status, failure_code = v.failure_code, reconcile_after = NULL, card_id = coalesce(v.card_id, p.card_id),
            succeeded_at = CASE WHEN v.status = 'SUCCEEDED' THEN now() END
       FROM ${values} v
      WHERE p.id = ANY(${ids}) AND p.id = v.id AND p.status = 'PROCESSING'
     RETURNING p.id`,
  );
  const finishedItems = st.items('finished_items', `SELECT v.i FROM ${values} v WHERE v.id IN (SELECT id FROM ${finished})`);
  return { finished, finishedItems };
}

/** The intent, locked for this transaction, if it is PROCESSING: whoever holds it may finish the debit. */
export async function lockProcessingIntent(tx: Transaction, id: string): Promise<IntentRow | undefined> {
  const [row] = await tx.query<IntentRow>(`SELECT ${INTENT_COLUMNS} FROM payment_intents WHERE id = $1 AND status = 'PROCESSING' FOR UPDATE`, [id]);
  return row;
}

/** Leaves a debit PROCESSING and tells reconciliation when to ask next. */
export async function deferDebit(tx: Transaction, id: string, delayMs: number): Promise<void> {
  await tx.query(
    `UPDATE payment_intents SET reconcile_after = now() + $2 * interval '1 millisecond' WHERE id = $1 AND status = 'PROCESSING'`,
    [id, delayMs],
  );
}

export async function cancelIntent(tx: Transaction, id: string): Promise<IntentRow | undefined> {
  const [row] = await tx.query<IntentRow>(
    `UPDATE payment_intents SET status = 'CANCELED' WHERE id = $1 AND status = 'REQUIRES_PAYMENT' RETURNING ${INTENT_COLUMNS}`,
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
      RETURNING ${INTENT_COLUMNS}`,
    [batchMax, leaseMs],
  );
}

/** Succeeded payments whose settlement delay has passed, locked for this transaction. */
export async function lockDueForSettlement(tx: Transaction, delaySeconds: number, batchMax: number): Promise<IntentRow[]> {
  return tx.query<IntentRow>(
    `SELECT ${INTENT_COLUMNS} FROM payment_intents
      WHERE status = 'SUCCEEDED' AND settled_at IS NULL AND succeeded_at <= now() - $1 * interval '1 second'
      ORDER BY succeeded_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [delaySeconds, batchMax],
  );
}

export async function markSettled(tx: Transaction, ids: string[]): Promise<void> {
  await tx.query('UPDATE payment_intents SET settled_at = now() WHERE id = ANY($1)', [ids]);
}

export async function recordRefunded(tx: Transaction, id: string, amount: number): Promise<void> {
  await tx.query('UPDATE payment_intents SET amount_refunded = $2 WHERE id = $1', [id, amount]);
}

/** An operation that asked the bank to move money, as reconciliation compares it with the bank's record. */
export interface RecordedMoney {
  operation_id: string;
  amount: number;
  status: string;
  created_at: Date;
}

/** The debits created in [from, to) that went to the bank (not those still awaiting or canceled before), oldest first. */
export function debitOperationsBetween(db: Queryable, livemode: boolean, from: Date, to: Date, max: number): Promise<RecordedMoney[]> {
  return db.query<RecordedMoney>(
    `SELECT id AS operation_id, amount, status, created_at FROM payment_intents
      WHERE livemode = $1 AND created_at >= $2 AND created_at < $3 AND status <> 'REQUIRES_PAYMENT' AND status <> 'CANCELED'
      ORDER BY created_at LIMIT $4`,
    [livemode, from, to, max],
  );
}
