import type { Db, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { notFound } from '../../core/errors.js';
import type { Steps } from '../../core/idempotency.js';
import { newId } from '../../core/ids.js';
import { randomBase62 } from '../../lib/random.js';
import type { Rails } from '../../rails/index.js';
import type { CheckoutSessions } from '../checkout-sessions/service.js';
import type { CardBinding, CreateBindingBody } from './schema.js';
import * as store from './store.js';
import type { BindingRow } from './store.js';

const CLIENT_TOKEN_RANDOM_CHARS = 40; // ≈ 238 bits: the token alone authorizes submitting a card

export interface BindingSettings {
  checkoutUrl: string;
  sessionTtlSeconds: number;
}

export function presentBinding(row: BindingRow, settings: BindingSettings): CardBinding {
  return {
    id: row.id,
    object: 'card_binding',
    status: row.status,
    failureCode: row.failure_code,
    clientToken: row.checkout_token,
    url: `${settings.checkoutUrl}/bind/${row.checkout_token}`,
    card: row.card_id,
    customerRef: row.customer_ref,
    returnUrl: row.return_url,
    expiresAt: row.expires_at.toISOString(),
    livemode: row.livemode,
    created: row.created_at.toISOString(),
  };
}

export class CardBindingsService {
  constructor(
    private readonly db: Db,
    private readonly rails: Rails,
    private readonly sessions: CheckoutSessions,
    private readonly settings: BindingSettings,
  ) {}

  /** Creating a binding is one atomic phase; live mode needs a rail, so it is refused before anything is written. */
  createPhases(merchant: Merchant, body: CreateBindingBody): Steps {
    const settings = this.settings;
    this.rails.forMode(merchant.livemode);
    return {
      started: async (tx) => {
        const binding = await store.insertBinding(tx, merchant, {
          id: newId('cb'),
          customerRef: body.customerRef ?? null,
          returnUrl: body.returnUrl ?? null,
          checkoutToken: `cbs_${randomBase62(CLIENT_TOKEN_RANDOM_CHARS)}`,
          ttlSeconds: settings.sessionTtlSeconds,
        });
        const session = await this.sessions.open(tx, 'card_binding', binding);
        return { response: { status: 201, body: presentBinding({ ...binding, ...session, expired: false }, settings) } };
      },
    };
  }

  /** Records the card a completed binding saved, in the transaction that saved it. */
  attachCard(tx: Transaction, bindingId: string, cardId: string): Promise<void> {
    return store.attachCard(tx, bindingId, cardId);
  }

  /** Reads a binding; a session past its time reads as EXPIRED (and is recorded so) even before the worker runs. */
  async get(merchant: Merchant, id: string): Promise<CardBinding> {
    const db = this.db;
    let row = await store.findBinding(db, merchant, id);
    if (!row) throw notFound('card binding');
    if (row.expired && (row.status === 'PENDING' || row.status === 'AWAITING_CODE')) {
      await this.sessions.expire('card_binding', row.checkout_token);
      row = (await store.findBinding(db, merchant, id))!;
    }
    return presentBinding(row, this.settings);
  }
}
