// The checkout's sessions as other capabilities use them: a session opened with its order or binding, an order's
// session closed with its outcome, the card an order's session captured, and a session expired when read past its time.
import type { Db, Transaction } from '../../db/types.js';
import type { SessionKind } from './state.js';
import * as store from './store.js';

/** What a session is opened for: its subject (an order or a binding), whose token and expiry it shares. */
export interface SessionSubject {
  id: string;
  checkout_token: string;
  product_id: string;
  livemode: boolean;
  expires_at: Date;
}

export class CheckoutSessions {
  constructor(private readonly db: Db) {}

  /** A PENDING session for a new subject, in the subject's transaction. */
  open(tx: Transaction, kind: SessionKind, subject: SessionSubject): Promise<{ status: store.SessionRow['status']; failure_code: string | null }> {
    return store.openSession(tx, kind, subject);
  }

  closeOrderSession(tx: Transaction, orderId: string, on: 'debit_succeeded' | 'debit_failed' | 'order_closed'): Promise<void> {
    return store.closeOrderSession(tx, orderId, on);
  }

  capturedCardOfOrder(tx: Transaction, orderId: string): Promise<store.CapturedCard> {
    return store.capturedCardOfOrder(tx, orderId);
  }

  /** One batch of open card-binding sessions past their time, expired; returns how many. */
  expireDueBindings(batchMax: number): Promise<number> {
    return store.expireDueSessions(this.db, batchMax);
  }

  /** Marks a session EXPIRED if it is still open and past its time; otherwise leaves it as it is. */
  expire(kind: SessionKind, token: string): Promise<void> {
    return store.expireSession(this.db, kind, token);
  }
}
