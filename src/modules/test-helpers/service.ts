// Test mode's helpers: produce what a buyer or time would, at once, so that every event can be triggered in tests
// (the CLI's `tolov trigger` uses them). They act only in test mode; a live key never reaches them.
import { ApiError } from '../../core/errors.js';
import type { Merchant } from '../../core/merchant.js';
import { TEST_SMS_CODE } from '../../rails/test-rail.js';
import type { CheckoutService } from '../checkout/service.js';
import type { Order } from '../orders/schema.js';
import type { OrdersService } from '../orders/service.js';

/** What the buyer types on the hosted page besides the card number. */
const BUYER = { phone: '998901234567' };
const DEFAULT_CARD = '8600000000000007';

export class TestHelpersService {
  constructor(
    private readonly orders: OrdersService,
    private readonly checkout: CheckoutService,
  ) {}

  private static testOnly(merchant: Merchant): void {
    if (merchant.livemode) throw new Error('a test helper was reached with a live key');
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
    const token = await this.orders.checkoutTokenOf(merchant, id);
    const nextYear = String((new Date().getUTCFullYear() + 1) % 100).padStart(2, '0');
    await this.checkout.submitCard(token, { pan: card, expiry: `12/${nextYear}`, ...BUYER });
    try {
      await this.checkout.submitCode(token, TEST_SMS_CODE);
    } catch (error) {
      // The bank's refusal is an outcome of the payment, which the order now shows.
      if (!(error instanceof ApiError && error.code === 'PAYMENT_FAILED')) throw error;
    }
    return this.orders.get(merchant, id);
  }
}
