// Fiscal receipts through the API: lines sent with an order, a charge or the legacy create; a sale receipt once the
// payment succeeds, a return receipt once its refund succeeds; the test fiscal module signs them in the worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { bindCard } from '../support/binding.js';
import { charge, eventsOf } from '../support/payments.js';

let service: TestService;
let merchant: Merchant;
let card: string;
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_RETRY_SCHEDULE: '0,1,1' });
  merchant = await service.createMerchant();
  card = await bindCard(service, merchant.test, '8600000000000007');
});
afterAll(() => service.stop());

export const CODE = '10399001001000000';
/** A cart of two lines and shipping: 2 × 50,000.00 − 5,000.00 + 1 × 30,000.00 + 15,000.00 = 140,000.00 so'm. */
export const CART = {
  items: [
    { title: 'Choynak', price: 5_000_000, count: 2, code: CODE, packageCode: '1505709', vatPercent: 12, discount: 500_000 },
    { title: 'Kitob', price: 3_000_000, count: 1, code: '04901001001000000', packageCode: '1510911', vatPercent: 0, commissionTin: '123456789' },
  ],
  shipping: { title: 'Yetkazib berish', price: 1_500_000, code: '10112006002000000', packageCode: '1209779', vatPercent: 12 },
};
const CART_AMOUNT = 14_000_000;
// 9,500,000 × 12/112 = 1,017,857.14… → 1,017,857; 0; 1,500,000 × 12/112 = 160,714.28… → 160,714.
const CART_VAT = 1_017_857 + 160_714;

const get = (url: string, key = merchant.test) => service.call({ method: 'GET', url, key });

describe('a charge with fiscal lines', () => {
  it('writes a PENDING sale receipt with the payment, which the worker fiscalizes once, with its event', async () => {
    const reply = await charge(service, merchant.test, { amount: CART_AMOUNT, card, receipt: CART });
    expect(reply.status).toBe(201);
    expect(reply.body.status).toBe('SUCCEEDED');
    expect(reply.body.receipt).toMatch(/^rcpt_/);

    const pending = await get(`/v1/receipts/${reply.body.receipt}`);
    expect(pending.body).toMatchObject({
      object: 'receipt',
      type: 'sale',
      status: 'PENDING',
      paymentIntent: reply.body.id,
      refund: null,
      amount: CART_AMOUNT,
      vatAmount: CART_VAT,
      terminalId: null,
      receiptNumber: null,
      fiscalSign: null,
      qrUrl: null,
      fiscalizedAt: null,
      failureCode: null,
      livemode: false,
    });
    expect(pending.body.items).toEqual([
      { ...CART.items[0], commissionTin: null },
      { ...CART.items[1], discount: 0 },
    ]);
    expect(pending.body.shipping).toEqual(CART.shipping);
    expect(pending.body.url).toMatch(/\/receipts\/rc_[0-9A-Za-z]{40}$/);

    expect(await service.receipts.fiscalizeDue(10)).toBe(1);
    expect(await service.receipts.fiscalizeDue(10)).toBe(0);
    const done = (await get(`/v1/receipts/${reply.body.receipt}`)).body;
    expect(done).toMatchObject({ status: 'FISCALIZED', terminalId: expect.stringMatching(/^TEST/), receiptNumber: expect.stringMatching(/^\d+$/), fiscalSign: expect.stringMatching(/^\d{12}$/) });
    const stamp = new Date(new Date(done.fiscalizedAt).getTime() + 5 * 3_600_000).toISOString().slice(0, 19).replace(/[-T:]/g, '');
    expect(done.qrUrl).toBe(`https://ofd.soliq.uz/check?t=${done.terminalId}&r=${done.receiptNumber}&c=${stamp}&s=${done.fiscalSign}`);
    const events = await eventsOf(service, done.id);
    expect(events.map((event) => event.type)).toEqual(['receipt.fiscalized']);
    expect(events[0]!.data).toEqual(done);
    expect((await get(`/subscribe/v1/charges/${reply.body.id}`)).body.receipt).toBe(done.id);
  });

  it('a refund of it gets a return receipt with the sale lines, fiscalized too', async () => {
    const paid = (await charge(service, merchant.test, { amount: CART_AMOUNT, card, receipt: CART })).body;
    const refund = await service.call({ method: 'POST', url: '/v1/refunds', key: merchant.test, idempotencyKey: idem(), body: { paymentIntent: paid.id } });
    expect(refund.status).toBe(201);
    expect(refund.body.receipt).toMatch(/^rcpt_/);
    // The sale first, then its return.
    while ((await service.receipts.fiscalizeDue(10)) > 0);
    const returned = (await get(`/v1/receipts/${refund.body.receipt}`)).body;
    expect(returned).toMatchObject({ type: 'return', status: 'FISCALIZED', paymentIntent: paid.id, refund: refund.body.id, amount: CART_AMOUNT, vatAmount: CART_VAT });
    expect(returned.shipping).toEqual(CART.shipping);
    const list = (await get(`/v1/receipts?paymentIntent=${paid.id}`)).body;
    expect(list.data.map((receipt: { type: string }) => receipt.type)).toEqual(['return', 'sale']);
    expect((await get(`/v1/receipts?paymentIntent=${paid.id}&type=return`)).body.data).toHaveLength(1);
  });

  it('a return is registered only after its sale, and is refused with a refused sale', async () => {
    const refund = (paymentIntent: string) =>
      service.call({ method: 'POST', url: '/v1/refunds', key: merchant.test, idempotencyKey: idem(), body: { paymentIntent } });
    const refusedLines = { items: [{ title: 'Refused', price: 10_000, count: 1, code: '00000000000000000', packageCode: '1', vatPercent: 0 }] };
    const good = (await charge(service, merchant.test, { amount: CART_AMOUNT, card, receipt: CART })).body;
    const bad = (await charge(service, merchant.test, { amount: 10_000, card, receipt: refusedLines })).body;
    const goodReturn = (await refund(good.id)).body.receipt;
    const badReturn = (await refund(bad.id)).body.receipt;
    const status = async (id: string) => (await get(`/v1/receipts/${id}`)).body;

    // One batch: the sales end; their returns were not due while the sales were PENDING.
    await service.receipts.fiscalizeDue(10);
    expect(await status(good.receipt)).toMatchObject({ status: 'FISCALIZED' });
    expect(await status(bad.receipt)).toMatchObject({ status: 'FAILED', failureCode: 'INVALID_CODE' });
    expect(await status(goodReturn)).toMatchObject({ status: 'PENDING' });
    expect(await status(badReturn)).toMatchObject({ status: 'PENDING' });

    await service.receipts.fiscalizeDue(10);
    const returned = await status(goodReturn);
    expect(returned).toMatchObject({ status: 'FISCALIZED' });
    expect(Number(returned.receiptNumber)).toBeGreaterThan(Number((await status(good.receipt)).receiptNumber));
    expect(await status(badReturn)).toMatchObject({ status: 'FAILED', failureCode: 'SALE_NOT_FISCALIZED', terminalId: null });
  });

  it('a charge without lines makes no receipt, nor does its refund', async () => {
    const paid = (await charge(service, merchant.test, { amount: 10_000, card })).body;
    expect(paid.receipt).toBeNull();
    const refund = await service.call({ method: 'POST', url: '/v1/refunds', key: merchant.test, idempotencyKey: idem(), body: { paymentIntent: paid.id } });
    expect(refund.body.receipt).toBeNull();
    expect((await get(`/v1/receipts?paymentIntent=${paid.id}`)).body.data).toEqual([]);
  });

  it('a failed payment gets no receipt', async () => {
    const declined = await bindCard(service, merchant.test, '8600000000000015');
    const failed = (await charge(service, merchant.test, { amount: CART_AMOUNT, card: declined, receipt: CART })).body;
    expect(failed.status).toBe('FAILED');
    expect(failed.receipt).toBeNull();
    expect((await get(`/v1/receipts?paymentIntent=${failed.id}`)).body.data).toEqual([]);
  });

  it('the test module refuses the code of seventeen zeros: FAILED INVALID_CODE at once, with receipt.failed', async () => {
    const refused = { items: [{ title: 'Refused', price: 10_000, count: 1, code: '00000000000000000', packageCode: '1', vatPercent: 0 }] };
    const paid = (await charge(service, merchant.test, { amount: 10_000, card, receipt: refused })).body;
    expect(paid.status).toBe('SUCCEEDED');
    await service.receipts.fiscalizeDue(10);
    const receipt = (await get(`/v1/receipts/${paid.receipt}`)).body;
    expect(receipt).toMatchObject({ status: 'FAILED', failureCode: 'INVALID_CODE', terminalId: null, qrUrl: null });
    expect((await eventsOf(service, receipt.id)).map((event) => event.type)).toEqual(['receipt.failed']);
    // The payment itself is untouched.
    expect((await get(`/subscribe/v1/charges/${paid.id}`)).body.status).toBe('SUCCEEDED');
  });
});

