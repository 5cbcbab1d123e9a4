// The mail outbox: messages written with what they tell, claimed by one sender at a time, erased once sent.
import type { Queryable, Transaction } from '../../db/types.js';

export interface MailRow {
  id: string;
  recipient: string;
  subject: string;
  body_sealed: string;
  attempts: number;
}

export function insertMail(tx: Transaction, mail: { id: string; recipient: string; subject: string; bodySealed: string }): void {
  tx.write('INSERT INTO mail_outbox (id, recipient, subject, body_sealed) VALUES ($1, $2, $3, $4)', [mail.id, mail.recipient, mail.subject, mail.bodySealed]);
}

/**
 * Claims a batch of due messages: each attempt is counted and the message leased for `leaseSeconds`, so that another
 * process does not send it meanwhile, and a sender that dies leaves it to be tried again then.
 */
export async function claimDue(db: Queryable, batchMax: number, leaseSeconds: number): Promise<MailRow[]> {
  return db.query<MailRow>(
    `UPDATE mail_outbox m SET attempts = m.attempts + 1, next_attempt_at = now() + $2 * interval '1 second'
      WHERE m.id IN (SELECT id FROM mail_outbox WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now()
                      ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING m.id, m.recipient, m.subject, m.body_sealed, m.attempts`,
    [batchMax, leaseSeconds],
  );
}

export async function markSent(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE mail_outbox SET sent_at = now(), body_sealed = NULL WHERE id = $1', [id]);
}

export async function retryLater(db: Queryable, id: string, seconds: number): Promise<void> {
  await db.query(`UPDATE mail_outbox SET next_attempt_at = now() + $2 * interval '1 second' WHERE id = $1`, [id, seconds]);
}

export async function markFailed(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE mail_outbox SET failed_at = now(), body_sealed = NULL WHERE id = $1', [id]);
}

/** Deletes messages sent or given up a week ago, a bounded batch. */
export async function deleteOld(db: Queryable, batchMax: number): Promise<number> {
  const rows = await db.query(
    `DELETE FROM mail_outbox WHERE id IN (
       SELECT id FROM mail_outbox WHERE (sent_at IS NOT NULL OR failed_at IS NOT NULL) AND created_at < now() - interval '7 days'
        LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING 1`,
    [batchMax],
  );
  return rows.length;
}
