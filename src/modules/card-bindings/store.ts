import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { qualified, Statement } from '../../core/statement.js';
import type { SessionStatus } from '../checkout-sessions/state.js';
import { addOpenSessions } from '../checkout-sessions/store.js';

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

/** Inserts the binding and its PENDING session in one statement. */
export async function insertBinding(tx: Transaction, merchant: Merchant, binding: NewBinding): Promise<BindingRow> {
  const st = new Statement();
  const inserted = st.with(
    'binding_new',
    `INSERT INTO card_bindings (id, product_id, livemode, checkout_token, customer_ref, return_url)
     VALUES (${st.param(binding.id)}, ${st.param(merchant.productId)}, ${st.param(merchant.livemode, 'boolean')}, ${st.param(binding.checkoutToken)},
             ${st.param(binding.customerRef)}, ${st.param(binding.returnUrl)})
     RETURNING ${BINDING_COLUMNS}, now() + ${st.param(binding.ttlSeconds, 'integer')} * interval '1 second' AS expires_at`,
  );
  const session = addOpenSessions(st, 'card_binding', inserted);
  const [row] = await st.run<BindingRow>(tx, `SELECT b.*, s.status, s.failure_code, false AS expired FROM ${inserted} b, ${session} s`);
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

export async function attachCard(tx: Transaction, bindingId: string, cardId: string): Promise<void> {
  await tx.query('UPDATE card_bindings SET card_id = $2 WHERE id = $1', [bindingId, cardId]);
}
