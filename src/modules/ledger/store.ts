import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { newId } from '../../core/ids.js';
import type { Listed } from '../../core/pagination.js';

/** The chart of accounts (seeded by migrations 001 and 026). */
export type Account = 'merchant_pending' | 'merchant_available' | 'rail_clearing' | 'platform_fees' | 'payouts_in_transit' | 'bank_payouts';

export interface Entry {
  account: Account;
  /** Tiyin; positive credits the account, negative debits it. */
  amount: number;
}

/** A posting as the merchant's statement shows it: one row per movement of the merchant's balance. */
export interface StatementLine {
  type: 'charge' | 'refund' | 'payout' | 'payout_failure';
  /** Tiyin, signed: what the movement adds to the balance before its fee. */
  amount: number;
  fee: number;
  status: 'pending' | 'available';
}

export interface LedgerTransaction {
  productId: string;
  livemode: boolean;
  /** Why money moved, e.g. `payment_succeeded`. */
  reason: string;
  /** The business object that moved it (a payment intent, a refund). */
  referenceId: string;
  entries: Entry[];
  /** Its row in the merchant's statement, when it moves the merchant's balance in the merchant's eyes. */
  statement?: StatementLine;
}

const ENTRIES_MAX = 16;
/** Balance rows per account (see migration 003): concurrent transactions of one merchant spread over them. */
const BALANCE_SHARDS = 16;

function assertBalanced(transaction: LedgerTransaction): void {
  const { entries } = transaction;
  if (entries.length < 2 || entries.length > ENTRIES_MAX) throw new Error(`a ledger transaction has 2 to ${ENTRIES_MAX} entries`);
  let sum = 0;
  for (const entry of entries) {
    if (!Number.isSafeInteger(entry.amount) || entry.amount === 0) throw new Error(`ledger amount ${entry.amount} is not a non-zero integer`);
    sum += entry.amount;
  }
  if (sum !== 0) throw new Error(`ledger transaction for ${transaction.referenceId} is unbalanced by ${sum}`);
}

/**
 * Writes one balanced transaction in the caller's database transaction, in a single statement: the transaction, its
 * entries, its statement row if it has one (available in `availableInSeconds`), and the balance rows of its accounts,
 * in one shard picked at random.
 * The statement row is dated when it is written, after the lock on the available balance, not when the database
 * transaction began: the statement then lists movements of available money in the order they took it.
 * Balance is asserted here and enforced again by the database at the end of the statement (trigger
 * ledger_entries_balanced). Returns the transaction's id.
 */
export function post(tx: Transaction, transaction: LedgerTransaction, availableInSeconds = 0): string {
  assertBalanced(transaction);
  if (transaction.entries.some((entry) => entry.account === 'merchant_available')) {
    lockAvailable(tx, transaction.productId, transaction.livemode, 'shared');
  }
  const id = newId('ltx');
  const { entries, statement } = transaction;
  tx.write(
    `WITH t AS (
       INSERT INTO ledger_transactions (id, product_id, livemode, reason, reference_id) VALUES ($1, $2, $3, $4, $5)
       RETURNING id, product_id, livemode),
     s AS (
       INSERT INTO balance_transactions (id, product_id, livemode, type, amount, fee, net, status, available_on, source, created_at)
       SELECT $9, t.product_id, t.livemode, $10, $11::bigint, $12::bigint, $11::bigint - $12::bigint, $13, c.at + $14 * interval '1 second', $5, c.at
         FROM t, (SELECT clock_timestamp() AS at) c WHERE $9::text IS NOT NULL),
     e AS (
       INSERT INTO ledger_entries (transaction_id, product_id, livemode, account, amount)
       SELECT t.id, t.product_id, t.livemode, e.account, e.amount FROM t, unnest($6::text[], $7::bigint[]) AS e (account, amount)
       RETURNING product_id, livemode, account, amount)
     INSERT INTO ledger_balances (product_id, livemode, account, shard, amount)
     SELECT product_id, livemode, account, $8, sum(amount) FROM e GROUP BY product_id, livemode, account ORDER BY account
     ON CONFLICT (product_id, livemode, account, shard) DO UPDATE SET amount = ledger_balances.amount + EXCLUDED.amount`,
    [id, transaction.productId, transaction.livemode, transaction.reason, transaction.referenceId, entries.map((e) => e.account), entries.map((e) => e.amount),
      Math.floor(Math.random() * BALANCE_SHARDS), statement ? newId('txn') : null, statement?.type ?? null, statement?.amount ?? null, statement?.fee ?? null,
      statement?.status ?? null, availableInSeconds],
  );
  return id;
}

/**
 * The merchant's available balance, locked until the transaction ends: `shared` by every posting that moves it (they
 * go on side by side), `exclusive` by a payout, which reads it and takes from it with nothing moving it meanwhile.
 */
export function lockAvailable(tx: Transaction, productId: string, livemode: boolean, mode: 'shared' | 'exclusive'): void {
  const lock = mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  tx.write(`SELECT ${lock}(hashtextextended('merchant_available:' || $1 || ':' || $2::text, 0))`, [productId, livemode]);
}

/** A succeeded payment's pending statement row becomes available, in the settlement's transaction. */
export function markAvailable(tx: Transaction, paymentIntentIds: string[]): void {
  tx.write(
    `UPDATE balance_transactions SET status = 'available', available_on = now() WHERE type = 'charge' AND source = ANY($1::text[]) AND status = 'pending'`,
    [paymentIntentIds],
  );
}

const STATEMENT_COLUMNS = 'id, product_id, livemode, type, amount, fee, net, status, available_on, source, payout_id, created_at';
/** What a merchant's statement reads. */
export const STATEMENT_LIST: Listed = { table: 'balance_transactions', columns: STATEMENT_COLUMNS };

export interface StatementRow {
  id: string;
  type: StatementLine['type'];
  amount: number;
  fee: number;
  net: number;
  status: StatementLine['status'];
  available_on: Date;
  source: string;
  payout_id: string | null;
  created_at: Date;
}

export async function findStatementRow(db: Queryable, merchant: Merchant, id: string): Promise<StatementRow | undefined> {
  const [row] = await db.query<StatementRow>(`SELECT ${STATEMENT_COLUMNS} FROM balance_transactions WHERE id = $1 AND product_id = $2 AND livemode = $3`, [
    id,
    merchant.productId,
    merchant.livemode,
  ]);
  return row;
}

/** The merchant's available and pending sums, as text so that they are exact whatever their size. */
export async function balanceSums(db: Queryable, merchant: Pick<Merchant, 'productId' | 'livemode'>): Promise<{ available: string; pending: string }> {
  const [row] = await db.query<{ available: string; pending: string }>(
    `SELECT coalesce(sum(amount) FILTER (WHERE account = 'merchant_available'), 0)::text AS available,
            coalesce(sum(amount) FILTER (WHERE account = 'merchant_pending'), 0)::text AS pending
       FROM ledger_balances
      WHERE product_id = $1 AND livemode = $2 AND account IN ('merchant_available', 'merchant_pending')`,
    [merchant.productId, merchant.livemode],
  );
  return row!;
}

/**
 * Whether the product ever took a live payment: its first one wrote its first live balance rows, which stay. A lookup
 * on the balances' primary key.
 */
export async function hadLivePayment(db: Queryable, productId: string): Promise<boolean> {
  const [row] = await db.query<{ live: boolean }>(`SELECT EXISTS (SELECT 1 FROM ledger_balances WHERE product_id = $1 AND livemode) AS live`, [productId]);
  return row!.live;
}
