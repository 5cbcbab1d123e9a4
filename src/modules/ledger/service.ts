// The merchant's balance: the ledger's entries as summed, in the same transactions, into the balance rows.
import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { notFound } from '../../core/errors.js';
import { listPage, type List, type ListFilter } from '../../core/pagination.js';
import type { BalanceTransaction, BalanceTransactionsQuery } from './schema.js';
import * as store from './store.js';
import { balanceSums, hadLivePayment, type LedgerTransaction, type StatementRow } from './store.js';

export type { Entry, LedgerTransaction, StatementLine } from './store.js';

function presentStatementRow(row: StatementRow): BalanceTransaction {
  return {
    id: row.id,
    object: 'balance_transaction',
    type: row.type,
    amount: row.amount,
    fee: row.fee,
    net: row.net,
    status: row.status,
    availableOn: row.available_on.toISOString(),
    source: row.source,
    payout: row.payout_id,
    created: row.created_at.toISOString(),
  };
}

export interface Balance {
  object: 'balance';
  /** Exact: a number while it is a safe integer, a BigInt (written as exact JSON digits) beyond 2^53. */
  available: number | bigint;
  pending: number | bigint;
  currency: 'UZS';
  livemode: boolean;
}

/** A sum read as text, so that it is exact whatever its size. */
function exactSum(text: string): number | bigint {
  const sum = BigInt(text);
  return sum >= BigInt(Number.MIN_SAFE_INTEGER) && sum <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(sum) : sum;
}

export class LedgerService {
  constructor(
    private readonly db: Queryable,
    /** How long a succeeded payment's net stays pending: its statement row says when it becomes available. */
    private readonly settlementDelaySeconds: number,
  ) {}

  /**
   * Writes one balanced transaction in the caller's database transaction, with the change that moved the money, and
   * its statement row: pending until settlement for a payment, available at once for anything else.
   */
  post(tx: Transaction, transaction: LedgerTransaction): string {
    return store.post(tx, transaction, transaction.statement?.status === 'pending' ? this.settlementDelaySeconds : 0);
  }

  /**
   * The merchant's available balance as of now, with nothing else moving it until the transaction ends (a payout's
   * read before it takes from it): a refund or a settlement of the merchant waits for that transaction.
   */
  async lockAvailable(tx: Transaction, merchant: Pick<Merchant, 'productId' | 'livemode'>): Promise<bigint> {
    store.lockAvailable(tx, merchant.productId, merchant.livemode, 'exclusive');
    return BigInt((await balanceSums(tx, merchant)).available);
  }

  /** Settled payments' statement rows become available, in the settlement's transaction. */
  markAvailable(tx: Transaction, paymentIntentIds: string[]): void {
    store.markAvailable(tx, paymentIntentIds);
  }

  /** The merchant's statement, newest first. */
  statement(merchant: Merchant, query: BalanceTransactionsQuery): Promise<List<BalanceTransaction>> {
    const filters: ListFilter[] = [];
    if (query.type !== undefined) filters.push({ column: 'type', value: query.type });
    if (query.payout !== undefined) filters.push({ column: 'payout_id', value: query.payout });
    if (query.source !== undefined) filters.push({ column: 'source', value: query.source });
    return listPage(this.db, store.STATEMENT_LIST, merchant, query, presentStatementRow, filters);
  }

  async statementRow(merchant: Merchant, id: string): Promise<BalanceTransaction> {
    const row = await store.findStatementRow(this.db, merchant, id);
    if (!row) throw notFound('balance transaction');
    return presentStatementRow(row);
  }

  async balance(merchant: Merchant): Promise<Balance> {
    const sums = await balanceSums(this.db, merchant);
    return { object: 'balance', available: exactSum(sums.available), pending: exactSum(sums.pending), currency: 'UZS', livemode: merchant.livemode };
  }
  /** Whether the product ever took a live payment (its event streams get a larger share once it has). */
  hadLivePayment(productId: string): Promise<boolean> {
    return hadLivePayment(this.db, productId);
  }

}
