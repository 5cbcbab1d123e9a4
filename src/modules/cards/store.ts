import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import type { Listed } from '../../core/pagination.js';

const CARD_COLUMNS = 'id, product_id, livemode, status, rail, rail_token, masked_pan, expiry, customer_ref, created_at';
/** What a merchant's list of them reads. */
export const CARD_LIST: Listed = { table: 'cards', columns: CARD_COLUMNS };

export type CardStatus = 'ACTIVE' | 'BLOCKED' | 'DELETED';

export interface CardRow {
  id: string;
  product_id: string;
  livemode: boolean;
  status: CardStatus;
  rail: 'uzcard' | 'humo';
  rail_token: string;
  masked_pan: string;
  expiry: string;
  customer_ref: string | null;
  created_at: Date;
}

export async function insertCard(tx: Transaction, card: Omit<CardRow, 'status' | 'created_at'>): Promise<CardRow> {
  const [row] = await tx.query<CardRow>(
    `INSERT INTO cards (id, product_id, livemode, status, rail, rail_token, masked_pan, expiry, customer_ref)
     VALUES ($1, $2, $3, 'ACTIVE', $4, $5, $6, $7, $8) RETURNING ${CARD_COLUMNS}`,
    [card.id, card.product_id, card.livemode, card.rail, card.rail_token, card.masked_pan, card.expiry, card.customer_ref],
  );
  return row!;
}

export async function findCard(db: Queryable, merchant: Merchant, id: string): Promise<CardRow | undefined> {
  const [row] = await db.query<CardRow>(`SELECT ${CARD_COLUMNS} FROM cards WHERE id = $1 AND product_id = $2 AND livemode = $3`, [
    id,
    merchant.productId,
    merchant.livemode,
  ]);
  return row;
}

/** Deleting is final and repeatable: a deleted card stays deleted. */
export async function deleteCard(db: Queryable, merchant: Merchant, id: string): Promise<CardRow | undefined> {
  const [row] = await db.query<CardRow>(
    `UPDATE cards SET status = 'DELETED' WHERE id = $1 AND product_id = $2 AND livemode = $3 RETURNING ${CARD_COLUMNS}`,
    [id, merchant.productId, merchant.livemode],
  );
  return row;
}

/** Blocks an ACTIVE card the bank reported blocked; a deleted card stays deleted. */
export function blockCard(tx: Transaction, id: string): void {
  tx.write(`UPDATE cards SET status = 'BLOCKED' WHERE id = $1 AND status = 'ACTIVE'`, [id]);
}
