import { Type, type Static } from '@sinclair/typebox';
import type { Queryable } from '../db/types.js';
import type { Merchant } from '../core/merchant.js';
import { ApiError } from './errors.js';

export const LIST_LIMIT_DEFAULT = 10;
export const LIST_LIMIT_MAX = 100;

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT, description: 'Page size, 1 to 100; 10 if absent' })),
    starting_after: Type.Optional(Type.String({ maxLength: 64, description: 'Id of the last object of the previous page' })),
  },
  { additionalProperties: false },
);
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
  table: 'orders' | 'cards' | 'payment_intents' | 'refunds' | 'webhook_endpoints' | 'events';
  columns: string;
}

/** A condition on one column, beyond product and mode; the column and operator come from code, the value is bound. */
export interface ListFilter {
  column: 'type' | 'status';
  op: '=' | '<>';
  value: string;
}

/**
 * One page of a merchant's objects, newest first. `seq` gives a strict total order even for objects created in the
 * same millisecond; fetching one row more than asked makes `has_more` exact.
 */
export async function listPage<Row, Item>(
  db: Queryable,
  { table, columns }: Listed,
  merchant: Merchant,
  query: ListQuery,
  present: (row: Row) => Item,
  filter?: ListFilter,
): Promise<List<Item>> {
  // The filter's value is bound after the parameters each query already has, at the position given.
  const filtered = (position: number) => (filter ? ` AND ${filter.column} ${filter.op} $${position}` : '');
  const filterParams = filter ? [filter.value] : [];
  let before = Number.MAX_SAFE_INTEGER;
  if (query.starting_after !== undefined) {
    const [cursor] = await db.query<{ seq: number }>(
      `SELECT seq FROM ${table} WHERE id = $1 AND product_id = $2 AND livemode = $3${filtered(4)}`,
      [query.starting_after, merchant.productId, merchant.livemode, ...filterParams],
    );
    if (!cursor) {
      throw new ApiError('VALIDATION_ERROR', 'starting_after must be the id of an object in this list', { param: 'starting_after' });
    }
    before = cursor.seq;
  }
  const rows = await db.query<Row>(
    `SELECT ${columns} FROM ${table} WHERE product_id = $1 AND livemode = $2 AND seq < $3${filtered(5)} ORDER BY seq DESC LIMIT $4`,
    [merchant.productId, merchant.livemode, before, query.limit + 1, ...filterParams],
  );
  return { object: 'list', data: rows.slice(0, query.limit).map(present), has_more: rows.length > query.limit };
}
