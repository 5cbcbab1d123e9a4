import type { Queryable, Transaction } from '../../db/types.js';
import { guarded, Statement, type Items } from '../../core/statement.js';
import type { Merchant } from '../../core/merchant.js';
import { newId } from '../../core/ids.js';

/** The chart of accounts (seeded by migration 001). */
export type Account = 'merchant_pending' | 'merchant_available' | 'rail_clearing' | 'platform_fees';

export interface Entry {
  account: Account;
  /** Tiyin; positive credits the account, negative debits it. */
  amount: number;
}

export interface LedgerTransaction {
  productId: string;
  livemode: boolean;
  /** Why money moved, e.g. `payment_succeeded`. */
  reason: string;
  /** The business object that moved it (a payment intent, a refund). */
  referenceId: string;
  entries: Entry[];
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
 * Adds to `st` the writes of balanced transactions, `transactions[i - 1]` for item i of the statement (null: none for
 * that item), for the items `guard` holds (null: every item): the transactions, their entries, and the balance rows of
 * their accounts, summed per account into one shard. Balance is asserted here and enforced again by the database at
 * the end of the statement (trigger ledger_entries_balanced), so a transaction's entries are inserted together.
 * Returns the transactions' ids.
 */
export function addPostings(st: Statement, transactions: (LedgerTransaction | null)[], guard: Items | null): (string | null)[] {
  const ids = transactions.map((transaction) => {
    if (transaction === null) return null;
    assertBalanced(transaction);
    return newId('ltx');
  });
  const each = <T>(of: (transaction: LedgerTransaction) => T) => transactions.map((transaction) => (transaction === null ? null : of(transaction)));
  const entries = transactions.flatMap((transaction, index) => (transaction === null ? [] : transaction.entries.map((entry) => ({ id: ids[index]!, entry }))));
  const values = st.with(
    'ledger_v',
    `SELECT * FROM unnest(${st.param(ids, 'text[]')}, ${st.param(each((t) => t.productId), 'text[]')}, ${st.param(each((t) => t.livemode), 'boolean[]')},
                          ${st.param(each((t) => t.reason), 'text[]')}, ${st.param(each((t) => t.referenceId), 'text[]')})
            WITH ORDINALITY AS v (id, product_id, livemode, reason, reference_id, i)`,
  );
  const inserted = st.with(
    'ledger_t',
    `INSERT INTO ledger_transactions (id, product_id, livemode, reason, reference_id)
     SELECT v.id, v.product_id, v.livemode, v.reason, v.reference_id FROM ${values} v
      WHERE v.id IS NOT NULL AND ${guarded(guard, 'v.i')}
     RETURNING id, product_id, livemode`,
  );
  const entryRows = st.with(
    'ledger_e',
    `INSERT INTO ledger_entries (transaction_id, product_id, livemode, account, amount)
     SELECT t.id, t.product_id, t.livemode, e.account, e.amount
       FROM ${inserted} t JOIN unnest(${st.param(entries.map((e) => e.id), 'text[]')}, ${st.param(entries.map((e) => e.entry.account), 'text[]')},
                                   ${st.param(entries.map((e) => e.entry.amount), 'bigint[]')}) AS e (transaction_id, account, amount)
         ON e.transaction_id = t.id
     RETURNING product_id, livemode, account, amount`,
  );
  st.with(
    'ledger_b',
    `INSERT INTO ledger_balances (product_id, livemode, account, shard, amount)
     SELECT product_id, livemode, account, ${st.param(Math.floor(Math.random() * BALANCE_SHARDS), 'integer')}, sum(amount)
       FROM ${entryRows} GROUP BY product_id, livemode, account ORDER BY product_id, livemode, account
     ON CONFLICT (product_id, livemode, account, shard) DO UPDATE SET amount = ledger_balances.amount + EXCLUDED.amount`,
  );
  return ids;
}

/** Writes one balanced transaction in the caller's database transaction, in a single statement; returns its id. */
export async function post(tx: Transaction, transaction: LedgerTransaction): Promise<string> {
  const st = new Statement();
  const [id] = addPostings(st, [transaction], null);
  await st.run(tx, 'SELECT 1');
  return id!;
}

/** The merchant's available and pending sums, as text so that they are exact whatever their size. */
export async function balanceSums(db: Queryable, merchant: Merchant): Promise<{ available: string; pending: string }> {
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
