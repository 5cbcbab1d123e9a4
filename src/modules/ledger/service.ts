// The merchant's balance: the ledger's entries as summed, in the same transactions, into the balance rows.
import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { balanceSums, hadLivePayment, post, type LedgerTransaction } from './store.js';

export type { Entry, LedgerTransaction } from './store.js';

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
  constructor(private readonly db: Queryable) {}

  /** Writes one balanced transaction in the caller's database transaction, with the change that moved the money. */
  post(tx: Transaction, transaction: LedgerTransaction): Promise<string> {
    return post(tx, transaction);
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
