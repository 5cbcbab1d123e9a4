import { TransactionAbortedError, type PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { FolderInUseError, lockFolder } from './folder-lock.js';
import { CONNECT_TIMEOUT_MS, NotPrimaryError, Primary } from './primary.js';
import { inThisThread, pgliteSession } from './pglite/session.js';
import { startPgliteThread, type EngineThread } from './pglite/thread.js';
import { countTraffic, runAfter, type ReadConfig } from './sent-ahead.js';
import { Queued } from './queued.js';
import { committed, failureOf, NEVER_LOST, rolledBack, rowsAfterCommit, transactionOn, type Db, type Statement, type Traffic, type Transaction } from './types.js';

const POOL_SIZE = 10;
/** Distinct statement texts prepared by name, on either engine (a limit well above the service's own set). */
const PREPARED_MAX = 1_000;
const STATEMENT_TIMEOUT_MS = 15_000;
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;
/** A listener whose connection dropped tries again after this long, doubling up to the maximum. */
const LISTEN_RETRY_MS = 100;
const LISTEN_RETRY_MAX_MS = 5_000;
// Deadlocks and serialization failures (and a statement prepared before a schema change, below) are safe to retry:
// the transaction left nothing behind.
const RETRYABLE_CODES = new Set(['40001', '40P01']);
// The server refused a write as a standby (25006), or is shutting down or starting (57P01-57P03): the primary may have
// moved, and the connection is given up.
const LOST_PRIMARY_CODES = new Set(['25006', '57P01', '57P02', '57P03']);
const refusedAsLostPrimary = (error: unknown) => error instanceof pg.DatabaseError && LOST_PRIMARY_CODES.has(error.code ?? '');
/** Not an answer of the server's to a statement: the connection itself failed, or the server is going away. */
const connectionFailed = (error: unknown) => !(error instanceof pg.DatabaseError) || refusedAsLostPrimary(error);
const TRANSACTION_ATTEMPTS_MAX = 3;

const INT8_OID = 20;
const BYTEA_OID = 17;
const NUMERIC_OID = 1700;

/** int8 columns (amounts, counts) become numbers; a value beyond 2^53 is a bug we refuse to round. */
function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`int8 value ${text} is outside the safe integer range`);
  return value;
}

/** The server's refusal to run a named statement whose result columns changed since it was prepared. */
function isStalePlan(error: unknown): boolean {
  const { code, routine } = (error ?? {}) as { code?: unknown; routine?: unknown };
  return code === '0A000' && routine === 'RevalidateCachedQuery';
}

/** The pool and the primary its new connections go to. */
interface PrimaryPool {
  pool: pg.Pool;
  primary: Primary;
}

/**
 * Runs a statement on `client`, after the statements `ahead` of it (a transaction's BEGIN and writes) in one round trip;
 * `sending` is called as that exchange is handed to the connection.
 */
type Run = (client: pg.PoolClient, statement: Statement, ahead?: readonly Statement[], sending?: () => void) => Promise<pg.QueryResult>;

/**
 * Runs statements as named prepared statements. Named statements are parsed once per connection; the name is derived
 * from the text so it never clashes. Past PREPARED_MAX distinct texts, new ones run unnamed: every connection keeps
 * what it prepared until it closes. Names carry a generation. When another process's migration changes the columns a
 * prepared statement returns (a column added under `SELECT *`), the server refuses that statement on every connection
 * that prepared it, for good. The first refusal starts a new generation, so every text is prepared again under a new
 * name, and the statement, or the transaction it aborted, runs once more. Only a schema change starts one: a handful
 * over a process's life.
 */
function preparedStatements(): Run {
  let generation = 0;
  const names = new Map<string, string>();
  const named = ({ sql, params, read }: Statement): ReadConfig => {
    let name = names.get(sql);
    if (name === undefined && names.size < PREPARED_MAX) {
      name = `s${generation}_${names.size}`;
      names.set(sql, name);
    }
    return { ...(name ? { name } : {}), text: sql, values: params as unknown[] | undefined, read };
  };
  return async (client, statement, ahead = [], sending) => {
    const preparedIn = generation;
    try {
      const result = await runAfter(client, ahead.map(named), named(statement), sending);
      statement.read?.(() => result.rows);
      return result;
    } catch (error) {
      if (isStalePlan(error) && preparedIn === generation) {
        generation += 1;
        names.clear();
      }
      throw error;
    }
  };
}

const exec = async (client: pg.PoolClient, script: string) => {
  await client.query(script);
};

/**
 * Runs `work` on a client of the pool, which is discarded afterwards if its connection failed or `work` said so
 * (`broke`). A server restart under a statement emits 'error' on the client we hold (the pool only listens to idle
 * ones); unheard, it would end the process. The statement in flight fails on its own. A connection that failed, or
 * could not be made, may mean the primary is gone: the pool looks for it again.
 */
