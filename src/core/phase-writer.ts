// A phase's writes as one statement, written once and run two ways: in a transaction, for one request alone; or outside
// any, for the requests that arrive together, one statement and one commit for all (each request's writes still all
// or nothing). Grouping is the writer's own affair: the phase only says what it writes.
import type { Db, Queryable, Transaction } from '../db/types.js';
import { groupWriter, type GroupTiming, type GroupWriterLimits } from '../lib/group-writer.js';
import type { KeyWrite, PhaseResult } from './idempotency.js';

/** One request's write: what it writes, and, outside a transaction, its idempotency key's write and what that records. */
export interface PhaseWrite<Item> {
  item: Item;
  key: { write: KeyWrite; result: PhaseResult } | null;
}

/** Runs the writes of several requests as one statement on `on`; answers each write's row, undefined for one not written. */
export type PhaseStatement<Item, Row> = (on: Queryable, writes: PhaseWrite<Item>[]) => Promise<(Row | undefined)[]>;

export class PhaseWriter<Item, Row> {
  readonly #outside: (write: PhaseWrite<Item>) => Promise<Row | undefined>;

  /**
   * `group`: how many requests' writes one statement holds, and how many may wait; null writes each alone. `timing`:
   * where the groups' waits and writes are recorded.
   */
  constructor(
    db: Db,
    private readonly statement: PhaseStatement<Item, Row>,
    group: GroupWriterLimits | null,
    timing: GroupTiming | null = null,
  ) {
    this.#outside = group ? groupWriter((writes) => statement(db, writes), group, timing) : async (write) => (await statement(db, [write]))[0];
  }

  /** Writes in `tx`, alone; or (null) outside any transaction, with the requests' writes that arrive together. */
  write(tx: Transaction | null, write: PhaseWrite<Item>): Promise<Row | undefined> {
    return tx ? this.statement(tx, [write]).then((rows) => rows[0]) : this.#outside(write);
  }
}
