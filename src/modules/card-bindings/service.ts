import type { Db } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { notFound } from '../../core/errors.js';
import type { Phase } from '../../core/idempotency.js';
import { newId } from '../../core/ids.js';
import { randomBase62 } from '../../lib/random.js';
import type { Rails } from '../../rails/index.js';
import { expireSession } from '../checkout-sessions/store.js';
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
    private readonly settings: BindingSettings,
  ) {}

  /** Creating a binding is one atomic phase; live mode needs a rail, so it is refused before anything is written. */
  createPhases(merchant: Merchant, body: CreateBindingBody): Record<string, Phase> {
    const settings = this.settings;
    this.rails.forMode(merchant.livemode);
    return {
      started: {
        atomic: async (tx) => {
          const row = await store.insertBinding(tx, merchant, {
            id: newId('cb'),
            customerRef: body.customerRef ?? null,
            returnUrl: body.returnUrl ?? null,
            checkoutToken: `cbs_${randomBase62(CLIENT_TOKEN_RANDOM_CHARS)}`,
            ttlSeconds: settings.sessionTtlSeconds,
          });
          return { response: { status: 201, body: presentBinding(row, settings) } };
        },
      },
    };
  }

  /** Reads a binding; a session past its time reads as EXPIRED (and is recorded so) even before the worker runs. */
  async get(merchant: Merchant, id: string): Promise<CardBinding> {
    const db = this.db;
    let row = await store.findBinding(db, merchant, id);
    if (!row) throw notFound('card binding');
    if (row.expired && (row.status === 'PENDING' || row.status === 'AWAITING_CODE')) {
      await expireSession(db, 'card_binding', row.checkout_token);
      row = (await store.findBinding(db, merchant, id))!;
    }
    return presentBinding(row, this.settings);
  }
}
