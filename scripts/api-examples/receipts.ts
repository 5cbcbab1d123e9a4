// The story's fiscal receipts: the paid order's and the charge's sale receipts and the refund's return receipt,
// registered by the test fiscal module, one line it refuses, then lines that do not add up to the amount.
import type { ReceiptsService } from '../../src/modules/receipts/service.js';
import { Recorder } from './recorder.js';
import type { Shop } from './scenarios.js';

/** The item code the test fiscal module refuses (docs/testing.md). */
const REFUSED_CODE = '00000000000000000';
/** More than the story's receipts: the bound of the loop that registers them. */
const RECEIPTS_MAX = 10;

const ok = Recorder.expect;

/**
 * Registers the due receipts one at a time, oldest first, as the fiscalization worker would: the newest event of each
 * type is then the same receipt's in every recording.
 */
async function fiscalizeOneByOne(fiscal: Pick<ReceiptsService, 'fiscalizeDue'>): Promise<void> {
  for (let registered = 0; registered < RECEIPTS_MAX; registered++) {
    if ((await fiscal.fiscalizeDue(1)) === 0) return;
  }
  throw new Error(`more than ${RECEIPTS_MAX} receipts were due`);
}

/** Receipts fiscalized and refused, read and listed; then the refusals of lines that do not match the amount. */
export async function receiptsAreFiscalized(
  s: Recorder,
  shop: Shop,
  fiscal: Pick<ReceiptsService, 'fiscalizeDue'>,
  paid: { orderReceipt: string; charge: string; card: string },
): Promise<void> {
  const post = (url: string, idempotencyKey: string, body: Record<string, unknown>, example?: false) =>
    s.call({ method: 'POST', url, key: shop.test, idempotencyKey, body, ...(example === false ? { example } : {}) });
  const unclassified = { items: [{ title: 'Tasting sample', price: 100_000, count: 1, code: REFUSED_CODE, packageCode: '1', vatPercent: 0 }] };
  ok(await post('/subscribe/v1/charges', 'charge-sample-4821', { amount: 100_000, card: paid.card, receipt: unclassified }, false), 201, 'refused lines');
  await fiscalizeOneByOne(fiscal);
  ok(await s.call({ method: 'GET', url: `/v1/receipts/${paid.orderReceipt}`, key: shop.test }), 200, 'receipt');
  ok(await s.call({ method: 'GET', url: `/v1/receipts?paymentIntent=${paid.charge}`, key: shop.test }), 200, 'receipts');

  const apricots = (price: number, shipping: number) => ({
    items: [{ title: 'Dried apricots, 1 kg', price, count: 2, code: '10813001001000000', packageCode: '1505709', vatPercent: 12 }],
    shipping: { title: 'Delivery in Samarkand', price: shipping, code: '10112006002000000', packageCode: '1209779', vatPercent: 12 },
  });
  const mismatch = (reply: Awaited<ReturnType<typeof post>>) => ok(reply, 400, 'lines that do not add up');
  mismatch(await post('/merchant/v1/orders', 'order-1010', { amount: 1_500_000, receipt: apricots(650_000, 250_000) }));
  const overDiscounted = { items: [{ title: 'Dried fruit box, monthly', price: 2_800_000, count: 1, code: '10813001002000000', packageCode: '1505712', vatPercent: 12, discount: 3_000_000 }] };
  mismatch(await post('/subscribe/v1/charges', 'charge-sub-4821-2027-02', { amount: 2_500_000, card: paid.card, receipt: overDiscounted }));
  mismatch(await post('/v1/payment_intents', 'intent-1011', { amount: 1_600_000, card: paid.card, receipt: apricots(650_000, 200_000) }));
}