async function withClient<T>(pool: PrimaryPool, work: (client: pg.PoolClient, broke: (lostConnection?: unknown) => void) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.pool.connect();
  } catch (error) {
    if (connectionFailed(error)) pool.primary.suspect();
    throw error;
  }
  let broken = false;
  // Called with `false` when the connection still works but must not be reused; otherwise (an 'error' event) it failed.
  const broke = (lostConnection?: unknown) => {
    broken = true;
    if (lostConnection !== false) pool.primary.suspect();
  };
  client.on('error', broke);
  try {
    return await work(client, broke);
  } finally {
    client.off('error', broke);
    client.release(broken);
  }
}

/**
 * Runs one statement on a client of the pool. The pool's own `query` discards the connection after any error, so one
 * caller's refused statement (a constraint, bad text) would cost a new connection and every statement prepared on it
 * again, and a merchant sending such requests would slow every other; here a statement the server refused keeps its
 * connection, and only a failure of the connection itself discards it.
 */
function queryOnPool<Row>(pool: PrimaryPool, run: Run, sql: string, params: readonly unknown[] | undefined): Promise<Row[]> {
  return withClient(pool, async (client, broke) => {
    try {
      return (await run(client, { sql, params })).rows as Row[];
    } catch (error) {
      if (connectionFailed(error)) broke();
      throw error;
    }
  });
}

/**
 * Runs `work` in one transaction on `client`. BEGIN and the writes the work queues go ahead of the next statement, or of
 * COMMIT, in its round trip: a transaction that reads nothing is one round trip, and one that runs nothing sends
 * nothing. Its rollback effects run when it rolls back, the server's refusal of its COMMIT included; none run when the
 * COMMIT got no answer, since whether it committed is then unknown.
 */
async function inTransactionOn<T>(client: pg.PoolClient, broke: (lostConnection?: unknown) => void, run: Run, work: (tx: Transaction) => Promise<T>): Promise<T> {
  const queued = new Queued(true);
  const tx = transactionOn({
    query: async <Row>(sql: string, params?: readonly unknown[]) => (await queued.answer(() => run(client, { sql, params }, queued.take()))).rows as Row[],
    write: (sql, params) => queued.write({ sql, params }),
    writeReturning: (sql, params) => rowsAfterCommit(tx, (read) => queued.write({ sql, params, read })),
    exec: async (script) => {
      const waiting = queued.drain();
      if (waiting) await queued.answer(() => run(client, waiting.statement, waiting.ahead));
      await queued.answer(() => exec(client, script));
    },
  });
  let commitSent = false;
  try {
    const result = await work(tx);
    const last = queued.commit();
    // COMMIT of a transaction that an error aborted (and its work caught) rolls back instead, as on the other engine.
    // Whether it committed is unknown only once its exchange is handed over: a failure before it is a rollback.
    const sending = () => {
      commitSent = true;
    };
    if (last && (await run(client, { sql: 'COMMIT' }, last, sending)).command === 'ROLLBACK') {
      rolledBack(tx);
      throw new TransactionAbortedError();
    }
    committed(tx);
    return result;
  } catch (error) {
    queued.close();
    if (refusedAsLostPrimary(error)) broke();
    if (queued.begun) await client.query('ROLLBACK').catch(broke);
    if (!commitSent || error instanceof pg.DatabaseError) rolledBack(tx);
    throw failureOf(tx, error);
  }
}

/** Runs `work` in a transaction on a client of the pool, again (up to a limit) when the failure is safe to retry. */
async function transactionOnPool<T>(pool: PrimaryPool, run: Run, work: (tx: Transaction) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await withClient(pool, (client, broke) => inTransactionOn(client, broke, run, work));
    } catch (error) {
      const retryable = RETRYABLE_CODES.has((error as { code?: string }).code ?? '') || isStalePlan(error);
      if (attempt < TRANSACTION_ATTEMPTS_MAX && retryable) continue;
      throw error;
    }
  }
}

/**
 * PostgreSQL through a pool of connections to the primary among DATABASE_URL's hosts. Each new connection checks that
 * its host still accepts writes, so a pool never serves from a standby.
 */
