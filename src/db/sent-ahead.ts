// Statements sent ahead of another on PostgreSQL, in its exchange: a transaction's BEGIN, and the writes whose answers
// its work does not wait for, are bound and executed before the statement that follows them, and one Sync ends them
// all, so the server answers them at once. A write whose rows are read later (`writeReturning`) is described too, and
// its rows are kept apart from the statement's own. Each round trip saved is a network's wait for a database on another
// machine, and a write and a wake-up on both sides here. An error skips what follows it up to the Sync, as the protocol
// says: the exchange fails with the first error, and the transaction it aborted is rolled back by its caller.
import { createRequire } from 'node:module';
import pg from 'pg';
import type { Statement, Traffic } from './types.js';

const require = createRequire(import.meta.url);
/** node-postgres's own mapping of a parameter to its text (or bytes), which its Query applies when it binds. */
const { prepareValue } = require('pg/lib/utils.js') as { prepareValue: (value: unknown) => string | Buffer | null };
/** node-postgres's result of one statement, which parses its rows with the client's types. */
interface Result {
  addFields(fields: unknown): void;
  parseRow(fields: unknown): unknown;
}
const Result = require('pg/lib/result.js') as new (rowMode: undefined, types: unknown) => Result;

/** What node-postgres's Query and connection do inside, which the statements here extend; not in its published types. */
interface QueryInternals {
  text: string;
  name: string;
  _result: { _types: unknown };
  requiresPreparation(): boolean;
  prepare(connection: ProtocolConnection): void;
  handleRowDescription(message: unknown): void;
  handleDataRow(message: unknown): void;
  handleCommandComplete(message: unknown, connection: ProtocolConnection): void;
}
interface ProtocolConnection {
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  parse(config: { text: string; name: string }): void;
  bind(config: { statement: string; values: readonly (string | Buffer | null)[] }): void;
  describe(config: { type: 'P'; name: string }): void;
  execute(config: Record<string, never>): void;
  sync(): void;
  query(text: string): void;
}
type Callback = (error: Error | undefined, result: pg.QueryResult) => void;
const Query = pg.Query as unknown as new (config: pg.QueryConfig & { callback: Callback }) => pg.Query & QueryInternals;

/** A statement ready to bind: its parameters already mapped, so that one that cannot be sent fails before any byte is. */
interface Bound {
  name: string;
  text: string;
  values: (string | Buffer | null)[];
  /** Given its rows, when they are read; the rows of a statement ahead are otherwise not. */
  read?: Statement['read'];
}

/** A statement and what reads its rows, as the database layer hands it over. */
export type ReadConfig = pg.QueryConfig & Pick<Statement, 'read'>;

/** The rows of a statement ahead as they came, parsed when they are read. */
interface AheadRows {
  fields: unknown;
  values: unknown[];
}

/** A statement sent after others in the same exchange; its answer is its own alone, the rows of those ahead are read apart. */
class Preceded extends Query {
  /** The statement ahead whose answer comes now; past the last, the answer is this statement's own. */
  #answering = 0;
  #aheadRows: AheadRows | undefined;

  constructor(
    config: pg.QueryConfig & { callback: Callback },
    private readonly ahead: readonly Bound[],
  ) {
    super(config);
  }

  override requiresPreparation(): boolean {
    // A statement without parameters would go as a simple query, which cannot follow others before their Sync.
    return true;
  }

  override prepare(connection: ProtocolConnection): void {
    for (const { name, text, values, read } of this.ahead) {
      // A statement without a name is parsed where it runs; a named one was prepared on this connection before.
      if (name === '') connection.parse({ text, name });
      connection.bind({ statement: name, values });
      // Only a statement whose rows are read is described: its rows come with their columns' names and types.
      if (read) connection.describe({ type: 'P', name: '' });
      connection.execute({});
    }
    super.prepare(connection);
  }

