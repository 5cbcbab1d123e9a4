// Payouts: where a product's money goes. The payout account is set only from the dashboard, by an owner who proves the
// second factor at the change (a stolen API key or session alone cannot redirect money); every setting is audited and
// announced by `payout_account.updated`, and a change of an account already set holds payouts for a day.
import type { Db } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { ApiError, notFound } from '../../core/errors.js';
import type { Answer, Commands, Invocation } from '../../core/commands.js';
import { newId } from '../../core/ids.js';
import type { EventRecorder } from '../webhooks/service.js';
import { accountKeyValid } from './account-number.js';
import type { PayoutAccount, PayoutAccountInput } from './schema.js';
import * as store from './store.js';
import type { PayoutAccountRow } from './store.js';

/** How long payouts wait after a change of the account: long enough for its owners to see the mail and the event. */
export const ACCOUNT_CHANGE_HOLD_SECONDS = 24 * 3600;

export function presentAccount(row: PayoutAccountRow): PayoutAccount {
  return {
    id: row.id,
    object: 'payout_account',
    bankMfo: row.bank_mfo,
    accountLast4: row.account_number.slice(-4),
    tin: row.tin,
    holderName: row.holder_name,
    payoutsHeldUntil: row.payouts_held_until !== null && row.payouts_held_until.getTime() > Date.now() ? row.payouts_held_until.toISOString() : null,
    livemode: row.livemode,
    updated: row.updated_at.toISOString(),
    created: row.created_at.toISOString(),
  };
}

export class PayoutsService {
  constructor(
    private readonly db: Db,
    private readonly events: EventRecorder,
    private readonly commands: Commands,
  ) {}

  /** The product's payout account in the mode, masked; 404 until one is set. */
  async account(merchant: Merchant): Promise<PayoutAccount> {
    const row = await store.findAccount(this.db, merchant);
    if (!row) throw notFound('payout account');
    return presentAccount(row);
  }

  /**
   * Sets the payout account, audited and announced in one transaction. Only a dashboard user acts here: the page
   * checks the owner's role and the second factor before it calls this.
   */
  setAccount(invocation: Invocation, input: PayoutAccountInput): Promise<Answer<PayoutAccount>> {
    const { scope } = invocation;
    if (scope.actor.kind !== 'user') throw new Error('a payout account is set by a dashboard user, never by an API key');
    if (!accountKeyValid(input.bankMfo, input.accountNumber)) {
      throw new ApiError('VALIDATION_ERROR', `accountNumber is not an account of the bank ${input.bankMfo}: its check digit (the 9th) does not match`, {
        param: 'accountNumber',
      });
    }
    const write = async (tx: Parameters<Parameters<Commands['change']>[2]>[0]) => {
      const account = presentAccount(await store.upsertAccount(tx, scope, { id: newId('pacct'), ...input }, ACCOUNT_CHANGE_HOLD_SECONDS));
      await this.events.record(tx, { productId: scope.productId, livemode: scope.livemode, type: 'payout_account.updated', data: account });
      return account;
    };
    const target = `${input.bankMfo} ••••${input.accountNumber.slice(-4)}`;
    return this.commands.change(invocation, 200, write, { audit: { action: 'payout_account.updated', target } });
  }

  /** Test mode's helper: ends a hold at once. */
  async releaseHold(merchant: Merchant): Promise<PayoutAccount> {
    const row = await store.releaseHold(this.db, merchant);
    if (!row) throw notFound('payout account');
    return presentAccount(row);
  }
}
