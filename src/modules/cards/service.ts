import type { Db, Queryable, Transaction } from '../../db/types.js';
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

  /** Saves a card, in the transaction of the binding or payment that captured it. */
  insert(tx: Transaction, card: Omit<CardRow, 'status' | 'created_at'>): Promise<CardRow> {
    return store.insertCard(tx, card);
  }

  /** Blocks an ACTIVE card the bank reported blocked, in the transaction that records the report. */
  block(tx: Transaction, id: string): void {
    store.blockCard(tx, id);
  }

  /** The merchant's card, read in `on` (a transaction, to decide on it there). */
  find(on: Queryable, merchant: Merchant, id: string): Promise<CardRow | undefined> {
    return store.findCard(on, merchant, id);
  }

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
