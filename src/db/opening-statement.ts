// A transaction's first statement on PostgreSQL carries the BEGIN that opens it: BEGIN is bound and executed, then the
// statement runs, and one Sync ends both, so the server answers them in one round trip. Sent alone, BEGIN costs a round
// trip of its own: a network's wait for a database on another machine, a write and a wake-up on both sides here.
import pg from 'pg';

/** The name BEGIN is prepared under on each connection of the pool. */
const BEGIN = 'tolov_begin';

/** What node-postgres's Query does inside, which the opening statement extends; not in its published types. */
interface QueryInternals {
  requiresPreparation(): boolean;
  prepare(connection: ProtocolConnection): void;
  handleCommandComplete(message: unknown, connection: ProtocolConnection): void;
}
interface ProtocolConnection {
  bind(config: { statement: string }): void;
  execute(config: Record<string, never>): void;
}
type Callback = (error: Error | undefined, result: pg.QueryResult) => void;
const Query = pg.Query as unknown as new (config: pg.QueryConfig & { callback: Callback }) => pg.Query & QueryInternals;

/** A statement sent after BEGIN in the same exchange; its answer is the statement's alone. */
class Opening extends Query {
  #begun = false;

  override requiresPreparation(): boolean {
    // A statement without parameters would go as a simple query, which cannot follow a BEGIN before its Sync.
    return true;
  }

  override prepare(connection: ProtocolConnection): void {
    connection.bind({ statement: BEGIN });
    connection.execute({});
    super.prepare(connection);
  }

  override handleCommandComplete(message: unknown, connection: ProtocolConnection): void {
    // The first completion is BEGIN's.
    if (this.#begun) return super.handleCommandComplete(message, connection);
    this.#begun = true;
  }
}

/**
 * Prepares BEGIN under its name on a new connection. Parsing it means running it once: it opens a transaction, which
 * commits empty.
 */
export async function prepareBegin(client: pg.ClientBase, timeoutMs: number): Promise<void> {
  // Bounded, as every question of a new connection is: a server gone silent must not hold a place of the pool.
  const begin = { name: BEGIN, text: 'BEGIN', query_timeout: timeoutMs };
  const commit = { text: 'COMMIT', query_timeout: timeoutMs };
  await client.query(begin);
  await client.query(commit);
}

/**
 * Opens a transaction on `client` with `statement` in it, in one round trip. When the statement fails, the transaction
 * BEGIN opened is still open, as when BEGIN was sent alone: the caller rolls it back.
 */
export function openWith<Row extends pg.QueryResultRow>(client: pg.ClientBase, statement: pg.QueryConfig): Promise<pg.QueryResult<Row>> {
  return new Promise((resolve, reject) => {
    const callback: Callback = (error, result) => (error ? reject(error) : resolve(result as pg.QueryResult<Row>));
    client.query(new Opening({ ...statement, callback }));
  });
}
