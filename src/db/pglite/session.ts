// The embedded engine's one PostgreSQL session, spoken to in the wire protocol. Whoever runs the engine (this thread or
// a thread of its own, `thread.ts`) only executes protocol bytes, in the order they were sent; everything else
// happens here: statements are parsed and described once under a name of their own, then run in one exchange (bind,
// describe, execute, sync), and answers are parsed into rows. `PGlite.query` would send every statement as the unnamed
// one (parse, describe, bind, describe, execute, sync), so PostgreSQL would parse, analyse and plan it again each time.
import { protocol, TransactionAbortedError, type PGlite } from '@electric-sql/pglite';
import { Queued } from '../queued.js';
import { committed, failureOf, rolledBack, rowsAfterCommit, transactionOn, type Db, type Statement, type Transaction } from '../types.js';
import { Turns } from './turns.js';
import { Wire, type Exchange, type Message } from './wire.js';

const { CommandCompleteMessage } = protocol.messages;

export interface SessionOptions {
  /** Distinct statement texts kept prepared; past it the oldest is closed first, so the session's memory is bounded. */
  preparedMax: number;
  parsers: Record<number, (text: string, typeId?: number) => unknown>;
  /** Stops whatever runs the engine, once every exchange sent before has been answered. */
  stop: () => Promise<void>;
  /** The engine's loss, as `Db.lost`. */
  lost: Promise<Error>;
}

/**
 * On an engine in this thread, which runs the bytes at once. No syncToFs: PGlite's Node and memory file systems write
 * through, and have nothing to sync.
 */
export function inThisThread(lite: PGlite): Exchange {
  return { send: async (message) => lite.execProtocolRawSync(message), wait: (message) => lite.execProtocolRawSync(message) };
}

/** The embedded engine's `Db`: one session, reached through `exchange`. */
export async function pgliteSession(exchange: Exchange, options: SessionOptions): Promise<Db> {
  const wire = new Wire(exchange, options.preparedMax, options.parsers);
  const turns = new Turns();
  // Closing refuses new work at once; the wire closes once everything asked before has been sent.
  let closing = false;

  /** Waits for a turn (a statement's, or a transaction's) and answers the function that ends it, once. */
  const turn = async (transaction: boolean): Promise<() => void> => {
    if (closing) throw new Error('The embedded database is closed');
    const waiting = turns.take(transaction);
    if (waiting) await waiting;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      turns.end(transaction);
    };
  };

  /** Outside a transaction: in a statement's turn, which ends once its run is sent. */
  const alone = async <T>(work: (sent: () => void) => Promise<T>): Promise<T> => {
    const sent = await turn(false);
    try {
      return await work(sent);
    } finally {
      sent();
    }
  };

  const db: Db = {
    engine: 'pglite',
    query: (sql, params) => alone((sent) => wire.run({ sql, params }, false, sent)),
    exec: (script) => alone(async (sent) => void (await wire.simple(script, false, sent))),
    transaction: async (work) => inTransaction(wire, await turn(true), work),
    session: async (work) => {
      const end = await turn(true);
      try {
        // Sent, not waited for: a statement of a session (an index build) may run longer than a waited one is given.
        return await work({ query: (sql, params) => wire.run({ sql, params }, false), exec: async (script) => void (await wire.simple(script, false)) });
      } finally {
        end();
      }
    },
    listen: (channel, handlers) => listen(db, wire, channel, handlers, () => closing),
    lost: options.lost,
    traffic: () => ({ ...wire.traffic }),
    async close() {
      if (closing) return;
      // After every statement and transaction that asked before; whatever asks from now on is refused.
      const last = turns.take(true);
      closing = true;
      if (last) await last;
      wire.closed = true;
      await options.stop();
    },
  };
  await wire.learnArrayTypes(alone);
  return db;
}

/**
 * Runs `work` in a transaction in the turn that `end` ends: the session is the transaction's until its end is sent. The
 * writes the work queues go ahead of its next statement, or of COMMIT, in the same exchange.
 */
async function inTransaction<T>(wire: Wire, end: () => void, work: (tx: Transaction) => Promise<T>): Promise<T> {
  try {
    // BEGIN goes with the first statement when the engine is idle. Otherwise it is sent now, not waited for, so that
    // this thread serves requests while the statements sent before it run.
    const idle = wire.sending === 0;
    if (!idle) await wire.simple('BEGIN', false);
    const queued = new Queued(idle);
    const transaction = transactionOn({
      query: async (sql, params) => queued.answer(() => wire.run({ sql, params }, true, undefined, queued.take())),
      write: (sql, params) => queued.write({ sql, params }),
      writeReturning: (sql, params) => rowsAfterCommit(transaction, (read) => queued.write({ sql, params, read })),
      exec: async (script) => {
        const waiting = queued.drain();
        if (waiting) await queued.answer(() => wire.run(waiting.statement, true, undefined, waiting.ahead));
        await queued.answer(() => wire.simple(script, true));
      },
    });
    const rollBack = async () => {
      // The work's error is what the caller needs; a session that cannot roll back fails the next call anyway.
      if (queued.begun) await wire.simple('ROLLBACK', true, end).catch(() => {});
      rolledBack(transaction);
    };
    let result: T;
    let last: Statement[] | undefined;
    try {
      result = await work(transaction);
      last = queued.commit();
    } catch (error) {
      queued.close();
      await rollBack();
      throw failureOf(transaction, error);
    }
    // The engine answers every COMMIT it gets, in this process: a refusal is a rollback. A write that failed left the
    // transaction open, aborted, and the ROLLBACK ends it; after COMMIT's own refusal it changes nothing.
    let answers: Message[] = [];
    try {
      if (last) answers = await wire.answerOf({ sql: 'COMMIT' }, true, undefined, last);
    } catch (error) {
      await rollBack();
      throw failureOf(transaction, error);
    }
    // COMMIT of a transaction that an error aborted (and its work swallowed) rolls back instead.
    if (answers.some((m) => m instanceof CommandCompleteMessage && m.text === 'ROLLBACK')) {
      rolledBack(transaction);
      throw new TransactionAbortedError();
    }
    committed(transaction);
    return result;
  } finally {
    end();
  }
}

/** Follows NOTIFY on `channel` on the one session: nothing is ever missed. */
async function listen(db: Db, wire: Wire, channel: string, handlers: Parameters<Db['listen']>[1], closing: () => boolean): Promise<() => Promise<void>> {
  const notified = (payload: string) => handlers.notified(payload);
  const channelListeners = wire.listeners.get(channel) ?? new Set();
  wire.listeners.set(channel, channelListeners.add(notified));
  const quoted = `"${channel.replaceAll('"', '""')}"`;
  await db.exec(`LISTEN ${quoted}`);
  handlers.listening(true);
  return async () => {
    channelListeners.delete(notified);
    if (channelListeners.size === 0 && !closing()) {
      wire.listeners.delete(channel);
      await db.exec(`UNLISTEN ${quoted}`);
    }
  };
}