  // The answers of the statements ahead come first: their rows and completions are not this statement's.
  override handleRowDescription(message: { fields: unknown }): void {
    if (this.#answering === this.ahead.length) return super.handleRowDescription(message);
    this.#aheadRows = { fields: message.fields, values: [] };
  }

  override handleDataRow(message: { fields: unknown }): void {
    if (this.#answering === this.ahead.length) return super.handleDataRow(message);
    this.#aheadRows?.values.push(message.fields);
  }

  override handleCommandComplete(message: unknown, connection: ProtocolConnection): void {
    if (this.#answering === this.ahead.length) return super.handleCommandComplete(message, connection);
    const came = this.#aheadRows;
    const types = this._result._types;
    this.ahead[this.#answering]!.read?.(() => {
      if (!came) return [];
      const result = new Result(undefined, types);
      result.addFields(came.fields);
      return came.values.map((values) => result.parseRow(values));
    });
    this.#aheadRows = undefined;
    this.#answering += 1;
  }
}

/** Parses a named statement on the connection, without running it. */
class Preparation extends Query {
  override requiresPreparation(): boolean {
    return true;
  }

  override prepare(connection: ProtocolConnection): void {
    connection.parse({ text: this.text, name: this.name });
    // As node-postgres marks a statement it parses, so that the answer records it as parsed.
    connection.submittedNamedStatements[this.name] = this.text;
    connection.sync();
  }
}

const connectionOf = (client: pg.ClientBase) => (client as unknown as { connection: ProtocolConnection }).connection;

/**
 * Counts into `traffic` what `client` sends on its connection: each exchange (one Sync, or one simple query) and each
 * statement (one Execute, or one simple query).
 */
export function countTraffic(client: pg.ClientBase, traffic: Traffic): void {
  const connection = connectionOf(client);
  const { sync, execute, query } = connection;
  connection.sync = () => {
    traffic.roundTrips += 1;
    sync.call(connection);
  };
  connection.execute = (config) => {
    traffic.statements += 1;
    execute.call(connection, config);
  };
  connection.query = (text) => {
    traffic.roundTrips += 1;
    traffic.statements += 1;
    query.call(connection, text);
  };
}

/** Whether node-postgres would send a query on `client`: it refuses one, unsent, once its connection failed or ends. */
function sendable(client: pg.ClientBase): boolean {
  const { _queryable: queryable, _ending: ending } = client as unknown as { _queryable: boolean; _ending: boolean };
  return queryable && !ending;
}

function submit(client: pg.ClientBase, make: (callback: Callback) => pg.Query): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    const callback: Callback = (error, result) => (error ? reject(error) : resolve(result));
    client.query(make(callback));
  });
}

/** The statement with its parameters mapped as node-postgres would bind them: one that cannot be sent fails here. */
function bound({ name = '', text, values = [], read }: ReadConfig): Bound {
  return { name, text, values: values.map((value) => prepareValue(value)), read };
}

/**
 * Runs `statement` on `client` after `ahead`, in one round trip. Every parameter is mapped before any byte is sent:
 * mapped while binding, a failure would leave node-postgres taking a name for parsed that it then closed. Named
 * statements the connection has not parsed yet are parsed first, each in an exchange of its own (once per connection):
 * parsed inside the exchange, a name would be recorded as parsed before the server had parsed it. `sending` is called
 * as the statement's own exchange is handed to the connection; a failure before it sent none of it.
 */
export async function runAfter(client: pg.ClientBase, ahead: readonly ReadConfig[], statement: pg.QueryConfig, sending = () => {}): Promise<pg.QueryResult> {
  const main = bound(statement);
  const before = ahead.map(bound);
  // As PostgreSQL names a connection that does not exist (08003), so that the caller is told the database is unavailable.
  if (!sendable(client)) throw Object.assign(new Error('The connection to PostgreSQL failed; nothing was sent on it'), { code: '08003' });
  if (before.length === 0) {
    // Nothing ahead: node-postgres sends it as it would, a new name parsed in the same exchange.
    sending();
    return client.query(main);
  }
  const connection = connectionOf(client);
  for (const { name, text } of [...before, main]) {
    if (name !== '' && connection.parsedStatements[name] === undefined) await submit(client, (callback) => new Preparation({ name, text, callback }));
  }
  sending();
  return submit(client, (callback) => new Preceded({ ...main, callback }, before));
}
