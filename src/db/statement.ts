// One SQL statement assembled from the common table expressions of several modules, each numbering its parameters
// in turn. A money movement written this way is one round trip and, outside an explicit transaction, one commit;
// every expression sees the same snapshot. A statement may write for several items at once (charges written in a
// group), each item's rows from arrays numbered by `i`; a write joined to a `guard` expression happens only for the items
// whose `i` it holds.
import type { Queryable } from './db.js';

export class Statement {
  private readonly values: unknown[] = [];
  private readonly expressions: string[] = [];

  /** The placeholder for `value`, with `cast` where the context does not tell PostgreSQL its type. */
  param(value: unknown, cast?: string): string {
    this.values.push(value);
    return cast ? `$${this.values.length}::${cast}` : `$${this.values.length}`;
  }

  /** Adds `name AS (sql)`; later expressions and the final query may refer to `name`. */
  with(name: string, sql: string): void {
    this.expressions.push(`${name} AS (${sql})`);
  }

  /** Runs every expression, then `final`, as one statement. */
  run<Row = Record<string, unknown>>(db: Queryable, final: string): Promise<Row[]> {
    const text = this.expressions.length === 0 ? final : `WITH ${this.expressions.join(',\n')}\n${final}`;
    return db.query<Row>(text, this.values);
  }
}

/** That the item `v.i` is one of those in `guard` (an expression of the statement with a column `i`); without a guard, every item is. */
export function inGuard(guard: string | null): string {
  return guard === null ? 'true' : `v.i IN (SELECT i FROM ${guard})`;
}
