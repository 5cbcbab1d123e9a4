// Two-step payments with the Node SDK against a running service: a hold made, part of it captured and another hold
// canceled, typed as the API describes them; a capture's Idempotency-Key made by the SDK and kept on its own retries;
// the loser of a capture and a cancel as a typed error; the hold's events narrowed by their type; an order whose buyer's
// money is held, captured with its sale receipt; a hold released at once by the test helper, as its expiry would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Tolov, { constructEvent, signedHeaders, TolovError, type Order, type PaymentIntent } from '../../packages/node/src/index.js';
import { startService, type TestService } from '../support/harness.js';
import { receiptFor } from '../support/receipts.js';

let service: TestService;
let base: string;
beforeAll(async () => {
  service = await startService();
  base = await service.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => service.stop());

/** A new product's SDK client (its fetch given, when the test watches the calls) and a saved test card. */
async function shop(fetch?: typeof globalThis.fetch): Promise<{ tolov: Tolov; card: string }> {
  const merchant = await service.createMerchant({ name: 'Two-step Shop', feeBps: 100 });
  const tolov = new Tolov(merchant.test, { baseUrl: base, ...(fetch ? { fetch } : {}) });
  const binding = await tolov.cardBindings.create({ customerRef: 'renter-1' });
  const card = (await tolov.testHelpers.cardBindings.complete(binding.id)).card!;
  return { tolov, card };
}

describe('two-step payments with the Node SDK', () => {
  it('holds, captures part of one hold and cancels another', async () => {
    const { tolov, card } = await shop();
    const held = await tolov.charges.create({ amount: 15_000_000, card, capture: 'manual', description: 'Delivery #77' });
    // Typed as the API describes it: a wrong field or status would not compile.
    const shown: Pick<PaymentIntent, 'status' | 'captureMethod' | 'amountCapturable'> = held;
    expect(shown).toMatchObject({ status: 'REQUIRES_CAPTURE', captureMethod: 'manual', amountCapturable: 15_000_000 });

    const captured = await tolov.charges.capture(held.id, { amount: 12_000_000 });
    expect(captured).toMatchObject({ id: held.id, status: 'SUCCEEDED', amount: 12_000_000, fee: 120_000, amountCapturable: 0 });
    expect(await tolov.charges.retrieve(held.id)).toEqual(captured);

    const other = await tolov.charges.create({ amount: 5_000_000, card, capture: 'manual' });
    const canceled = await tolov.charges.cancel(other.id);
    expect(canceled).toMatchObject({ id: other.id, status: 'CANCELED', amountCapturable: 0 });
    expect((await tolov.charges.list({ status: 'REQUIRES_CAPTURE' })).data).toEqual([]);
    expect((await tolov.balance.retrieve()).pending).toBe(12_000_000 - 120_000);
  });

  it('sends a capture one Idempotency-Key, its own or the SDK’s, kept on the SDK’s retries: captured once', async () => {
    const keys: string[] = [];
    let lost = false;
    // The capture's first answer is lost on its way back: the SDK retries under the same key and gets the same capture.
    const flaky: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input).endsWith('/capture')) return response;
      keys.push(new Headers(init?.headers).get('idempotency-key')!);
      if (lost) return response;
      lost = true;
      throw new TypeError('fetch failed');
    };
    const { tolov, card } = await shop(flaky);
    const held = await tolov.charges.create({ amount: 800_000, card, capture: 'manual' });
    expect(await tolov.charges.capture(held.id)).toMatchObject({ status: 'SUCCEEDED', amount: 800_000 });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^tolov-node-/);
    expect(keys[1]).toBe(keys[0]);

    const next = await tolov.charges.create({ amount: 900_000, card, capture: 'manual' });
    const first = await tolov.charges.capture(next.id, { amount: 400_000 }, { idempotencyKey: 'delivery-78-capture' });
    expect(await tolov.charges.capture(next.id, { amount: 400_000 }, { idempotencyKey: 'delivery-78-capture' })).toEqual(first);
    expect(keys.slice(2)).toEqual(['delivery-78-capture', 'delivery-78-capture']);
  });

  it('refuses the loser of a capture and a cancel as a typed INVALID_STATE, and a capture above the hold', async () => {
    const { tolov, card } = await shop();
    const held = await tolov.charges.create({ amount: 300_000, card, capture: 'manual' });
    const above = await tolov.charges.capture(held.id, { amount: 300_001 }).catch((error: unknown) => error);
    expect(above).toBeInstanceOf(TolovError);
    expect(above).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR', param: 'amount' });

    const answers = await Promise.allSettled([tolov.charges.capture(held.id), tolov.charges.cancel(held.id)]);
    const won = answers.filter((answer) => answer.status === 'fulfilled');
    const lost = answers.filter((answer): answer is PromiseRejectedResult => answer.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toBeInstanceOf(TolovError);
    expect(lost[0]!.reason).toMatchObject({ statusCode: 409, code: 'INVALID_STATE' });
    expect(['SUCCEEDED', 'CANCELED']).toContain((await tolov.charges.retrieve(held.id)).status);
  });

  it('lists the hold’s events, which constructEvent narrows by type to the payment intent', async () => {
    const { tolov, card } = await shop();
    const held = await tolov.charges.create({ amount: 200_000, card, capture: 'manual' });
    await tolov.charges.cancel(held.id);
    const types = (await tolov.events.list({ limit: 10 })).data.filter((event) => event.data.id === held.id).map((event) => event.type);
    expect(types.sort()).toEqual(['payment_intent.hold_released', 'payment_intent.requires_capture']);

    const [released] = (await tolov.events.list({ type: 'payment_intent.hold_released' })).data;
    const body = JSON.stringify(released);
    const secret = 'whsec_dHdvLXN0ZXAtc2VjcmV0LXR3by1zdGVwLXNlY3JldA==';
    const event = constructEvent(body, signedHeaders(body, secret), secret);
    if (event.type !== 'payment_intent.hold_released') throw new Error(`not narrowed: ${event.type}`);
    // Narrowed: `data` is the payment intent as it was, its status in lower case.
    expect(event.data).toMatchObject({ id: held.id, status: 'canceled', captureMethod: 'manual', amountCapturable: 0 });
  });
});

