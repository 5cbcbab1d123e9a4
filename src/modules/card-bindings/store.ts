import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { qualified } from '../../core/sql.js';
import type { SessionStatus } from '../../core/session-statuses.js';

export interface BindingRow {
  id: string;
  product_id: string;
  livemode: boolean;
  checkout_token: string;
  customer_ref: string | null;
  return_url: string | null;
  card_id: string | null;
  created_at: Date;
  // From its session:
  status: SessionStatus;
  failure_code: string | null;
  expires_at: Date;
  expired: boolean;
}

const BINDING_COLUMNS = 'id, product_id, livemode, checkout_token, customer_ref, return_url, card_id, created_at';

export interface NewBinding {
  id: string;
  customerRef: string | null;
  returnUrl: string | null;
  checkoutToken: string;
  ttlSeconds: number;
}

/** Inserts the binding, whose session expires `ttlSeconds` from now by the database's clock. */
export async function insertBinding(tx: Transaction, merchant: Merchant, binding: NewBinding): Promise<Omit<BindingRow, 'status' | 'failure_code' | 'expired'>> {
  const [row] = await tx.query<Omit<BindingRow, 'status' | 'failure_code' | 'expired'>>(
    `INSERT INTO card_bindings (id, product_id, livemode, checkout_token, customer_ref, return_url)
     VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING ${BINDING_COLUMNS}, now() + $7 * interval '1 second' AS expires_at`,
    [binding.id, merchant.productId, merchant.livemode, binding.checkoutToken, binding.customerRef, binding.returnUrl, binding.ttlSeconds],
  );
  return row!;
}

export async function findBinding(db: Queryable, merchant: Merchant, id: string): Promise<BindingRow | undefined> {
  const [row] = await db.query<BindingRow>(
    `SELECT ${qualified(BINDING_COLUMNS, 'b')}, s.status, s.failure_code, s.expires_at, s.expires_at <= now() AS expired
       FROM card_bindings b JOIN checkout_sessions s ON s.token = b.checkout_token
      WHERE b.id = $1 AND b.product_id = $2 AND b.livemode = $3`,
    [id, merchant.productId, merchant.livemode],
  );
  return row;
}

export function attachCard(tx: Transaction, bindingId: string, cardId: string): void {
  tx.write('UPDATE card_bindings SET card_id = $2 WHERE id = $1', [bindingId, cardId]);
}
