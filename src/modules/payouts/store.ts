import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import type { Listed } from '../../core/pagination.js';
import type { PayoutStatus } from './schema.js';
import type { OperationsPage } from '../payments/service.js';

const ACCOUNT_COLUMNS = 'id, product_id, livemode, bank_mfo, account_number, tin, holder_name, payouts_held_until, updated_at, created_at';

export interface PayoutAccountRow {
  id: string;
  product_id: string;
  livemode: boolean;
  bank_mfo: string;
  account_number: string;
  tin: string;
  holder_name: string;
  payouts_held_until: Date | null;
  updated_at: Date;
  created_at: Date;
}

export async function findAccount(db: Queryable, merchant: Pick<Merchant, 'productId' | 'livemode'>): Promise<PayoutAccountRow | undefined> {
  const [row] = await db.query<PayoutAccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM payout_accounts WHERE product_id = $1 AND livemode = $2`, [
    merchant.productId,
    merchant.livemode,
  ]);
  return row;
}

/**
 * Sets the account. The first setting holds nothing; a change of an account already set holds payouts for `holdSeconds`
 * (a change to the same account holds nothing new). One statement, so two changes at once are ordered by the row.
 */
export async function upsertAccount(
  tx: Transaction,
  merchant: Pick<Merchant, 'productId' | 'livemode'>,
  account: { id: string; bankMfo: string; accountNumber: string; tin: string; holderName: string },
  holdSeconds: number,
): Promise<PayoutAccountRow> {
  const [row] = await tx.query<PayoutAccountRow>(
    `INSERT INTO payout_accounts (id, product_id, livemode, bank_mfo, account_number, tin, holder_name)
     VALUES ($8, $1, $2, $3, $4, $5, $6)
     ON CONFLICT (product_id, livemode) DO UPDATE SET
       bank_mfo = EXCLUDED.bank_mfo, account_number = EXCLUDED.account_number, tin = EXCLUDED.tin, holder_name = EXCLUDED.holder_name,
       updated_at = now(),
       payouts_held_until = CASE
         WHEN (payout_accounts.bank_mfo, payout_accounts.account_number) = (EXCLUDED.bank_mfo, EXCLUDED.account_number) THEN payout_accounts.payouts_held_until
         ELSE now() + $7 * interval '1 second' END
     RETURNING ${ACCOUNT_COLUMNS}`,
    [merchant.productId, merchant.livemode, account.bankMfo, account.accountNumber, account.tin, account.holderName, holdSeconds, account.id],
  );
  return row!;
}

/** Ends a hold now (test mode's helper). */
export async function releaseHold(db: Queryable, merchant: Pick<Merchant, 'productId' | 'livemode'>): Promise<PayoutAccountRow | undefined> {
  const [row] = await db.query<PayoutAccountRow>(
    `UPDATE payout_accounts SET payouts_held_until = NULL WHERE product_id = $1 AND livemode = $2 RETURNING ${ACCOUNT_COLUMNS}`,
    [merchant.productId, merchant.livemode],
  );
  return row;
}

const PAYOUT_COLUMNS =
  'id, product_id, livemode, amount, status, automatic, arrival_date::text AS arrival_date, bank_mfo, account_number, tin, holder_name, failure_code, attempts, sent_at, finished_at, created_at';
/** What a merchant's list of them reads. */
export const PAYOUT_LIST: Listed = { table: 'payouts', columns: PAYOUT_COLUMNS };

export interface PayoutRow {
  id: string;
  product_id: string;
  livemode: boolean;
  amount: number;
  status: PayoutStatus;
  automatic: boolean;
  arrival_date: string;
  bank_mfo: string;
  account_number: string;
  tin: string;
  holder_name: string;
  failure_code: string | null;
  attempts: number;
  sent_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
}

/** A PENDING payout to the account as it is now, due to be sent at once. */
export async function insertPayout(
  tx: Transaction,
  merchant: Pick<Merchant, 'productId' | 'livemode'>,
  payout: { id: string; amount: number; automatic: boolean; arrivalDate: string; account: PayoutAccountRow },
): Promise<PayoutRow> {
  const { account } = payout;
  const [row] = await tx.query<PayoutRow>(
    `INSERT INTO payouts (id, product_id, livemode, amount, status, automatic, arrival_date, bank_mfo, account_number, tin, holder_name, next_attempt_at)
     VALUES ($1, $2, $3, $4, 'PENDING', $5, $6, $7, $8, $9, $10, now()) RETURNING ${PAYOUT_COLUMNS}`,
    [payout.id, merchant.productId, merchant.livemode, payout.amount, payout.automatic, payout.arrivalDate, account.bank_mfo, account.account_number, account.tin, account.holder_name],
  );
  return row!;
}

export async function findPayout(db: Queryable, merchant: Pick<Merchant, 'productId' | 'livemode'>, id: string): Promise<PayoutRow | undefined> {
  const [row] = await db.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id = $1 AND product_id = $2 AND livemode = $3`, [
    id,
    merchant.productId,
    merchant.livemode,
  ]);
  return row;
}

