// The database as the rest of the service sees it, on either engine.

/** Anything that runs one SQL statement: the database itself or an open transaction. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

declare const IN_TRANSACTION: unique symbol;

/**
 * A Queryable inside an open transaction: what runs on it commits or rolls back together. Functions whose statements
 * must commit together take this type, so that handing them the database itself does not compile.
 */
export interface Transaction extends Queryable {
  readonly [IN_TRANSACTION]: true;
  /**
   * Runs a statement whose answer the work does not read: it is sent with the transaction's next statement, or with its
   * COMMIT, and runs just before it, in the same round trip. Its failure fails that statement, and the transaction.
   */
  write(sql: string, params?: readonly unknown[]): void;
  /**
   * Runs a statement as `write` does, in the round trip of the transaction's next statement or of its COMMIT, and hands
   * over its rows once the transaction has committed; the promise never settles when it does not. The work must not
   * wait for them: they come after it.
   */
  writeReturning<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

export interface Db extends Queryable {
  readonly engine: 'postgres' | 'pglite';
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  /**
   * Runs `work` on one connection, outside any transaction: each statement commits alone, as statements that no
   * transaction may hold need (CREATE INDEX CONCURRENTLY), and a lock or setting of the session lasts across them.
   * `work` must undo what it set or locked: the embedded engine has one session for everything.
   */
  session<T>(work: (session: Queryable) => Promise<T>): Promise<T>;
  /**
   * Follows NOTIFY on `channel` until the returned function is called, handing each notification's payload to
   * `notified`. `listening` says whether notifications are heard: it turns false when the connection drops
   * (notifications in between are lost) and true once it listens again.
   */
  listen(channel: string, handlers: { notified: (payload: string) => void; listening: (heard: boolean) => void }): Promise<() => Promise<void>>;
  /**
   * Settles, with the reason, once this database can serve nothing more in this process and only a new process can
   * recover it: the embedded engine failed, its thread ended, or it was given up as stuck. Never on PostgreSQL, whose
   * pool connects again after a server restart.
   */
  readonly lost: Promise<Error>;
  /** The connection pool as it stands (PostgreSQL); the embedded engine has one session and no pool. */
  poolState?(): PoolState;
  /**
   * What this process has sent the database since it opened it, counted as it goes on the wire: on PostgreSQL, over the
   * pool's connections (not a listener's, nor the primary's checks).
   */
  traffic(): Traffic;
  close(): Promise<void>;
}

export interface PoolState {
  /** Connections open, of `max`; those idle; queries waiting for one. */
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

/**
 * Round trips (exchanges: what the service sends before it waits for the answer, one Sync or one simple query each) and
 * statements sent (each bound and executed, or each simple query; one after a failure in its exchange is skipped by the
 * server, and still counted): a charge's cost is mostly its round trips.
 */
export interface Traffic {
  roundTrips: number;
  statements: number;
}

/** `lost` of a database that is never lost to the process. */
export const NEVER_LOST: Promise<Error> = new Promise(() => {});

/** The Transaction of a connection the engine runs one on (begun, or begun with its first statement); only the engines call it. */
export const transactionOn = (open: Omit<Transaction, typeof IN_TRANSACTION>): Transaction => open as Transaction;

/**
 * Writes a transaction's work may queue before they are sent: well above the largest batch that queues writes without
 * a statement between them (a settlement: two per payment, 200 payments), and a bound on a loop that never reads.
 */
export const WRITES_WAITING_MAX = 1_000;

/** A statement and its parameters, as a transaction's writes wait to be sent. */
export interface Statement {
  sql: string;
  params?: readonly unknown[] | undefined;
  /**
   * Given the statement's rows once its exchange answers, as a function that parses them, when a write's rows are read
   * (`writeReturning`): those of a statement sent ahead of another are parsed only once the transaction committed, so a
   * row that cannot be parsed does not fail the exchange.
   */
  read?: ((rows: () => unknown[]) => void) | undefined;
}

/** What waits for each open transaction to end: effects for its commit, and for its rollback. */
const awaitingCommit = new WeakMap<Transaction, Array<() => void>>();
const awaitingRollback = new WeakMap<Transaction, Array<() => void>>();
/** How each transaction's failure reads for its caller, when its work said (`refusedAs`). */
const refusals = new WeakMap<Transaction, (error: unknown) => unknown>();

/**
 * `writeReturning` for the engines: queues the statement with `queue`, and hands over the rows it answered once `tx`
 * has committed, or the failure to parse them. A committed statement always answered; one that did not would be a bug
 * of the engine, and says so.
 */
export function rowsAfterCommit<Row>(tx: Transaction, queue: (read: (rows: () => unknown[]) => void) => void): Promise<Row[]> {
  let answered: (() => unknown[]) | undefined;
  queue((rows) => (answered = rows));
  return new Promise((resolve, reject) =>
    afterCommit(tx, () => {
      try {
        if (!answered) throw new Error('A committed statement left no answer');
        resolve(answered() as Row[]);
      } catch (error) {
        reject(error);
      }
    }),
  );
}

/**
 * Says how a failure of `tx` reads for whoever runs it: a check the database makes in a statement whose answer the
 * work does not wait for (`write`, `writeReturning`) can only refuse by failing the transaction, and `read` turns that
 * failure into the work's own refusal. It is given every failure, and answers what it does not know unchanged.
 */
export function refusedAs(tx: Transaction, read: (error: unknown) => unknown): void {
  const before = refusals.get(tx);
  refusals.set(tx, before ? (error) => read(before(error)) : read);
}

/** The failure of `tx` as its caller gets it; only the engines call it. */
export function failureOf(tx: Transaction, error: unknown): unknown {
  return refusals.get(tx)?.(error) ?? error;
}

/**
 * Runs `effect` once `tx` has committed, and never if it rolls back: for what is kept outside the database (counts), which
 * a rolled-back or retried transaction must not leave behind. The effect must not throw: the change is committed.
 */
export function afterCommit(tx: Transaction, effect: () => void): void {
  awaitOn(awaitingCommit, tx, effect);
}

/**
 * Runs `effect` once `tx` has rolled back, and never if it commits: to give back what the transaction took outside the
 * database (a request counted against a limit). A commit whose outcome is unknown (the connection failed during COMMIT)
 * runs neither kind of effect.
 */
export function afterRollback(tx: Transaction, effect: () => void): void {
  awaitOn(awaitingRollback, tx, effect);
}

/** Runs the effects that waited for `tx`'s COMMIT to succeed; only the engines call it. */
export function committed(tx: Transaction): void {
  awaitingRollback.delete(tx);
  runAwaiting(awaitingCommit, tx);
}

/** Runs the effects that waited for `tx` to roll back; only the engines call it. */
export function rolledBack(tx: Transaction): void {
  awaitingCommit.delete(tx);
  runAwaiting(awaitingRollback, tx);
}

function awaitOn(awaiting: WeakMap<Transaction, Array<() => void>>, tx: Transaction, effect: () => void): void {
  const effects = awaiting.get(tx);
  if (effects === undefined) awaiting.set(tx, [effect]);
  else effects.push(effect);
}

/** An effect that throws is skipped: the transaction has ended either way, and a count lost must not say otherwise. */
function runAwaiting(awaiting: WeakMap<Transaction, Array<() => void>>, tx: Transaction): void {
  const effects = awaiting.get(tx);
  awaiting.delete(tx);
  for (const effect of effects ?? []) {
    try {
      effect();
    } catch {
      // Skipped: the transaction's end stands.
    }
  }
}

export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23505';
}
