// The wire protocol of the embedded engine's one session: statements are parsed and described once under a name of
// their own, then run in one exchange (bind, describe, execute, sync), and answers are parsed into rows.
import { parse, protocol, types, type messages } from '@electric-sql/pglite';
import { setNewest } from '../../lib/bounded-map.js';
import type { Statement, Traffic } from '../types.js';

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

interface Prepared {
  name: string;
  /** Type of each parameter as PostgreSQL resolved it, which picks the serializer. */
  parameterTypes: number[];
}

export type Message = messages.BackendMessage;

const { serialize } = protocol;
const { CommandCompleteMessage, DatabaseError, NotificationResponseMessage } = protocol.messages;
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

export class Wire {
  readonly listeners = new Map<string, Set<(payload: string) => void>>();
  /** Exchanges sent and not yet answered. */
  sending = 0;
  /** Set once everything asked before closing has been sent; every exchange is refused from then on. */
  closed = false;
  readonly traffic: Traffic = { roundTrips: 0, statements: 0 };
  readonly #parsers: Record<number, (text: string, typeId?: number) => unknown>;
  readonly #serializers: Record<number, (value: unknown) => string> = { ...types.serializers };
  readonly #parser = new protocol.Parser();
  // In order of preparation; a text being prepared is a promise, so concurrent first runs parse it once.
  readonly #prepared = new Map<string, Prepared>();
  readonly #preparing = new Map<string, Promise<Prepared>>();
  #named = 0;

  constructor(
    private readonly exchange: Exchange,
    private readonly preparedMax: number,
    parsers: Record<number, (text: string, typeId?: number) => unknown>,
  ) {
    this.#parsers = { ...types.parsers, ...parsers };
  }