export async function openPostgres(connectionString: string): Promise<Db> {
  const primary = await Primary.of(connectionString);
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
  const traffic: Traffic = { roundTrips: 0, statements: 0 };
  // Each connection is made to the primary as last found (a connection string given to a client wins over its parts).
  class PrimaryClient extends pg.Client {
    constructor(config: pg.ClientConfig) {
      super({ ...config, connectionString: primary.url });
      countTraffic(this, traffic);
    }
  }
  const pool = new pg.Pool({
    Client: PrimaryClient as unknown as new () => pg.ClientBase,
    max: POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    types,
    onConnect: async (client: pg.ClientBase) => {
      const question = { text: 'SELECT pg_is_in_recovery() AS standby', query_timeout: CONNECT_TIMEOUT_MS };
      const { rows } = await client.query<{ standby: boolean }>(question);
      if (!rows[0]!.standby) return;
      primary.suspect();
      const { host, port } = client as pg.Client;
      throw new NotPrimaryError(`${host}:${port}`);
    },
  });
  // An idle client losing its connection (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const run = preparedStatements();
  const primaryPool = { pool, primary };
  return {
    engine: 'postgres',
    query: async (sql, params) => {
      try {
        return await queryOnPool(primaryPool, run, sql, params);
      } catch (error) {
        // Refused before it ran: nothing happened, and the new generation prepares it afresh.
        if (!isStalePlan(error)) throw error;
        return queryOnPool(primaryPool, run, sql, params);
      }
    },
    exec: (script) =>
      withClient(primaryPool, async (client, broke) => {
        // A script may leave its connection inside a transaction it opened when it fails: that connection is not reused.
        await exec(client, script).catch((error: unknown) => {
          broke(connectionFailed(error));
          throw error;
        });
      }),
    transaction: (work) => transactionOnPool(primaryPool, run, work),
    session: (work) =>
      withClient(primaryPool, (client, broke) => {
        // Whatever the work leaves set on the connection goes with it: it is not reused.
        broke(false);
        return work({ query: async <Row>(sql: string, params?: readonly unknown[]) => (await run(client, { sql, params })).rows as Row[], exec: (script) => exec(client, script) });
      }),
    listen: (channel, handlers) => listenPostgres(() => primary.url, channel, handlers),
    lost: NEVER_LOST,
    poolState: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: POOL_SIZE }),
    traffic: () => ({ ...traffic }),
    close: () => {
      primary.close();
      return pool.end();
    },
  };
}

/** A connection of its own outside the pool, re-established after any failure until stopped. */
async function listenPostgres(
  connectionString: () => string,
  channel: string,
  handlers: Parameters<Db['listen']>[1],
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | null = null;
  let retryMs = LISTEN_RETRY_MS;
  let timer: NodeJS.Timeout | null = null;
  const connect = async (): Promise<void> => {
    timer = null;
    const attempt = new pg.Client({ connectionString: connectionString(), connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      client = null;
      handlers.listening(false);
      void attempt.end().catch(() => {});
      if (!stopped) timer = setTimeout(() => void connect(), retryMs);
      retryMs = Math.min(retryMs * 2, LISTEN_RETRY_MAX_MS);
    };
    attempt.on('error', onLost);
    attempt.on('end', onLost);
    attempt.on('notification', (message) => {
      if (message.channel === channel) handlers.notified(message.payload ?? '');
    });
    try {
      await attempt.connect();
      await attempt.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch {
      onLost();
      return;
    }
    if (stopped || lost) {
      await attempt.end().catch(() => {});
      return;
    }
    client = attempt;
    retryMs = LISTEN_RETRY_MS;
    handlers.listening(true);
  };
  await connect();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    const current = client;
    client = null;
    await current?.end().catch(() => {});
  };
}

/** The same JavaScript types as the pg engine returns: numbers for int8, Buffers for bytea, text for numeric. */
const PGLITE_PARSERS = {
  [INT8_OID]: parseInt8,
  [BYTEA_OID]: (text: string) => Buffer.from(text.slice(2), 'hex'),
  [NUMERIC_OID]: (text: string) => text,
};

/**
 * The embedded engine as the service runs it: one PostgreSQL session on a thread of its own, in `dataDir` (a folder, or
 * `memory://`), optionally starting from a dumped data dir. `answerWaitMs` bounds a transaction's wait for one answer
 * (a minute unless given); past it the engine is given up as stuck, and lost.
 */
export async function openPglite(dataDir: string, options: { loadDataDir?: Blob; answerWaitMs?: number } = {}): Promise<Db> {
  const { loadDataDir, answerWaitMs } = options;
  const unlock = dataDir.startsWith('memory://') ? async () => {} : await lockFolder(dataDir).catch(startFailure);
  let engine: EngineThread;
  try {
    engine = await startPgliteThread(loadDataDir ? { dataDir, loadDataDir } : { dataDir }, answerWaitMs ? { answerWaitMs } : {});
  } catch (error) {
    await unlock();
    throw error;
  }
  const stop = async () => {
    await engine.stop();
    await unlock();
  };
  try {
    return await pgliteSession(engine.exchange, { preparedMax: PREPARED_MAX, parsers: PGLITE_PARSERS, stop, lost: engine.lost });
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A folder that cannot be locked is one the engine cannot start on; one in use says so as it is. */
function startFailure(error: unknown): never {
  if (error instanceof FolderInUseError) throw error;
  throw new Error(`The embedded database did not start: ${(error as Error).message}`);
}

/** The same session on an engine running in this thread: the benchmark's direct baseline, and tests that need the engine. */
export function pgliteDb(lite: PGlite, preparedMax = PREPARED_MAX): Promise<Db> {
  return pgliteSession(inThisThread(lite), { preparedMax, parsers: PGLITE_PARSERS, stop: () => lite.close(), lost: NEVER_LOST });
}

export function openDb(options: { databaseUrl: string | null; dataDir: string }): Promise<Db> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir);
}
