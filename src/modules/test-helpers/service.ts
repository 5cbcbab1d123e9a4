// Test mode's helpers: produce what a buyer or time would, at once, so that every event can be triggered in tests
// (the CLI's `tolov trigger` uses them). They act only in test mode; a live key never reaches them.
import { ApiError } from '../../core/errors.js';
import { assertActive, type Merchant } from '../../core/merchant.js';
import { TEST_SMS_CODE } from '../../rails/test-rail.js';
import type { CardBinding } from '../card-bindings/schema.js';
import type { CardBindingsService } from '../card-bindings/service.js';
import type { CheckoutService } from '../checkout/service.js';
import type { Order } from '../orders/schema.js';
import type { OrdersService } from '../orders/service.js';
import type { Payout, PayoutAccount } from '../payouts/schema.js';
import type { PayoutsService } from '../payouts/service.js';
import type { PaymentsService } from '../payments/service.js';
import type { PaymentIntent } from '../payments/schema.js';
import type { HoldsService } from '../holds/service.js';
import type { Balance, LedgerService } from '../ledger/service.js';

/** What the buyer types on the hosted page besides the card number. */
const BUYER = { phone: '998901234567' };
const DEFAULT_CARD = '8600000000000007';
/** Payments the settle helper moves per transaction, and per call. */
const SETTLE_BATCH = 200;
const SETTLE_NOW_MAX = 10_000;

export class TestHelpersService {
  constructor(
    private readonly orders: OrdersService,
    private readonly bindings: CardBindingsService,
    private readonly checkout: CheckoutService,
    private readonly payouts: PayoutsService,
    private readonly payments: Pick<PaymentsService, 'settle'>,
    private readonly ledger: Pick<LedgerService, 'balance'>,
    private readonly holds: Pick<HoldsService, 'expireNow'>,
  ) {}

  private static testOnly(merchant: Merchant): void {
    if (merchant.livemode) throw new Error('a test helper was reached with a live key');
  }

  /** Ends the hold that a change of the payout account put on payouts, at once. */
  releasePayoutHold(merchant: Merchant): Promise<PayoutAccount> {
    TestHelpersService.testOnly(merchant);
    return this.payouts.releaseHold(merchant);
  }

  /** Runs the day's automatic payout now and sends every PENDING payout to the test bank. */
  runPayouts(merchant: Merchant): Promise<Payout> {
    TestHelpersService.testOnly(merchant);
    assertActive(merchant);
    return this.payouts.runNow(merchant);
  }

  /**
   * Settles the product's succeeded payments now, as the settlement delay would: their net becomes available. At
   * most SETTLE_NOW_MAX payments a call; what is left waits for the next call or the delay.
   */
  async settleBalance(merchant: Merchant): Promise<Balance> {
    TestHelpersService.testOnly(merchant);
    for (let settled = 0; settled < SETTLE_NOW_MAX; settled += SETTLE_BATCH) {
      if ((await this.payments.settle(0, SETTLE_BATCH, merchant)) < SETTLE_BATCH) break;
    }
    return this.ledger.balance(merchant);
  }

  /** Releases a hold now, as its TOLOV_HOLD_DAYS passing would. */
  expireHold(merchant: Merchant, id: string): Promise<PaymentIntent> {
    TestHelpersService.testOnly(merchant);
    return this.holds.expireNow(merchant, id);
  }

  expireOrder(merchant: Merchant, id: string): Promise<Order> {
    TestHelpersService.testOnly(merchant);
    return this.orders.expireNow(merchant, id);
  }

  /**
   * Pays an order as a buyer would on its hosted page, with `card` (a test card: its row of the test card table
   * decides the outcome) and the test SMS code. A refusal leaves the order FAILED, with its event, as on the page.
   */
  async payOrder(merchant: Merchant, id: string, card = DEFAULT_CARD): Promise<Order> {
    TestHelpersService.testOnly(merchant);
    await this.asBuyer(await this.orders.checkoutTokenOf(merchant, id), card);
    return this.orders.get(merchant, id);
  }

  /** Completes a PENDING card binding as a buyer would on its page, saving `card` (a test card). */
  async completeBinding(merchant: Merchant, id: string, card = DEFAULT_CARD): Promise<CardBinding> {
    TestHelpersService.testOnly(merchant);
    const binding = await this.bindings.get(merchant, id);
    if (binding.status !== 'PENDING') throw new ApiError('INVALID_STATE', `Only a PENDING card binding can be completed; this one is ${binding.status}`);
    await this.asBuyer(binding.clientToken, card);
    return this.bindings.get(merchant, id);
  }

  /** The buyer's two steps on a hosted page: the card, then the test SMS code. */
  private async asBuyer(token: string, card: string): Promise<void> {
    const nextYear = String((new Date().getUTCFullYear() + 1) % 100).padStart(2, '0');
    await this.checkout.submitCard(token, { pan: card, expiry: `12/${nextYear}`, ...BUYER });
    try {
      await this.checkout.submitCode(token, TEST_SMS_CODE);
    } catch (error) {
      // The bank's refusal of an order's payment is an outcome, which the order then shows.
      if (!(error instanceof ApiError && error.code === 'PAYMENT_FAILED')) throw error;
    }
  }
}
