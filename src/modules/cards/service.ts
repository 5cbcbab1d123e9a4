import type { Db } from '../../db/db.js';
import type { Merchant } from '../../http/auth.js';
import { notFound } from '../../http/errors.js';
import { listPage, type List, type ListQuery } from '../../http/pagination.js';
import type { Card } from './schema.js';
import * as store from './store.js';
import type { CardRow } from './store.js';

export function presentCard(row: CardRow): Card {
  return {
    id: row.id,
    object: 'card',
    status: row.status,
    maskedPan: row.masked_pan,
    rail: row.rail,
    expiry: row.expiry,
    customerRef: row.customer_ref,
    livemode: row.livemode,
    created: row.created_at.toISOString(),
  };
}

export async function getCard(db: Db, merchant: Merchant, id: string): Promise<Card> {
  const row = await store.findCard(db, merchant, id);
  if (!row) throw notFound('card');
  return presentCard(row);
}

export function listCards(db: Db, merchant: Merchant, query: ListQuery): Promise<List<Card>> {
  return listPage(db, 'cards', merchant, query, presentCard);
}

export async function deleteCard(db: Db, merchant: Merchant, id: string): Promise<Card> {
  const row = await store.deleteCard(db, merchant, id);
  if (!row) throw notFound('card');
  return presentCard(row);
}