describe('orders and the legacy pair carry lines to their payment', () => {
  it('an order paid on its page: the order and its payment name the sale receipt, order.paid included', async () => {
    const order = await service.call({
      method: 'POST',
      url: '/merchant/v1/orders',
      key: merchant.test,
      idempotencyKey: idem(),
      body: { amount: CART_AMOUNT, receipt: CART },
    });
    expect(order.status).toBe(201);
    expect(order.body.receipt).toBeNull();
    const paid = await service.call({ method: 'POST', url: `/v1/test_helpers/orders/${order.body.id}/pay`, key: merchant.test, body: {} });
    expect(paid.body.status).toBe('PAID');
    expect(paid.body.receipt).toMatch(/^rcpt_/);
    const intent = (await get(`/subscribe/v1/charges/${paid.body.paymentIntent}`)).body;
    expect(intent.receipt).toBe(paid.body.receipt);
    const orderPaid = (await eventsOf(service, order.body.id)).find((event) => event.type === 'order.paid');
    expect(orderPaid!.data.receipt).toBe(paid.body.receipt);
  });

  it('the legacy create keeps the lines until confirm succeeds', async () => {
    const created = await service.call({ method: 'POST', url: '/v1/payment_intents', key: merchant.test, idempotencyKey: idem(), body: { amount: CART_AMOUNT, card, receipt: CART } });
    expect(created.body.receipt).toBeNull();
    const confirmed = await service.call({ method: 'POST', url: `/v1/payment_intents/${created.body.id}/confirm`, key: merchant.test, idempotencyKey: idem() });
    expect(confirmed.body.status).toBe('SUCCEEDED');
    expect(confirmed.body.receipt).toMatch(/^rcpt_/);
  });
});

describe('the list', () => {
  it('filters by status and type, and another product sees none of them', async () => {
    const failed = (await get('/v1/receipts?status=FAILED')).body.data;
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((receipt: { status: string }) => receipt.status === 'FAILED')).toBe(true);
    const other = await service.createMerchant();
    expect((await get('/v1/receipts', other.test)).body.data).toEqual([]);
    expect((await get(`/v1/receipts/${failed[0].id}`, other.test)).status).toBe(404);
    expect((await get(`/v1/receipts/${failed[0].id}`, merchant.live)).status).toBe(404);
    expect((await get('/v1/receipts?status=DONE')).status).toBe(400);
  });
});