describe('orders that hold the buyer’s money, and the expiry helper, with the Node SDK', () => {
  it('holds an order’s payment once the buyer paid, then captures part of it with the order’s sale receipt', async () => {
    const { tolov } = await shop();
    const order = await tolov.orders.create({ amount: 2_400_000, description: 'Order #1002', capture: 'manual', receipt: receiptFor(2_400_000) });
    // Typed as the API describes it: `captureMethod` is on the order.
    const shown: Pick<Order, 'status' | 'captureMethod' | 'paymentIntent'> = order;
    expect(shown).toMatchObject({ status: 'PENDING', captureMethod: 'manual', paymentIntent: null });

    const paid = await tolov.testHelpers.orders.pay(order.id);
    expect(paid).toMatchObject({ id: order.id, status: 'PAID', captureMethod: 'manual', paymentIntent: expect.stringMatching(/^pi_/), receipt: null });
    const held = await tolov.charges.retrieve(paid.paymentIntent!);
    expect(held).toMatchObject({ status: 'REQUIRES_CAPTURE', order: order.id, captureMethod: 'manual', amountCapturable: 2_400_000, receipt: null });
    expect((await tolov.charges.list({ status: 'REQUIRES_CAPTURE' })).data.map((intent) => intent.id)).toEqual([held.id]);
    expect((await tolov.balance.retrieve()).pending).toBe(0);

    // Less than was held: the lines for the amount captured.
    const captured = await tolov.charges.capture(held.id, { amount: 2_100_000, receipt: receiptFor(2_100_000) });
    expect(captured).toMatchObject({ id: held.id, status: 'SUCCEEDED', amount: 2_100_000, fee: 21_000, amountCapturable: 0, order: order.id, receipt: expect.stringMatching(/^rcpt_/) });
    expect(await tolov.orders.retrieve(order.id)).toMatchObject({ status: 'PAID', amount: 2_400_000, paymentIntent: held.id, receipt: captured.receipt });
    expect(await tolov.receipts.retrieve(captured.receipt!)).toMatchObject({ type: 'sale', paymentIntent: held.id, amount: 2_100_000 });
    expect((await tolov.balance.retrieve()).pending).toBe(2_100_000 - 21_000);

    const types = (await tolov.events.list({ limit: 10 })).data.filter((event) => event.data.id === order.id || event.data.id === held.id).map((event) => event.type);
    expect(types.sort()).toEqual(['order.paid', 'payment_intent.requires_capture', 'payment_intent.succeeded']);
  });

  it('releases a hold at once through the test helper, a charge’s or an order’s; a repeat is a typed INVALID_STATE', async () => {
    const { tolov, card } = await shop();
    const hold = await tolov.charges.create({ amount: 400_000, card, capture: 'manual', description: 'Bicycle rental 7802, deposit' });
    const released: PaymentIntent = await tolov.testHelpers.charges.expireHold(hold.id);
    expect(released).toMatchObject({ id: hold.id, status: 'CANCELED', amountCapturable: 0 });
    expect(await tolov.charges.retrieve(hold.id)).toEqual(released);
    const again = await tolov.testHelpers.charges.expireHold(hold.id).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(TolovError);
    expect(again).toMatchObject({ statusCode: 409, code: 'INVALID_STATE' });
    const [event] = (await tolov.events.list({ type: 'payment_intent.hold_released' })).data;
    expect(event).toMatchObject({ data: { id: hold.id, status: 'canceled' } });

    // An order's hold: its payment CANCELED, the order still PAID, nothing in the balance.
    const order = await tolov.testHelpers.orders.pay((await tolov.orders.create({ amount: 700_000, capture: 'manual' })).id);
    expect(await tolov.testHelpers.charges.expireHold(order.paymentIntent!)).toMatchObject({ status: 'CANCELED', order: order.id });
    expect(await tolov.orders.retrieve(order.id)).toMatchObject({ status: 'PAID', receipt: null });
    expect(await tolov.balance.retrieve()).toMatchObject({ pending: 0, available: 0 });

    // Only a hold: a charge taken at once is refused, and so is another product's payment.
    const taken = await tolov.charges.create({ amount: 100_000, card });
    expect(await tolov.testHelpers.charges.expireHold(taken.id).catch((error: unknown) => error)).toMatchObject({ statusCode: 409, code: 'INVALID_STATE' });
    const other = await shop();
    expect(await other.tolov.testHelpers.charges.expireHold(hold.id).catch((error: unknown) => error)).toMatchObject({ statusCode: 404 });
  });
});
