// The Node SDK's fiscal receipts against a running service: lines sent with a charge, an order and the legacy pair,
// typed as the API describes them; receipts read, filtered and walked with `for await`; lines that do not add up as a
// typed error; and a receipt event verified by constructEvent and narrowed by its type to the receipt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Tolov, { TolovError, type Receipt, type ReceiptRequest } from '../../packages/node/src/index.js';
import { startService, type TestService } from '../support/harness.js';
import { fiscalizeAll } from '../support/receipts.js';

let service: TestService;
let base: string;
beforeAll(async () => {
  service = await startService();
  base = await service.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => service.stop());

/** Two lines, one with a discount, and the delivery: 2 × 50,000.00 − 5,000.00 + 30,000.00 + 15,000.00 so'm. */
const CART: ReceiptRequest = {
  items: [
    { title: 'Choynak', price: 5_000_000, count: 2, code: '10399001001000000', packageCode: '1505709', vatPercent: 12, discount: 500_000 },
    { title: 'Kitob', price: 3_000_000, count: 1, code: '04901001001000000', packageCode: '1510911', vatPercent: 0 },
  ],
  shipping: { title: 'Yetkazib berish', price: 1_500_000, code: '10112006002000000', packageCode: '1209779', vatPercent: 12 },
};
const CART_AMOUNT = 14_000_000;
// round_half_up(9,500,000 × 12 / 112) + 0 + round_half_up(1,500,000 × 12 / 112)
const CART_VAT = 1_017_857 + 160_714;
/** One line of `amount` tiyin. */
const line = (amount: number, code = '10399001001000000'): ReceiptRequest => ({
  items: [{ title: 'Piyola', price: amount, count: 1, code, packageCode: '1505709', vatPercent: 12 }],
});

/** A new product's SDK client and a saved test card. */
async function shop(): Promise<{ tolov: Tolov; card: string }> {
  const merchant = await service.createMerchant({ name: 'Receipts Shop' });
  const tolov = new Tolov(merchant.test, { baseUrl: base });
  const binding = await tolov.cardBindings.create({ customerRef: 'customer-1' });
  const card = (await tolov.testHelpers.cardBindings.complete(binding.id)).card!;
  return { tolov, card };
}

describe('receipts with the Node SDK', () => {
  it('charges with fiscal lines, then reads the sale receipt and, after a refund, the return receipt', async () => {
    const { tolov, card } = await shop();
    const intent = await tolov.charges.create({ amount: CART_AMOUNT, card, receipt: CART });
    expect(intent.receipt).toMatch(/^rcpt_/);
    const pending: Receipt = await tolov.receipts.retrieve(intent.receipt!);
    expect(pending).toMatchObject({ object: 'receipt', type: 'sale', status: 'PENDING', paymentIntent: intent.id, amount: CART_AMOUNT, vatAmount: CART_VAT, fiscalSign: null });

    expect(await service.receipts.fiscalizeDue(10)).toBe(1);
    const signed = await tolov.receipts.retrieve(intent.receipt!);
    expect(signed).toMatchObject({ status: 'FISCALIZED', terminalId: expect.stringMatching(/^TEST/), qrUrl: expect.stringMatching(/^https:\/\/ofd\.soliq\.uz\/check\?/) });
    expect(signed.items.map((item) => [item.discount, item.commissionTin])).toEqual([[500_000, null], [0, null]]);

    const refund = await tolov.refunds.create({ paymentIntent: intent.id });
    expect(refund.receipt).toMatch(/^rcpt_/);
    const ofPayment = await tolov.receipts.list({ paymentIntent: intent.id });
    expect(ofPayment.data.map((receipt) => [receipt.id, receipt.type, receipt.refund])).toEqual([
      [refund.receipt, 'return', refund.id],
      [intent.receipt, 'sale', null],
    ]);
    expect((await tolov.receipts.list({ type: 'return' })).data.map((receipt) => receipt.id)).toEqual([refund.receipt]);
    expect((await tolov.receipts.list({ status: 'PENDING' })).data.map((receipt) => receipt.id)).toEqual([refund.receipt]);
  });

  it('walks every receipt with for await, across pages and with a filter', async () => {
    const { tolov, card } = await shop();
    const made: string[] = [];
    for (let amount = 10_000; amount < 15_000; amount += 1_000) made.push((await tolov.charges.create({ amount, card, receipt: line(amount) })).receipt!);
    await tolov.refunds.create({ paymentIntent: (await tolov.receipts.retrieve(made[0]!)).paymentIntent });
    const all: string[] = [];
    for await (const receipt of tolov.receipts.list({ limit: 2 })) all.push(receipt.id);
    expect(all).toHaveLength(made.length + 1);
    expect(all.slice(1)).toEqual([...made].reverse());
    const sales: string[] = [];
    for await (const receipt of tolov.receipts.list({ type: 'sale', limit: 1 })) sales.push(receipt.id);
    expect(sales).toEqual([...made].reverse());
  });

  it('sends lines with an order and the legacy pair, and refuses lines that do not add up with a typed error', async () => {
    const { tolov, card } = await shop();
    const order = await tolov.orders.create({ amount: CART_AMOUNT, description: 'Choynak and a book', receipt: CART });
    expect(order.receipt).toBeNull();
    const paid = await tolov.testHelpers.orders.pay(order.id);
    expect((await tolov.receipts.retrieve(paid.receipt!)).shipping).toEqual(CART.shipping);

    const intent = await tolov.paymentIntents.create({ amount: 25_000, card, receipt: line(25_000) });
    const confirmed = await tolov.paymentIntents.confirm(intent.id);
    expect((await tolov.receipts.retrieve(confirmed.receipt!)).amount).toBe(25_000);

    const shippingTooDear = { ...CART, shipping: { ...CART.shipping!, price: 1_600_000 } };
    const refused = await tolov.orders.create({ amount: CART_AMOUNT, receipt: shippingTooDear }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TolovError);
    expect(refused).toMatchObject({ statusCode: 400, code: 'RECEIPT_MISMATCH', param: 'receipt.shipping.price' });
    const missing = await tolov.receipts.retrieve('rcpt_missing').catch((error: unknown) => error);
    expect(missing).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
  });

  it("verifies a receipt event, whose type narrows it to the receipt's fields", async () => {
    const { tolov, card } = await shop();
    const intent = await tolov.charges.create({ amount: 10_000, card, receipt: line(10_000, '00000000000000000') });
    await fiscalizeAll(service);
    const [stored] = (await tolov.events.list({ type: 'receipt.failed', objectId: intent.receipt! })).data;
    const secret = 'whsec_cmVjZWlwdHMtdGVzdC1zZWNyZXQtMDEyMzQ1Njc4OQ';
    const body = JSON.stringify(stored);
    const event = tolov.webhooks.constructEvent(body, tolov.webhooks.signedHeaders(body, secret), secret);
    if (event.type !== 'receipt.failed') throw new Error(`expected receipt.failed, got ${event.type}`);
    // Typed as the receipt: a wrong field name would not compile.
    const failure: { code: string | null; payment: string; vat: number } = { code: event.data.failureCode, payment: event.data.paymentIntent, vat: event.data.vatAmount };
    expect(failure).toEqual({ code: 'INVALID_CODE', payment: intent.id, vat: 1_071 });
  });
});
