// Payouts in tests: a payout account put in place as its owner would set it, and money made available to pay out.
import { accountKeyValid } from '../../src/modules/payouts/account-number.js';
import { newId } from '../../src/core/ids.js';
import { chargeCard } from './payments.js';
import type { TestService } from './harness.js';

/** An account number at `bankMfo` ending in `last4`, its check digit (the 9th) computed. */
export function validAccount(bankMfo: string, last4: string): string {
  for (let key = 0; key <= 9; key++) {
    const number = `20208000${key}0536852${last4}`;
    if (accountKeyValid(bankMfo, number)) return number;
  }
  throw new Error(`no check digit makes an account of ${bankMfo}`);
}

/**
 * The product's payout account in the mode, ending in `last4` (0002 fails at the test bank, 0003 stays IN_TRANSIT
 * until reconciliation), as an owner sets it in the dashboard (test/dashboard/payout-account.test.ts drives that page);
 * `held` puts payouts on the hold a change would.
 */
export async function setPayoutAccount(
  service: Pick<TestService, 'db'>,
  productId: string,
  options: { last4?: string; livemode?: boolean; held?: boolean } = {},
): Promise<string> {
  const accountNumber = validAccount('00440', options.last4 ?? '0001');
  await service.db.query(
    `INSERT INTO payout_accounts (id, product_id, livemode, bank_mfo, account_number, tin, holder_name, payouts_held_until)
     VALUES ($1, $2, $3, '00440', $4, '301234567', 'Chorsu Market LLC', $5)
     ON CONFLICT (product_id, livemode) DO UPDATE SET account_number = EXCLUDED.account_number, payouts_held_until = EXCLUDED.payouts_held_until`,
    [newId('pacct'), productId, options.livemode ?? false, accountNumber, options.held ? new Date(Date.now() + 86_400_000) : null],
  );
  return accountNumber;
}

/** Charges `amount` to a test card and settles it at once: its net is available. Returns the payment intent. */
export async function makeAvailable(service: TestService, key: string, amount: number) {
  const intent = await chargeCard(service, key, '8600000000000007', amount);
  await service.payments.settle(-10 * 365 * 86_400, 1_000);
  return intent;
}
