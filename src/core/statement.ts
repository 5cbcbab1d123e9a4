// One SQL statement assembled from the common table expressions of several modules, each numbering its parameters
// in turn. A money movement written this way is one round trip and, outside an explicit transaction, one commit;
// every expression sees the same snapshot. A statement may write for several items at once (charges written in a
// group), each item's rows from arrays numbered by `i`; a write guarded by an `Items` expression happens only for the
// items whose `i` it holds. Expressions are passed between modules as handles, never as names spelled twice.
import type { Queryable } from '../db/types.js';

/** A common table expression of one statement, by handle; interpolated into SQL, it is its name. */
export class Expression {
  constructor(readonly name: string) {}

  toString(): string {
    return this.name;
  }
}

/** An expression whose rows name items of the statement in a column `i`. */
export class Items extends Expression {
  /** That the item numbered in `column` is one of these. */
  has(column: string): string {
    return `${column} IN (SELECT i FROM ${this.name})`;
  }
}

/** That the item numbered in `column` is one of `items`; without a guard (null), every item is. */
/**
 * A store's column list (stores name their columns, never `*`, so that a column a later migration adds changes no
 * statement's answer), each prefixed with a table's alias.
 */
export const qualified = (columns: string, alias: string): string =>
  columns
    .split(', ')
    .map((column) => `${alias}.${column}`)
    .join(', ');

export const guarded = (items: Items | null, column: string): string => (items === null ? 'true' : items.has(column));

export class Statement {
  private readonly values: unknown[] = [];
  private readonly expressions: string[] = [];
  private readonly names = new Set<string>();

  /** The placeholder for `value`, with `cast` where the context does not tell PostgreSQL its type. */
  param(value: unknown, cast?: string): string {
    this.values.push(value);
    return cast ? `$${this.values.length}::${cast}` : `$${this.values.length}`;
  }

  /** Adds `name AS (sql)`; later expressions and the final query refer to it by the handle returned. */
  with(name: string, sql: string): Expression {
    return new Expression(this.#add(name, sql));
  }

  /** Adds an expression whose rows name items in a column `i`, to guard writes with. */
  items(name: string, sql: string): Items {
    return new Items(this.#add(name, sql));
  }

  /** Runs every expression, then `final`, as one statement. */
  run<Row = Record<string, unknown>>(db: Queryable, final: string): Promise<Row[]> {
    const text = this.expressions.length === 0 ? final : `WITH ${this.expressions.join(',\n')}\n${final}`;
    return db.query<Row>(text, this.values);
  }

  #add(name: string, sql: string): string {
    if (this.names.has(name)) throw new Error(`the statement already has an expression ${name}`);
    this.names.add(name);
    this.expressions.push(`${name} AS (${sql})`);
    return name;
  }
}
