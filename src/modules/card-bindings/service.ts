import type { Db, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { notFound } from '../../core/errors.js';
import type { Steps } from '../../core/idempotency.js';
import type { Answer, Commands, Invocation } from '../../core/commands.js';
import { newId } from '../../core/ids.js';
import { randomBase62 } from '../../lib/random.js';
import type { Rails } from '../../rails/index.js';
import type { CardBinding, CreateBindingBody } from './schema.js';
import * as store from './store.js';
import type { BindingRow } from './store.js';
import type { SessionStatus } from '../../core/session-statuses.js';

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

/** What a binding needs of its hosted page's session, which the checkout keeps: opened with it, expired when read late. */
export interface BindingSessions {
  open(tx: Transaction, kind: 'card_binding', binding: Omit<BindingRow, 'status' | 'failure_code' | 'expired'>): Promise<{ status: SessionStatus; failure_code: string | null }>;
  expire(kind: 'card_binding', token: string): Promise<void>;
  expireDueBindings(batchMax: number): Promise<number>;
}

export class CardBindingsService {
  constructor(
    private readonly db: Db,
    private readonly rails: Rails,
    private readonly sessions: BindingSessions,
    private readonly commands: Commands,
    private readonly settings: BindingSettings,
  ) {}

  /** Starts saving a buyer's card: 201 with the binding and the address of its page. */
  create(invocation: Invocation, body: CreateBindingBody): Promise<Answer<CardBinding>> {
    return this.commands.run(invocation, this.createPhases(invocation.scope, body), { activeOnly: true });
  }

  /** Creating a binding is one atomic phase; live mode needs a rail, so it is refused before anything is written. */
  private createPhases(merchant: Merchant, body: CreateBindingBody): Steps {
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

  /** One expiry batch: bindings whose page was left open past its time; returns how many. */
  expireDue(batchMax: number): Promise<number> {
    return this.sessions.expireDueBindings(batchMax);
  }

  /** Records the card a completed binding saved, in the transaction that saved it. */
  attachCard(tx: Transaction, bindingId: string, cardId: string): void {
    store.attachCard(tx, bindingId, cardId);
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
