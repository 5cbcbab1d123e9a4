// The embedded engine's one PostgreSQL session, spoken to in the wire protocol. Whoever runs the engine (this thread or
// a thread of its own, `pglite-thread.ts`) only executes protocol bytes, in the order they were sent; everything else
// happens here: statements are parsed and described once under a name of their own, then run in one exchange (bind,
// describe, execute, sync), and answers are parsed into rows. `PGlite.query` would send every statement as the unnamed
// one (parse, describe, bind, describe, execute, sync), so PostgreSQL would parse, analyse and plan it again each time.
import { parse, protocol, TransactionAbortedError, types, type messages, type PGlite } from '@electric-sql/pglite';
import { setNewest } from '../lib/bounded-map.js';
import type { Db, Queryable } from './db.js';

/**
 * Executes protocol bytes on the session, strictly in the order of the calls, and answers the backend's bytes: `send`
 * without waiting, `wait` blocking this thread until the answer is there. A transaction holds the whole session, so
 * while its statement runs nothing else could use the engine: it waits, and spends no turn of the event loop between
 * its statements. Everything else is sent, so the engine works while this thread serves requests.
 */
export interface Exchange {
  send(message: Uint8Array): Promise<Uint8Array>;
  wait(message: Uint8Array): Uint8Array;
}

export interface SessionOptions {
  /** Distinct statement texts kept prepared; past it the oldest is closed first, so the session's memory is bounded. */
  preparedMax: number;
  parsers: Record<number, (text: string, typeId?: number) => unknown>;
  /** Stops whatever runs the engine, once every exchange sent before has been answered. */
  stop: () => Promise<void>;
  /** The engine's loss, as `Db.lost`. */
  lost: Promise<Error>;
}

interface Prepared {
  name: string;
  /** Type of each parameter as PostgreSQL resolved it, which picks the serializer. */
  parameterTypes: number[];
}

type Message = messages.BackendMessage;

const { serialize } = protocol;
const { DatabaseError, NotificationResponseMessage, CommandCompleteMessage } = protocol.messages;
/** Callers waiting for a turn; past it a call is refused rather than queued without bound. */
const WAITING_MAX = 10_000;
/** With the u flag a surrogate pair is one code point, so only a lone surrogate matches. */
const LONE_SURROGATE = /\p{Surrogate}/gu;
const SYNC = serialize.sync();
// The same query PGlite runs at start for its own serializers: every array type with its element type.
const ARRAY_TYPES_SQL = `SELECT b.oid, b.typarray FROM pg_catalog.pg_type a
  LEFT JOIN pg_catalog.pg_type b ON b.oid = a.typelem WHERE a.typcategory = 'A' GROUP BY b.oid, b.typarray ORDER BY b.oid`;

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * On an engine in this thread, which runs the bytes at once. No syncToFs: PGlite's Node and memory file systems write
 * through, and have nothing to sync.
 */
export function inThisThread(lite: PGlite): Exchange {
  return { send: async (message) => lite.execProtocolRawSync(message), wait: (message) => lite.execProtocolRawSync(message) };
}

/**
 * Who may send next. Statements outside a transaction go at once, one after another: the engine runs them in the
 * order sent, so none waits for the one before to be answered. A transaction has the session to itself from its
 * BEGIN until its end is sent. A turn ends when its last exchange is sent, not answered; turns are given in the order
 * asked, so a stream of statements cannot keep a transaction waiting.
 */
class Turns {
  #statements = 0;
  #transaction = false;
  readonly #waiting: { transaction: boolean; start: () => void }[] = [];