  /**
   * Sends one exchange, or waits for it (inside a transaction), and reads its answer: the first error is thrown,
   * notifications go to their listeners.
   */
  async send(message: Uint8Array, waited: boolean): Promise<Message[]> {
    if (this.closed) throw new Error('The embedded database is closed');
    this.traffic.roundTrips += 1;
    let answer: Uint8Array;
    if (waited) answer = this.exchange.wait(message);
    else {
      this.sending += 1;
      try {
        answer = await this.exchange.send(message);
      } finally {
        this.sending -= 1;
      }
    }
    const received: Message[] = [];
    let failure: Error | undefined;
    this.#parser.parse(answer, (message) => {
      if (message instanceof DatabaseError) failure ??= message;
      else if (message instanceof NotificationResponseMessage) {
        for (const notified of this.listeners.get(message.channel) ?? []) queueMicrotask(() => notified(message.payload));
      } else received.push(message);
    });
    if (failure) throw failure;
    return received;
  }

  /** A script without parameters, as a simple query; `sent` is called once it is sent. */
  simple(script: string, waited: boolean, sent?: () => void): Promise<Message[]> {
    this.traffic.statements += 1;
    const answer = this.send(serialize.query(script), waited);
    sent?.();
    return answer;
  }

  /**
   * Runs one statement, after the statements `ahead` of it (a transaction's writes) in the same exchange. The run is
   * sent in the same turn of the event loop as the lookup of its names, so a name is never sent after the close of its
   * eviction.
   */
  async run<Row>(statement: Statement, waited: boolean, sent?: () => void, ahead: readonly Statement[] = []): Promise<Row[]> {
    const answer = await this.answerOf(statement, waited, sent, ahead);
    const rows = (parse.parseResults(answer, this.#parsers)[0]?.rows ?? []) as Row[];
    statement.read?.(() => rows);
    return rows;
  }

  /**
   * The answer to one statement run after the statements `ahead` of it, in one exchange: each of them is bound and
   * executed, and one Sync ends them all. An error skips what follows it, and is thrown.
   */
  async answerOf(statement: Statement, waited: boolean, sent?: () => void, ahead: readonly Statement[] = []): Promise<Message[]> {
    const all = [...ahead, statement];
    // More texts than are kept prepared would evict one another for ever.
    if (all.length > this.preparedMax && new Set(all.map(({ sql }) => sql)).size > this.preparedMax) throw new Error(`One exchange would run more than ${this.preparedMax} distinct statements`);
    let prepared = all.map(({ sql }) => this.#prepared.get(sql));
    while (prepared.some((found) => found === undefined)) {
      for (const { sql } of all) if (!this.#prepared.has(sql)) await this.#prepare(sql, waited);
      // Evicted meanwhile by a newer text (past `preparedMax` only): prepared again.
      prepared = all.map(({ sql }) => this.#prepared.get(sql));
    }
    // This statement's rows are read, and those of a statement ahead that is read: they are described.
    const runs = all.map(({ params, read }, index) => ({ statement: prepared[index]!, params, described: read !== undefined || index === ahead.length }));
    const answer = this.#execute(runs, waited);
    sent?.();
    const messages = await answer;
    // The statements ahead answer first, each up to its completion: what follows the last one's is this statement's.
    let from = 0;
    for (const { read } of ahead) {
      let to = from;
      while (to < messages.length - 1 && !(messages[to] instanceof CommandCompleteMessage)) to++;
      const own = messages.slice(from, to + 1);
      read?.(() => parse.parseResults(own, this.#parsers)[0]!.rows);
      from = to + 1;
    }
    return messages.slice(from);
  }

  /** Learns the array types, so that array parameters and columns are serialized and parsed as PGlite would. */
  async learnArrayTypes(turn: (work: (sent: () => void) => Promise<Message[]>) => Promise<Message[]>): Promise<void> {
    // Unnamed (a simple query), so the session's named statements are only the service's own.
    const answer = await turn((sent) => this.simple(ARRAY_TYPES_SQL, false, sent));
    const arrayTypes = parse.parseResults(answer, this.#parsers)[0]!.rows as { oid: number; typarray: number }[];
    for (const { oid, typarray } of arrayTypes) {
      this.#serializers[typarray] = (value) => types.arraySerializer(value, this.#serializers[oid], typarray);
      this.#parsers[typarray] = (text) => types.arrayParser(text, this.#parsers[oid]!, typarray);
    }
  }

  #prepare(sql: string, waited: boolean): Promise<Prepared> {
    let pending = this.#preparing.get(sql);
    if (pending) return pending;
    const name = `tolov_${++this.#named}`;
    pending = (async () => {
      try {
        // A failed parse throws (after the sync, so the session is ready again) and leaves no name behind.
        const answer = await this.send(concat([serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), SYNC]), waited);
        const statement = { name, parameterTypes: parse.parseDescribeStatementResults(answer) };
        const evicted = setNewest(this.#prepared, sql, statement, this.preparedMax);
        // Sent before anything can use the new name, and after every run that used the old one was sent.
        if (evicted) void this.send(concat([serialize.close({ type: 'S', name: evicted.name }), SYNC]), waited).catch(() => {});
        return statement;
      } finally {
        this.#preparing.delete(sql);
      }
    })();
    this.#preparing.set(sql, pending);
    return pending;
  }

  #execute(runs: { statement: Prepared; params: readonly unknown[] | undefined; described: boolean }[], waited: boolean): Promise<Message[]> {
    const parts = runs.flatMap(({ statement, params, described }) => {
      const bind = serialize.bind({ statement: statement.name, values: this.#values(statement, params) });
      // A statement whose rows are read is described: its rows come with their columns' names and types.
      return described ? [bind, serialize.describe({ type: 'P' }), serialize.execute({})] : [bind, serialize.execute({})];
    });
    this.traffic.statements += runs.length;
    return this.send(concat([...parts, SYNC]), waited);
  }

  #values(statement: Prepared, params: readonly unknown[] | undefined): (string | null)[] {
    return (params ?? []).map((value, index) => {
      if (value === null || value === undefined) return null;
      const serializer = this.#serializers[statement.parameterTypes[index]!];
      // A lone surrogate (valid in a JavaScript string, not in UTF-8) would make the bind message count its length
      // wrong and the engine refuse the bytes; it becomes U+FFFD, as node-postgres encodes it on the other engine.
      return (serializer ? serializer(value) : String(value)).replace(LONE_SURROGATE, '\uFFFD');
    });
  }
}
