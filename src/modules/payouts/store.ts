import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';

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
