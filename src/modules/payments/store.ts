import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import type { Listed } from '../../core/pagination.js';
import type { CaptureMethod } from '../../core/schemas.js';
import type { Metadata, IntentStatus } from './schema.js';
import type { ReceiptLines } from '../receipts/schema.js';
import type { RecordedOperation } from '../../rails/rail.js';
import { INTENT_STATES } from './state.js';

const INTENT_COLUMNS = 'id, product_id, livemode, amount, fee, currency, status, failure_code, card_id, rail_token, order_id, rail, masked_pan, description, metadata, amount_refunded, receipt_id, capture_method, amount_held, held_at, reconcile_count, created_at';
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
  receipt_id: string | null;
  capture_method: CaptureMethod;
  /** A two-step payment's held amount, fixed when it is made; null for one taken at once. */
  amount_held: number | null;
  /** When the bank confirmed the hold. */
  held_at: Date | null;
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
  receiptLines: ReceiptLines | null;
  /** For PROCESSING: how long the debit may be in flight before reconciliation may look. */
  inFlightMs: number | null;
  /** `manual`: the rail holds the amount instead of taking it. */
  captureMethod: CaptureMethod;
}

export async function insertIntent(tx: Transaction, merchant: Pick<Merchant, 'productId' | 'livemode'>, intent: NewIntent): Promise<IntentRow> {
  const [row] = await tx.query<IntentRow>(
    `INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, order_id, rail_token, rail,
                                  masked_pan, description, metadata, receipt_lines, reconcile_after, debit_started_at, capture_method, amount_held)
     VALUES ($1, $2, $3, $4, $5, 'UZS', $6, $7, $12, $13, $8, $14, $9, $10, $15, now() + $11 * interval '1 millisecond',
             CASE WHEN $6 = 'PROCESSING' THEN now() END, $16, CASE WHEN $16 = 'manual' THEN $4::bigint END)
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
      intent.receiptLines === null ? null : JSON.stringify(intent.receiptLines),
      intent.captureMethod,
    ],
  );
  return row!;
}

/** The SQLSTATE of an intent refused because its card cannot be charged (migration 035); its detail is the card's status. */
const CARD_NOT_CHARGEABLE = 'TC001';
// Each charge's statements, built once: a text built at each call is hashed again where its prepared name is looked up.
const INSERT_ON_ACTIVE_CARD = `INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, rail_token, rail,
                                  masked_pan, description, metadata, receipt_lines, reconcile_after, debit_started_at,
                                  capture_method, amount_held)
     SELECT $1, c.product_id, c.livemode, $5, $6, 'UZS', 'PROCESSING', c.id, c.rail_token, c.rail, c.masked_pan, $7, $8::json,
            $10::jsonb, now() + $9 * interval '1 millisecond', now(), $11, CASE WHEN $11 = 'manual' THEN $5::bigint END
       FROM (VALUES (1)) AS one (n) LEFT JOIN cards c ON c.id = $4 AND c.product_id = $2 AND c.livemode = $3
      WHERE card_chargeable(c.status)
     RETURNING ${INTENT_COLUMNS}`;
const FINISH_DEBIT = `UPDATE payment_intents
        SET status = CASE WHEN $5 AND capture_method = 'manual' THEN $6 ELSE $2 END, failure_code = $3, reconcile_after = NULL,
            succeeded_at = CASE WHEN $5 AND capture_method = 'automatic' THEN now() END,
            held_at = CASE WHEN $5 AND capture_method = 'manual' THEN now() END
      WHERE id = $1 AND status = ANY($4::text[]) AND held_at IS NULL
     RETURNING ${INTENT_COLUMNS}, receipt_lines`;

/**
 * Writes a PROCESSING intent on the merchant's card in the round trip of the transaction's COMMIT, and answers it once
 * the transaction has committed. A card that is not the merchant's, or not ACTIVE, fails the statement, and the
 * transaction with it: `refusedCard` reads that failure. `intent` holds what the card does not.
 */
export function insertIntentOnActiveCard(
  tx: Transaction,
  merchant: Pick<Merchant, 'productId' | 'livemode'>,
  cardId: string,
  intent: Pick<NewIntent, 'id' | 'amount' | 'fee' | 'description' | 'metadata' | 'receiptLines' | 'captureMethod'> & { inFlightMs: number },
): Promise<IntentRow> {
  const written = tx.writeReturning<IntentRow>(
    INSERT_ON_ACTIVE_CARD,
    [
      intent.id,
      merchant.productId,
      merchant.livemode,
      cardId,
      intent.amount,
      intent.fee,
      intent.description,
      JSON.stringify(intent.metadata),
      intent.inFlightMs,
      intent.receiptLines === null ? null : JSON.stringify(intent.receiptLines),
      intent.captureMethod,
    ],
  );
  return written.then(([row]) => row!);
}

/**
 * What the failure of a transaction that checked its card with `card_chargeable` (`insertIntentOnActiveCard`,
 * `startDebit`) says of that card: its status when it is not ACTIVE, null when the merchant has no such card, undefined
 * when the failure is not the card's.
 */
export function refusedCard(error: unknown): string | null | undefined {
  const { code, detail } = (error ?? {}) as { code?: unknown; detail?: unknown };
  if (code !== CARD_NOT_CHARGEABLE) return undefined;
  return typeof detail === 'string' && detail !== '' ? detail : null;
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

/**
 * Starts the debit of an intent awaiting confirmation, on its card as it stands: a card that cannot be charged fails
 * the statement, as `insertIntentOnActiveCard`'s does (`refusedCard` reads it).
 */
export async function startDebit(tx: Transaction, id: string, inFlightMs: number): Promise<IntentRow> {
  const confirm = INTENT_STATES.move('confirm');
  const [row] = await tx.query<IntentRow>(
    `UPDATE payment_intents p SET status = $3, reconcile_after = now() + $2 * interval '1 millisecond',
            debit_started_at = CASE WHEN card_chargeable((SELECT c.status FROM cards c WHERE c.id = p.card_id)) THEN now() END
      WHERE id = $1 AND status = ANY($4::text[])
      RETURNING ${INTENT_COLUMNS}`,
    [id, inFlightMs, confirm.to, confirm.from],
  );
  if (!row) throw new Error(`payment intent ${id} left REQUIRES_PAYMENT under its lock`);
  return row;
}

export type FinalOutcome = { status: 'SUCCEEDED' } | { status: 'FAILED'; failureCode: string };

type WithLines = IntentRow & { receipt_lines: ReceiptLines | null };

/**
 * A debit's (or hold's) move out of PROCESSING, once: SUCCEEDED, or REQUIRES_CAPTURE for a hold, or FAILED. Returns
 * the row only to the caller that made the change, with the fiscal lines its sale receipt gets (null when it needs
 * none), which no other read carries; undefined when the debit phase was already over.
 */
export async function finishDebit(tx: Transaction, id: string, outcome: FinalOutcome): Promise<WithLines | undefined> {
  const move = INTENT_STATES.move(outcome.status === 'SUCCEEDED' ? 'debit_succeeded' : 'debit_failed');
  const held = INTENT_STATES.move('hold_succeeded');
  const [row] = await tx.query<WithLines>(
    FINISH_DEBIT,
    [id, move.to, outcome.status === 'FAILED' ? outcome.failureCode : null, move.from, outcome.status === 'SUCCEEDED', held.to],
  );
  return row;
}

/** What the end of a hold does to its intent. */
export type HoldEndMove = { on: 'capture_succeeded'; amount: number; fee: number; receiptLines: ReceiptLines | null } | { on: 'hold_kept' | 'hold_released' };

/** REQUIRES_CAPTURE → PROCESSING: a capture or release of the hold is under way; undefined if it was not held. */
export async function startHoldEnd(tx: Transaction, id: string): Promise<IntentRow | undefined> {
  const move = INTENT_STATES.move('hold_ending');
  const [row] = await tx.query<IntentRow>(
    `UPDATE payment_intents SET status = $2 WHERE id = $1 AND status = ANY($3::text[]) RETURNING ${INTENT_COLUMNS}`,
    [id, move.to, move.from],
  );
  return row;
}

/**
 * A hold's end applied to its intent, once: captured (SUCCEEDED with the amount, fee and lines captured; null lines
 * keep the payment's own), kept (REQUIRES_CAPTURE again) or released (CANCELED). Undefined when no end was under way.
 */
export async function endHold(tx: Transaction, id: string, end: HoldEndMove): Promise<WithLines | undefined> {
  const move = INTENT_STATES.move(end.on);
  const captured = end.on === 'capture_succeeded' ? end : null;
  const [row] = await tx.query<WithLines>(
    `UPDATE payment_intents
        SET status = $2, amount = coalesce($4, amount), fee = coalesce($5, fee), receipt_lines = coalesce($6::jsonb, receipt_lines),
            succeeded_at = CASE WHEN $2 = 'SUCCEEDED' THEN now() END
      WHERE id = $1 AND status = ANY($3::text[]) AND held_at IS NOT NULL
     RETURNING ${INTENT_COLUMNS}, receipt_lines`,
    [id, move.to, move.from, captured?.amount ?? null, captured?.fee ?? null, captured?.receiptLines ? JSON.stringify(captured.receiptLines) : null],
  );
  return row;
}

/** The fiscal lines a payment was made with (null: none). */
export async function receiptLinesOf(db: Queryable, id: string): Promise<ReceiptLines | null> {
  const [row] = await db.query<{ receipt_lines: ReceiptLines | null }>('SELECT receipt_lines FROM payment_intents WHERE id = $1', [id]);
  return row?.receipt_lines ?? null;
}

/** How long a hold whose release the bank refused waits before the worker asks again. */
const RELEASE_RETRY_SECONDS = 3600;

/**
 * The oldest hold of a mode made over `holdDays` ago and still waiting for a capture, locked for this transaction;
 * one whose release the bank refused within the last RELEASE_RETRY_SECONDS waits, so the others are not held up.
 */
export async function lockExpiredHold(tx: Transaction, livemode: boolean, holdDays: number): Promise<IntentRow | undefined> {
  const [row] = await tx.query<IntentRow>(
    `SELECT ${INTENT_COLUMNS} FROM payment_intents i
      WHERE status = 'REQUIRES_CAPTURE' AND livemode = $1 AND held_at <= now() - $2 * interval '1 day'
        AND NOT EXISTS (SELECT 1 FROM hold_ends e WHERE e.payment_intent_id = i.id AND e.status = 'FAILED'
                           AND e.created_at > now() - $3 * interval '1 second')
      ORDER BY held_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
    [livemode, holdDays, RELEASE_RETRY_SECONDS],
  );
  return row;
}