export async function payoutById(db: Queryable, id: string): Promise<PayoutRow> {
  const [row] = await db.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id = $1`, [id]);
  if (!row) throw new Error(`payout ${id} vanished`);
  return row;
}

/**
 * The available statement rows no payout has paid out yet, which the next automatic payout pays out: every one except
 * an automatic payout's own row (it pays out the rows it covers, so it is settled by itself).
 */
const UNPAID = `product_id = $1 AND livemode = $2 AND payout_id IS NULL AND status = 'available'
  AND NOT (type = 'payout' AND EXISTS (SELECT 1 FROM payouts p WHERE p.id = source AND p.automatic))`;

/** What the unpaid rows sum to, as text so that it is exact. */
export async function unpaidSum(db: Queryable, merchant: Pick<Merchant, 'productId' | 'livemode'>): Promise<string> {
  const [row] = await db.query<{ sum: string }>(`SELECT coalesce(sum(net), 0)::text AS sum FROM balance_transactions WHERE ${UNPAID}`, [
    merchant.productId,
    merchant.livemode,
  ]);
  return row!.sum;
}

/** The unpaid rows become the automatic payout's, in its transaction; returns what they sum to. */
export async function payOutUnpaid(tx: Transaction, merchant: Pick<Merchant, 'productId' | 'livemode'>, payoutId: string): Promise<string> {
  const [row] = await tx.query<{ sum: string }>(
    `WITH paid AS (UPDATE balance_transactions SET payout_id = $3 WHERE ${UNPAID} RETURNING net)
     SELECT coalesce(sum(net), 0)::text AS sum FROM paid`,
    [merchant.productId, merchant.livemode, payoutId],
  );
  return row!.sum;
}

/** PENDING → IN_TRANSIT, once: only the caller that made the change gets the row, and sends it. */
export async function markInTransit(tx: Transaction, id: string, inFlightMs: number): Promise<PayoutRow | undefined> {
  const [row] = await tx.query<PayoutRow>(
    `UPDATE payouts SET status = 'IN_TRANSIT', sent_at = now(), attempts = attempts + 1, next_attempt_at = now() + $2 * interval '1 millisecond'
      WHERE id = $1 AND status = 'PENDING' RETURNING ${PAYOUT_COLUMNS}`,
    [id, inFlightMs],
  );
  return row;
}

/** IN_TRANSIT → PAID or FAILED, once: returns the row only to the caller that made the change. */
export async function finishPayout(
  tx: Transaction,
  id: string,
  to: { status: 'PAID' } | { status: 'FAILED'; failureCode: string },
): Promise<PayoutRow | undefined> {
  const [row] = await tx.query<PayoutRow>(
    `UPDATE payouts SET status = $2, failure_code = $3, finished_at = now(), next_attempt_at = NULL
      WHERE id = $1 AND status = 'IN_TRANSIT' RETURNING ${PAYOUT_COLUMNS}`,
    [id, to.status, to.status === 'FAILED' ? to.failureCode : null],
  );
  return row;
}

/** The merchant's PENDING payout → CANCELED, once (a send that took it first wins): the row to the caller that did it. */
export async function cancelPending(tx: Transaction, merchant: Pick<Merchant, 'productId' | 'livemode'>, id: string): Promise<PayoutRow | undefined> {
  const [row] = await tx.query<PayoutRow>(
    `UPDATE payouts SET status = 'CANCELED', finished_at = now(), next_attempt_at = NULL
      WHERE id = $1 AND product_id = $2 AND livemode = $3 AND status = 'PENDING' RETURNING ${PAYOUT_COLUMNS}`,
    [id, merchant.productId, merchant.livemode],
  );
  return row;
}

/** An IN_TRANSIT payout whose outcome is still unclear is asked about again after `delayMs`. */
export function deferPayout(tx: Transaction, id: string, delayMs: number): void {
  tx.write(`UPDATE payouts SET next_attempt_at = now() + $2 * interval '1 millisecond' WHERE id = $1 AND status = 'IN_TRANSIT'`, [id, delayMs]);
}

/**
 * PENDING payouts due to be sent, oldest first, of one product and mode when given; a suspended product's wait, to be
 * sent once it is resumed (or canceled).
 */
export async function pendingDue(db: Queryable, batchMax: number, merchant?: Pick<Merchant, 'productId' | 'livemode'>): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `SELECT o.id FROM payouts o JOIN products p ON p.id = o.product_id
      WHERE o.status = 'PENDING' AND o.next_attempt_at <= now() AND p.suspended_at IS NULL ${merchant ? 'AND o.product_id = $2 AND o.livemode = $3' : ''}
      ORDER BY o.next_attempt_at LIMIT $1`,
    merchant ? [batchMax, merchant.productId, merchant.livemode] : [batchMax],
  );
  return rows.map((row) => row.id);
}

/** A PENDING payout that cannot be sent now (its mode has no bank) is tried again after `delayMs`. */
export async function postponePending(db: Queryable, id: string, delayMs: number): Promise<void> {
  await db.query(`UPDATE payouts SET next_attempt_at = now() + $2 * interval '1 millisecond' WHERE id = $1 AND status = 'PENDING'`, [id, delayMs]);
}

/** Leases a bounded batch of IN_TRANSIT payouts due for reconciliation (see leaseDebitsToReconcile). */
export async function leasePayoutsToReconcile(db: Queryable, batchMax: number, leaseMs: number): Promise<{ id: string; livemode: boolean; reconcile_count: number }[]> {
  return db.query(
    `UPDATE payouts SET next_attempt_at = now() + $2 * interval '1 millisecond', attempts = attempts + 1
      WHERE id IN (
        SELECT id FROM payouts WHERE status = 'IN_TRANSIT' AND next_attempt_at <= now()
         ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING id, livemode, attempts AS reconcile_count`,
    [batchMax, leaseMs],
  );
}

/** Products whose automatic payout of `day` has not run, with an account not on hold, and not suspended. */
export async function dueRuns(db: Queryable, day: string, batchMax: number): Promise<{ product_id: string; livemode: boolean }[]> {
  return db.query(
    `SELECT a.product_id, a.livemode FROM payout_accounts a JOIN products p ON p.id = a.product_id
      WHERE (a.payouts_held_until IS NULL OR a.payouts_held_until <= now()) AND p.suspended_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM payout_runs r WHERE r.product_id = a.product_id AND r.livemode = a.livemode AND r.day = $1)
      ORDER BY a.product_id, a.livemode LIMIT $2`,
    [day, batchMax],
  );
}

/** Claims the day's run of a product and mode; false when another transaction ran it. */
export async function claimRun(tx: Transaction, merchant: Pick<Merchant, 'productId' | 'livemode'>, day: string): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO payout_runs (product_id, livemode, day) VALUES ($1, $2, $3) ON CONFLICT (product_id, livemode, day) DO NOTHING RETURNING 1`,
    [merchant.productId, merchant.livemode, day],
  );
  return rows.length === 1;
}

