import type { Db } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { notFound } from '../../core/errors.js';
import { listPage, type List, type ListFilter } from '../../core/pagination.js';
import type { Card, CardsQuery } from './schema.js';
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

export class CardsService {
  constructor(private readonly db: Db) {}

  async get(merchant: Merchant, id: string): Promise<Card> {
    const row = await store.findCard(this.db, merchant, id);
    if (!row) throw notFound('card');
    return presentCard(row);
  }

  list(merchant: Merchant, query: CardsQuery): Promise<List<Card>> {
    const filters: ListFilter[] = [];
    if (query.status !== undefined) filters.push({ column: 'status', value: query.status });
    if (query.customerRef !== undefined) filters.push({ column: 'customer_ref', value: query.customerRef });
    return listPage(this.db, store.CARD_LIST, merchant, query, presentCard, filters);
  }

  async delete(merchant: Merchant, id: string): Promise<Card> {
    const row = await store.deleteCard(this.db, merchant, id);
    if (!row) throw notFound('card');
    return presentCard(row);
  }
}
