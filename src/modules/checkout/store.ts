import type { Queryable } from '../../db/db.js';
import type { SessionStatus } from './state.js';

export interface SessionRow {
  token: string;
  kind: 'order' | 'card_binding';
  product_id: string;
  livemode: boolean;
  order_id: string | null;
  binding_id: string | null;
  status: SessionStatus;
  expires_at: Date;
  card_attempts: number;
  code_attempts: number;
  code_sends: number;
  code_sent_at: Date | null;
  rail_token: string | null;
  network: 'uzcard' | 'humo' | null;
  masked_pan: string | null;
  card_expiry: string | null;
  completed_at: Date | null;
  // Joined for presentation:
  product_name: string;
  return_url: string | null;
  customer_ref: string | null;
  /** Computed by the database clock, the one clock every process shares. */
  expired: boolean;
}

const SELECT_SESSION = `
  SELECT s.*, p.name AS product_name, b.return_url, b.customer_ref, s.expires_at <= now() AS expired
    FROM checkout_sessions s
    JOIN products p ON p.id = s.product_id
    JOIN card_bindings b ON b.id = s.binding_id
   WHERE s.token = $1 AND s.kind = 'card_binding'`;

/** The session of a public token. Only card-binding sessions are served by the public calls so far. */
export async function findSession(db: Queryable, token: string, lock: boolean): Promise<SessionRow | undefined> {
  const [row] = await db.query<SessionRow>(lock ? `${SELECT_SESSION} FOR UPDATE OF s` : SELECT_SESSION, [token]);
  return row;
}

/** Marks an open session past its time EXPIRED; returns false when it was not open (or not due). */
export async function expireSession(db: Queryable, token: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE checkout_sessions SET status = 'EXPIRED'
      WHERE token = $1 AND status IN ('PENDING', 'AWAITING_CODE') AND expires_at <= now() RETURNING token`,
    [token],
  );
  return rows.length === 1;
}

export async function countCardAttempt(tx: Queryable, token: string): Promise<void> {
  await tx.query('UPDATE checkout_sessions SET card_attempts = card_attempts + 1 WHERE token = $1', [token]);
}

export async function countCodeAttempt(tx: Queryable, token: string): Promise<void> {
  await tx.query('UPDATE checkout_sessions SET code_attempts = code_attempts + 1 WHERE token = $1', [token]);
}

export async function countCodeSend(tx: Queryable, token: string): Promise<void> {
  await tx.query('UPDATE checkout_sessions SET code_sends = code_sends + 1, code_sent_at = now() WHERE token = $1', [token]);
}

export interface AcceptedCard {
  railToken: string;
  network: 'uzcard' | 'humo';
  maskedPan: string;
  expiry: string;
}

/** PENDING → AWAITING_CODE with the tokenized card, unless another submission or expiry got there first. */
export async function acceptCard(db: Queryable, token: string, card: AcceptedCard): Promise<boolean> {
  const rows = await db.query(
    `UPDATE checkout_sessions
        SET status = 'AWAITING_CODE', rail_token = $2, network = $3, masked_pan = $4, card_expiry = $5,
            code_sends = code_sends + 1, code_sent_at = now()
      WHERE token = $1 AND status = 'PENDING' AND expires_at > now()
      RETURNING token`,
    [token, card.railToken, card.network, card.maskedPan, card.expiry],
  );
  return rows.length === 1;
}

/** AWAITING_CODE → COMPLETED, unless a concurrent submission or expiry got there first. */
export async function completeSession(tx: Queryable, token: string): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE checkout_sessions SET status = 'COMPLETED', completed_at = now(), rail_token = NULL
      WHERE token = $1 AND status = 'AWAITING_CODE' AND expires_at > now()
      RETURNING token`,
    [token],
  );
  return rows.length === 1;
}

/** Expires a bounded batch of open sessions past their time; any number of processes may run this. */
export async function expireDueSessions(db: Queryable, batchMax: number): Promise<number> {
  const rows = await db.query(
    `UPDATE checkout_sessions SET status = 'EXPIRED'
      WHERE token IN (
        SELECT token FROM checkout_sessions
         WHERE kind = 'card_binding' AND status IN ('PENDING', 'AWAITING_CODE') AND expires_at <= now()
         ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING token`,
    [batchMax],
  );
  return rows.length;
}
