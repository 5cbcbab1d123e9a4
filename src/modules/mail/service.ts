// Mail that accounts send (sign-up links, password resets, notices): queued in the transaction of what it tells, so
// that a committed change always gets its mail and a rolled-back one never does, then sent by a worker.
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Transaction } from '../../db/types.js';
import { newId } from '../../core/ids.js';
import type { Sealer } from '../../lib/sealing.js';
import * as store from './store.js';
import type { MailTransport, Message } from './transport.js';

/** Seconds before a failed attempt is tried again; past the last, the mail is given up. */
const RETRY_SECONDS = [30, 60, 300, 1800, 7200] as const;
const ATTEMPTS_MAX = RETRY_SECONDS.length;
/**
 * How long a claimed message is another sender's: longer than the longest send (the transport's timeouts give up well
 * within it), so that a message is sent twice only if its sender died between the server's answer and recording it.
 */
const LEASE_SECONDS = 300;

/** Messages a send right after a commit takes at once; the rest wait for the worker. */
const NOW_BATCH_MAX = 20;

export class Mail {
  private readonly sending = new Set<Promise<unknown>>();

  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
    private readonly transport: MailTransport,
    private readonly log: FastifyBaseLogger,
  ) {}

  queue(tx: Transaction, message: Message): void {
    store.insertMail(tx, { id: newId('mail'), recipient: message.to, subject: message.subject.slice(0, 200), bodySealed: this.sealer.seal(message.text) });
  }

  /** Sends what is due at once, rather than at the worker's next turn: called after the commit that queued a message. */
  sendNow(): void {
    const sent = this.deliver(NOW_BATCH_MAX).catch((error: unknown) => this.log.warn({ err: error }, 'mail delivery failed; the worker tries again'));
    this.sending.add(sent);
    void sent.finally(() => this.sending.delete(sent));
  }

  /** Resolves once the sends started by sendNow have ended. */
  async idle(): Promise<void> {
    await Promise.all(this.sending);
  }

  /** Sends a batch of due messages; one that fails is tried again later, and given up after its last attempt. */
  async deliver(batchMax: number): Promise<number> {
    const due = await store.claimDue(this.db, batchMax, LEASE_SECONDS);
    await Promise.all(due.map((row) => this.send(row)));
    return due.length;
  }

  private async send(row: store.MailRow): Promise<void> {
    try {
      await this.transport.send({ to: row.recipient, subject: row.subject, text: this.sealer.open(row.body_sealed) });
    } catch (error) {
      const givenUp = row.attempts >= ATTEMPTS_MAX;
      this.log.warn({ err: error, mail: row.id, attempt: row.attempts, givenUp }, 'mail not sent');
      await (givenUp ? store.markFailed(this.db, row.id) : store.retryLater(this.db, row.id, RETRY_SECONDS[row.attempts - 1]!));
      return;
    }
    await store.markSent(this.db, row.id);
  }

  deleteOld(batchMax: number): Promise<number> {
    return store.deleteOld(this.db, batchMax);
  }

  close(): void {
    this.transport.close();
  }
}