/** The card an order's payment saved, on its intent (the payment was made with the card captured by the session). */
export async function attachSavedCard(tx: Transaction, id: string, cardId: string): Promise<IntentRow> {
  const [row] = await tx.query<IntentRow>(`UPDATE payment_intents SET card_id = $2 WHERE id = $1 RETURNING ${INTENT_COLUMNS}`, [id, cardId]);
  return row!;
}

export async function attachReceipt(tx: Transaction, id: string, receiptId: string): Promise<IntentRow> {
  const [row] = await tx.query<IntentRow>(`UPDATE payment_intents SET receipt_id = $2 WHERE id = $1 RETURNING ${INTENT_COLUMNS}`, [id, receiptId]);
  return row!;
}

/** Leaves a debit PROCESSING and tells reconciliation when to ask next. */
export function deferDebit(tx: Transaction, id: string, delayMs: number): void {
  tx.write(
    `UPDATE payment_intents SET reconcile_after = now() + $2 * interval '1 millisecond' WHERE id = $1 AND status = 'PROCESSING' AND held_at IS NULL`,
    [id, delayMs],
  );
}

export async function cancelIntent(tx: Transaction, id: string): Promise<IntentRow | undefined> {
  const cancel = INTENT_STATES.move('cancel');
  const [row] = await tx.query<IntentRow>(
    `UPDATE payment_intents SET status = $2 WHERE id = $1 AND status = ANY($3::text[]) RETURNING ${INTENT_COLUMNS}`,
    [id, cancel.to, cancel.from],
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
export async function lockDueForSettlement(
  tx: Transaction,
  delaySeconds: number,
  batchMax: number,
  merchant: Pick<Merchant, 'productId' | 'livemode'> | null,
): Promise<IntentRow[]> {
  return tx.query<IntentRow>(
    `SELECT ${INTENT_COLUMNS} FROM payment_intents
      WHERE status = 'SUCCEEDED' AND settled_at IS NULL AND succeeded_at <= now() - $1 * interval '1 second'
        AND ($3::text IS NULL OR (product_id = $3 AND livemode = $4))
      ORDER BY succeeded_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [delaySeconds, batchMax, merchant?.productId ?? null, merchant?.livemode ?? false],
  );
}

export function markSettled(tx: Transaction, ids: string[]): void {
  tx.write('UPDATE payment_intents SET settled_at = now() WHERE id = ANY($1)', [ids]);
}

export function recordRefunded(tx: Transaction, id: string, amount: number): void {
  tx.write('UPDATE payment_intents SET amount_refunded = $2 WHERE id = $1', [id, amount]);
}

/** A page of a mode's money operations of [from, to), by id in byte order, after `after` when given. */
export interface OperationsPage {
  livemode: boolean;
  from: Date;
  to: Date;
  after: string | null;
  limit: number;
}

/** An operation that asked the bank to move money, as reconciliation compares it with the bank's record. */
export interface RecordedMoney {
  operation_id: string;
  type: RecordedOperation['type'];
  amount: number;
  status: string;
  created_at: Date;
}

/**
 * The debits and holds sent to the bank in [from, to) (dated when sent: a payment intent when confirmed): a page of
 * them by id in byte order, after `after` when given. A hold is the amount held, SUCCEEDED once the bank confirmed it,
 * whatever became of it later (its capture or release is an operation of its own).
 */
export function debitOperationsBetween(db: Queryable, page: OperationsPage): Promise<RecordedMoney[]> {
  return db.query<RecordedMoney>(
    `SELECT id AS operation_id, CASE WHEN capture_method = 'manual' THEN 'hold' ELSE 'debit' END AS type,
            coalesce(amount_held, amount) AS amount, CASE WHEN held_at IS NOT NULL THEN 'SUCCEEDED' ELSE status END AS status,
            coalesce(debit_started_at, created_at) AS created_at
       FROM payment_intents
      WHERE livemode = $1 AND coalesce(debit_started_at, created_at) >= $2 AND coalesce(debit_started_at, created_at) < $3
        AND (status NOT IN ('REQUIRES_PAYMENT', 'CANCELED') OR held_at IS NOT NULL)
        AND ($4::text IS NULL OR id > $4 COLLATE "C")
      ORDER BY id COLLATE "C" LIMIT $5`,
    [page.livemode, page.from, page.to, page.after, page.limit],
  );
}
