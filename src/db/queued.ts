// What a transaction sends ahead of its next statement, on either engine: its BEGIN while that is not sent yet, and the
// writes its work queued since its last statement. They go in the statement's exchange, so they cost no round trip.
import { TransactionAbortedError } from '@electric-sql/pglite';
import { WRITES_WAITING_MAX, type Statement } from './types.js';

const BEGIN: Statement = { sql: 'BEGIN' };

export class Queued {
  #begin: boolean;
  #writes: Statement[] = [];
  #closed = false;
  #failed = false;
  #sending = false;

  /** `begin`: the transaction's BEGIN is still to be sent, ahead of its first statement. */
  constructor(begin: boolean) {
    this.#begin = begin;
  }

  /** BEGIN went, or was handed out to go: the server may have a transaction open, which a failure rolls back. */
  get begun(): boolean {
    return !this.#begin;
  }

  write(statement: Statement): void {
    this.#assertOpen();
    this.#assertNotFailed();
    if (this.#writes.length >= WRITES_WAITING_MAX) {
      this.#failed = true;
      throw new Error(`More than ${WRITES_WAITING_MAX} writes wait in one transaction`);
    }
    this.#writes.push(statement);
  }

  /**
   * The answer of a statement of the transaction, sent by `send`; its failure fails the transaction. One at a time: what
   * goes ahead of a statement is taken as it is sent, and a second statement sent before the first is answered could
   * reach the server ahead of the first's BEGIN and writes, outside the transaction.
   */
  async answer<T>(send: () => Promise<T>): Promise<T> {
    this.#assertNotFailed();
    if (this.#sending) {
      this.#failed = true;
      throw new Error('A transaction runs one statement at a time: await each statement before sending the next');
    }
    this.#sending = true;
    try {
      return await send();
    } catch (error) {
      this.#failed = true;
      throw error;
    } finally {
      this.#sending = false;
    }
  }

  /** What goes ahead of the statement about to be sent, handed out once. */
  take(): Statement[] {
    this.#assertOpen();
    const sent = this.#begin ? [BEGIN, ...this.#writes] : this.#writes;
    this.#begin = false;
    this.#writes = [];
    return sent;
  }

  /**
   * What waits, as a statement and those ahead of it, for a script that nothing can precede in its exchange (a simple
   * query); undefined when nothing waits.
   */
  drain(): { statement: Statement; ahead: Statement[] } | undefined {
    const waiting = this.take();
    return waiting.length === 0 ? undefined : { statement: waiting.at(-1)!, ahead: waiting.slice(0, -1) };
  }

  /**
   * The transaction's work is over: what goes ahead of its COMMIT, or undefined when the server has no transaction to
   * end. What it queues from now on is refused. A transaction that had a statement fail, or a write refused, cannot
   * commit, whatever its work did with the error: it is refused as a COMMIT of an aborted transaction rolls back.
   * Without this, a statement that failed before it was sent (a parameter that cannot be sent) would take what went
   * ahead of it along unsent, and the COMMIT would commit the rest.
   */
  commit(): Statement[] | undefined {
    if (this.#failed) {
      this.close();
      throw new TransactionAbortedError();
    }
    const last = this.#begin && this.#writes.length === 0 ? undefined : this.take();
    this.close();
    return last;
  }

  /** What the transaction queues from now on is refused. */
  close(): void {
    this.#closed = true;
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('Transaction is closed');
  }

  /** After a failure nothing more runs in the transaction, as PostgreSQL refuses statements in an aborted one. */
  #assertNotFailed(): void {
    if (this.#failed) throw Object.assign(new Error('current transaction is aborted, commands ignored until end of transaction block'), { code: '25P02' });
  }
}