export function recordRunPayout(tx: Transaction, merchant: Pick<Merchant, 'productId' | 'livemode'>, day: string, payoutId: string): void {
  tx.write('UPDATE payout_runs SET payout_id = $4 WHERE product_id = $1 AND livemode = $2 AND day = $3', [merchant.productId, merchant.livemode, day, payoutId]);
}

/** Whether the day's automatic payout of the product and mode has run. */
export async function hasRun(db: Queryable, merchant: Pick<Merchant, 'productId' | 'livemode'>, day: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM payout_runs WHERE product_id = $1 AND livemode = $2 AND day = $3', [merchant.productId, merchant.livemode, day]);
  return rows.length === 1;
}

/** A page of the payouts sent to the bank in [from, to), by id in byte order, as reconciliation compares them with the bank's record. */
export function transfersBetween(db: Queryable, page: OperationsPage) {
  return db.query<{ operation_id: string; amount: number; status: PayoutStatus; created_at: Date }>(
    `SELECT id AS operation_id, amount, status, sent_at AS created_at FROM payouts
      WHERE livemode = $1 AND sent_at >= $2 AND sent_at < $3 AND ($4::text IS NULL OR id > $4 COLLATE "C")
      ORDER BY id COLLATE "C" LIMIT $5`,
    [page.livemode, page.from, page.to, page.after, page.limit],
  );
}
