import { Type, type Static, type TProperties } from '@sinclair/typebox';
import type { Queryable } from '../db/types.js';
import type { Merchant } from '../core/merchant.js';
import { ApiError } from './errors.js';
import { isCalendarDay } from './calendar.js';

export const LIST_LIMIT_DEFAULT = 10;
export const LIST_LIMIT_MAX = 100;

const pageFields = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT, description: 'Page size, 1 to 100; 10 if absent' })),
  starting_after: Type.Optional(Type.String({ maxLength: 64, description: 'Id of the last object of the previous page' })),
};

/** An instant as ISO 8601 writes it, with seconds and a zone; `instantOf` checks the calendar. */
const INSTANT = { pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?(Z|[+-]\\d{2}:\\d{2})$', maxLength: 40 };

/** The bound as the database reads it, once its date and time are checked to exist (no 2026-02-30, no 24:00). */
function instantOf(text: string, param: string): string {
  const [hour, minute, second] = text.slice(11, 19).split(':').map(Number) as [number, number, number];
  const zoneHours = text.endsWith('Z') ? 0 : Math.abs(Number(text.slice(-6, -3)));
  if (!isCalendarDay(text.slice(0, 10)) || hour > 23 || minute > 59 || second > 59 || zoneHours > 14) {
    throw new ApiError('VALIDATION_ERROR', `${param} is not a real date and time: ${text}`, { param });
  }
  return text;
}

/** A page of a list that has no filters (an endpoint's deliveries). */
export const PageQuery = Type.Object(pageFields, { additionalProperties: false });
export type PageQuery = Static<typeof PageQuery> & { limit: number };

/** The query of a list: its page, the creation range every list takes, and the list's own `filters`. */
export function listQuery<P extends TProperties>(filters: P) {
  return Type.Object(
    {
      ...pageFields,
      'created[gte]': Type.Optional(Type.String({ ...INSTANT, description: 'Only objects created at or after this time: ISO 8601, 2026-11-24T00:00:00Z' })),
      'created[lt]': Type.Optional(Type.String({ ...INSTANT, description: 'Only objects created before this time: ISO 8601, 2026-11-25T00:00:00+05:00' })),
      ...filters,
    },
    { additionalProperties: false },
  );
}
export const ListQuery = listQuery({});
/** A list's query once validated: an absent `limit` has been given its default. */
export type ListQuery = Static<typeof ListQuery> & { limit: number };

/** A list of `item`s, named after it (`OrderList` for `Order`) in the API's description. */
export const listEnvelope = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({ object: Type.Literal('list'), data: Type.Array(item), has_more: Type.Boolean() }, { title: `${item.title ?? 'Item'}List` });

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

/**
 * A table listed through this helper, with the columns its rows are read with: each such table has id, product_id,
 * livemode and a `seq` that orders it strictly. Its store names it.
 */
export interface Listed {
  table: 'orders' | 'cards' | 'payment_intents' | 'refunds' | 'receipts' | 'balance_transactions' | 'payouts' | 'payment_links' | 'webhook_endpoints' | 'events' | 'request_log';
  columns: string;
}

/**
 * A condition beyond product and mode: a column (named by code, never by the caller) compared with a bound value, or a
 * payment's card among the saved cards of a customer.
 */
export type ListFilter =
  | {
      column: 'type' | 'status' | 'customer_ref' | 'card_id' | 'order_id' | 'payment_intent_id' | 'object_id' | 'source' | 'payout_id' | 'payment_link_id';
      op?: '=' | '<>';
      value: string;
    }
  | { column: 'active'; op?: never; value: boolean }
  | { cardOfCustomer: string };

/** The WHERE conditions of a merchant's list, binding values into `params`. */
function conditions(merchant: Merchant, query: ListQuery, filters: ListFilter[], params: unknown[]): string {
  const bind = (value: unknown) => `$${params.push(value)}`;
  const parts = [`product_id = ${bind(merchant.productId)}`, `livemode = ${bind(merchant.livemode)}`];
  for (const filter of filters) {
    if ('cardOfCustomer' in filter) {
      parts.push(`card_id IN (SELECT id FROM cards WHERE product_id = $1 AND livemode = $2 AND customer_ref = ${bind(filter.cardOfCustomer)})`);
    } else {
      parts.push(`${filter.column} ${filter.op ?? '='} ${bind(filter.value)}`);
    }
  }
  if (query['created[gte]'] !== undefined) parts.push(`created_at >= ${bind(instantOf(query['created[gte]'], 'created[gte]'))}::timestamptz`);
  if (query['created[lt]'] !== undefined) parts.push(`created_at < ${bind(instantOf(query['created[lt]'], 'created[lt]'))}::timestamptz`);
  return parts.join(' AND ');
}

/**
 * One page of a merchant's objects, newest first: by creation time, then `seq` (a strict order for objects created in
 * the same instant), which each listed table indexes after product and mode, and after each column it filters on.
 * Fetching one row more than asked makes `has_more` exact.
 */
export async function listPage<Row, Item>(
  db: Queryable,
  { table, columns }: Listed,
  merchant: Merchant,
  query: ListQuery,
  present: (row: Row) => Item,
  filters: ListFilter[] = [],
): Promise<List<Item>> {
  const params: unknown[] = [];
  const where = conditions(merchant, query, filters, params);
  let after = '';
  if (query.starting_after !== undefined) {
    // The creation time as the database's text keeps its microseconds, which a JavaScript Date would drop.
    const [cursor] = await db.query<{ created: string; seq: number }>(
      `SELECT created_at::text AS created, seq FROM ${table} WHERE ${where} AND id = $${params.length + 1}`,
      [...params, query.starting_after],
    );
    if (!cursor) {
      throw new ApiError('VALIDATION_ERROR', 'starting_after must be the id of an object in this list', { param: 'starting_after' });
    }
    after = ` AND (created_at, seq) < ($${params.push(cursor.created)}::timestamptz, $${params.push(cursor.seq)})`;
  }
  const rows = await db.query<Row>(
    `SELECT ${columns} FROM ${table} WHERE ${where}${after} ORDER BY created_at DESC, seq DESC LIMIT $${params.push(query.limit + 1)}`,
    params,
  );
  return { object: 'list', data: rows.slice(0, query.limit).map(present), has_more: rows.length > query.limit };
}