  /** Undefined when the turn is taken at once (the common case, with no promise to await). */
  take(transaction: boolean): Promise<void> | undefined {
    if (this.#waiting.length === 0 && this.#admits(transaction)) {
      this.#admit(transaction);
      return undefined;
    }
    if (this.#waiting.length >= WAITING_MAX) throw new Error(`More than ${WAITING_MAX} calls wait for the embedded database`);
    return new Promise((start) => this.#waiting.push({ transaction, start }));
  }

  end(transaction: boolean): void {
    if (transaction) this.#transaction = false;
    else this.#statements -= 1;
    while (this.#waiting.length > 0 && this.#admits(this.#waiting[0]!.transaction)) {
      const next = this.#waiting.shift()!;
      this.#admit(next.transaction);
      next.start();
    }
  }

  #admits(transaction: boolean): boolean {
    return !this.#transaction && (!transaction || this.#statements === 0);
  }

  #admit(transaction: boolean): void {
    if (transaction) this.#transaction = true;
    else this.#statements += 1;
  }
}

/** The embedded engine's `Db`: one session, reached through `exchange`. */
export async function pgliteSession(exchange: Exchange, options: SessionOptions): Promise<Db> {
  const parsers: Record<number, (text: string, typeId?: number) => unknown> = { ...types.parsers, ...options.parsers };
  const serializers: Record<number, (value: unknown) => string> = { ...types.serializers };
  const listeners = new Map<string, Set<() => void>>();
  const parser = new protocol.Parser();
  const turns = new Turns();
  // Closing refuses new work at once; `closed` once everything asked before has been sent.
  let closing = false;
  let closed = false;

  // Exchanges sent and not yet answered.
  let sending = 0;
  /**
   * Sends one exchange, or waits for it (inside a transaction), and reads its answer: the first error is thrown,
   * notifications go to their listeners.
   */
  const send = async (message: Uint8Array, waited: boolean): Promise<Message[]> => {
    if (closed) throw new Error('The embedded database is closed');
    let answer: Uint8Array;
    if (waited) answer = exchange.wait(message);
    else {
      sending += 1;
      try {
        answer = await exchange.send(message);
      } finally {
        sending -= 1;
      }
    }
    const messages: Message[] = [];
    let failure: Error | undefined;
    parser.parse(answer, (received) => {
      if (received instanceof DatabaseError) failure ??= received;
      else if (received instanceof NotificationResponseMessage) {
        for (const notified of listeners.get(received.channel) ?? []) queueMicrotask(notified);
      } else messages.push(received);
    });
    if (failure) throw failure;
    return messages;
  };

  // In order of preparation; a text being prepared is a promise, so concurrent first runs parse it once.
  const prepared = new Map<string, Prepared>();
  const preparing = new Map<string, Promise<Prepared>>();
  let named = 0;

  const prepare = (sql: string, waited: boolean): Promise<Prepared> => {
    let pending = preparing.get(sql);
    if (pending) return pending;
    const name = `tolov_${++named}`;
    pending = (async () => {
      try {
        // A failed parse throws (after the sync, so the session is ready again) and leaves no name behind.
        const answer = await send(concat([serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), SYNC]), waited);
        const statement = { name, parameterTypes: parse.parseDescribeStatementResults(answer) };
        const evicted = setNewest(prepared, sql, statement, options.preparedMax);
        // Sent before anything can use the new name, and after every run that used the old one was sent.
        if (evicted) void send(concat([serialize.close({ type: 'S', name: evicted.name }), SYNC]), waited).catch(() => {});
        return statement;
      } finally {
        preparing.delete(sql);
      }
    })();
    preparing.set(sql, pending);
    return pending;
  };

  const execute = (statement: Prepared, params: readonly unknown[] | undefined, waited: boolean): Promise<Message[]> => {
    const values = (params ?? []).map((value, index) => {
      if (value === null || value === undefined) return null;
      const serializer = serializers[statement.parameterTypes[index]!];
      // A lone surrogate (valid in a JavaScript string, not in UTF-8) would make the bind message count its length
      // wrong and the engine refuse the bytes; it becomes U+FFFD, as node-postgres encodes it on the other engine.
      return (serializer ? serializer(value) : String(value)).replace(LONE_SURROGATE, '\uFFFD');
    });
    const message = concat([serialize.bind({ statement: statement.name, values }), serialize.describe({ type: 'P' }), serialize.execute({}), SYNC]);
    return send(message, waited);
  };

  /**
   * Runs one statement. The run is sent in the same turn of the event loop as the lookup of its name, so a name is
   * never sent after the close of its eviction.
   */
  const run = async <Row>(sql: string, params: readonly unknown[] | undefined, waited: boolean, sent?: () => void): Promise<Row[]> => {
    let statement = prepared.get(sql);
    while (!statement) {
      const made = await prepare(sql, waited);
      // Evicted meanwhile by a newer text (past `preparedMax` only): prepared again.
      if (prepared.get(sql) === made) statement = made;
    }
    const answer = execute(statement, params, waited);
    sent?.();
    return (parse.parseResults(await answer, parsers)[0]?.rows ?? []) as Row[];
  };

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

  const simple = async (script: string, waited: boolean, sent?: () => void): Promise<Message[]> => {
    const answer = send(serialize.query(script), waited);
    sent?.();
    return answer;
  };

  const db: Db = {
    engine: 'pglite',
    query: (sql, params) => alone((sent) => run(sql, params, false, sent)),
    exec: (script) => alone(async (sent) => void (await simple(script, false, sent))),
    async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
      const end = await turn(true);
      try {
        // Waited for when the engine is idle; otherwise sent, so that this thread serves requests while the statements
        // sent before it run.
        await simple('BEGIN', sending === 0);
        let open = true;
        const tx: Queryable = {
          query: async (sql, params) => {
            if (!open) throw new Error('Transaction is closed');
            return run(sql, params, true);
          },
          exec: async (script) => {
            if (!open) throw new Error('Transaction is closed');
            await simple(script, true);
          },
        };
        let result: T;
        try {
          result = await work(tx);
        } catch (error) {
          open = false;
          // The work's error is what the caller needs; a session that cannot roll back fails the next call anyway.
          await simple('ROLLBACK', true, end).catch(() => {});
          throw error;
        }
        open = false;
        const committed = await simple('COMMIT', true, end);
        // COMMIT of a transaction that an error aborted (and its work swallowed) rolls back instead.
        if (committed.some((m) => m instanceof CommandCompleteMessage && m.text === 'ROLLBACK')) {
          throw new TransactionAbortedError();
        }
        return result;
      } finally {
        end();
      }
    },
    async listen(channel, handlers) {
      const notified = () => handlers.notified();
      const channelListeners = listeners.get(channel) ?? new Set();
      listeners.set(channel, channelListeners.add(notified));
      const quoted = `"${channel.replaceAll('"', '""')}"`;
      await db.exec(`LISTEN ${quoted}`);
      // One session: nothing is ever missed.
      handlers.listening(true);
      return async () => {
        channelListeners.delete(notified);
        if (channelListeners.size === 0 && !closing) {
          listeners.delete(channel);
          await db.exec(`UNLISTEN ${quoted}`);
        }
      };
    },
    lost: options.lost,
    async close() {
      if (closing) return;
      // After every statement and transaction that asked before; whatever asks from now on is refused.
      const last = turns.take(true);
      closing = true;
      if (last) await last;
      closed = true;
      await options.stop();
    },
  };

  // Unnamed (a simple query), so the session's named statements are only the service's own.
  const arrayTypes = parse.parseResults(await alone((sent) => simple(ARRAY_TYPES_SQL, false, sent)), parsers)[0]!.rows;
  for (const { oid, typarray } of arrayTypes as { oid: number; typarray: number }[]) {
    serializers[typarray] = (value) => types.arraySerializer(value, serializers[oid], typarray);
    parsers[typarray] = (text) => types.arrayParser(text, parsers[oid]!, typarray);
  }
  return db;
}
