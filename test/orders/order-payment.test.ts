import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passResendCooldown, PHONE, resendCode, sessionState, submitCard, submitCode, TEST_CODE } from '../support/binding.js';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { balance, charge, eventsOf, railOperations, reconcileNow } from '../support/payments.js';

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant({ name: 'Chorsu Market', feeBps: 100 });
});
afterAll(() => service.stop());

async function createOrder(body: Record<string, unknown> = {}, key = merchant.test) {
  const reply = await service.call({
    method: 'POST',
    url: '/merchant/v1/orders',
    key,
    idempotencyKey: idem(),
    body: { amount: 1_500_000, description: 'Two kilos of apricots', returnUrl: 'https://shop.example.uz/thanks', ...body },
  });
  return { order: reply.body, token: reply.body.paymentUrl.split('/pay/')[1] as string };
}
const readOrder = async (id: string, key = merchant.test) => (await service.call({ method: 'GET', url: `/merchant/v1/orders/${id}`, key })).body;
const cancel = (id: string, key = merchant.test) => service.call({ method: 'POST', url: `/merchant/v1/orders/${id}/cancel`, key });
const debitsOf = async (orderId: string) =>
  service.db.query<{ id: string; status: string }>('SELECT id, status FROM payment_intents WHERE order_id = $1', [orderId]);
const pastDue = async (orderId: string) => {
  await service.db.query("UPDATE orders SET expires_at = now() - interval '1 second' WHERE id = $1", [orderId]);
  await service.db.query("UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE order_id = $1", [orderId]);
};

describe('paying an order through its session', () => {
  it('PENDING → PAID: the session completes, the order has paidAt and its payment, one order.paid, money in the balance', async () => {
    const shop = await service.createMerchant({ name: 'Chorsu Market', feeBps: 100 });
    const { order, token } = await createOrder({}, shop.test);

    const state = await sessionState(service, token);
    expect(state.body).toMatchObject({
      kind: 'order',
      status: 'PENDING',
      productName: 'Chorsu Market',
      order: { amount: 1_500_000, currency: 'UZS', description: 'Two kilos of apricots', status: 'PENDING', paidAt: null, payment: null },
      canSaveCard: false,
      returnUrl: null,
      expiresAt: order.expiresAt,
    });

    expect((await submitCard(service, token, { pan: '8600000000000007' })).body).toMatchObject({ status: 'AWAITING_CODE', maskedPan: '860000******0007' });
    expect((await submitCode(service, token, '000000')).body.code).toBe('WRONG_CODE');
    await passResendCooldown(service, token);
    expect((await resendCode(service, token)).body.status).toBe('AWAITING_CODE');
    const paid = await submitCode(service, token, TEST_CODE);
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ status: 'COMPLETED', returnUrl: 'https://shop.example.uz/thanks', order: { status: 'PAID' } });

    const read = await readOrder(order.id, shop.test);
    expect(read).toMatchObject({ status: 'PAID', saveCard: false, savedCard: null, paymentIntent: expect.stringMatching(/^pi_/) });
    // The buyer's receipt names the payment as the merchant sees it.
    expect(paid.body.order).toMatchObject({ paidAt: read.paidAt, payment: read.paymentIntent });
    expect(Date.parse(read.paidAt)).toBeGreaterThan(Date.parse(read.created));
    const intent = (await service.call({ method: 'GET', url: `/subscribe/v1/charges/${read.paymentIntent}`, key: shop.test })).body;
    expect(intent).toMatchObject({ status: 'SUCCEEDED', amount: 1_500_000, fee: 15_000, order: order.id, card: null, description: 'Two kilos of apricots' });
    // No card was saved, yet the payment says which card paid, as the buyer's receipt does (never more than masked).
    expect(intent).toMatchObject({ rail: 'uzcard', maskedPan: '860000******0007' });
    expect(JSON.stringify(intent)).not.toContain('8600000000000007');
    expect(await balance(service, shop.test)).toMatchObject({ pending: 1_485_000 });

    const events = await eventsOf(service, order.id);
    expect(events.map((event) => event.type)).toEqual(['order.paid']);
    expect(events[0]!.data).toEqual(read);
    expect((await eventsOf(service, intent.id)).map((event) => event.type)).toEqual(['payment_intent.succeeded']);
  });

  it('PENDING → FAILED on a refusal: 402 PAYMENT_FAILED with failureCode, session and order FAILED, one order.failed', async () => {
    const { order, token } = await createOrder();
    await submitCard(service, token, { pan: '8600000000000015' });
    const refused = await submitCode(service, token, TEST_CODE);
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'PAYMENT_FAILED', failureCode: 'INSUFFICIENT_FUNDS' });
    // The session says why too, so that a page opened again can tell the buyer.
    expect((await sessionState(service, token)).body).toMatchObject({ status: 'FAILED', failureCode: 'INSUFFICIENT_FUNDS', order: { status: 'FAILED' } });
    const read = await readOrder(order.id);
    expect(read).toMatchObject({ status: 'FAILED', failureCode: 'INSUFFICIENT_FUNDS' });
    const intent = (await service.call({ method: 'GET', url: `/subscribe/v1/charges/${read.paymentIntent}`, key: merchant.test })).body;
    expect(intent).toMatchObject({ status: 'FAILED', failureCode: 'INSUFFICIENT_FUNDS' });
    expect((await eventsOf(service, order.id)).map((event) => event.type)).toEqual(['order.failed']);
    // A failed order is final: no second attempt, no second debit.
    expect((await submitCard(service, token, { pan: '8600000000000007' })).status).toBe(409);
    expect(await debitsOf(order.id)).toHaveLength(1);
  });

  it('an unclear answer leaves the session PROCESSING and the order PENDING with its debit in progress, until reconciled', async () => {
    const { order, token } = await createOrder();
    await submitCard(service, token, { pan: '8600000000000031' });
    const processing = await submitCode(service, token, TEST_CODE);
    expect(processing.status).toBe(200);
    expect(processing.body).toMatchObject({ status: 'PROCESSING', returnUrl: null, order: { status: 'PENDING' } });
    expect((await readOrder(order.id)).status).toBe('PENDING');
    const blocked = await cancel(order.id);
    expect(blocked.status).toBe(409);
    expect(blocked.body.code).toBe('ORDER_DEBIT_IN_PROGRESS');
    // Expiry never takes an order from under its debit.
    await pastDue(order.id);
    await service.orders.expireDue(100);
    expect((await readOrder(order.id)).status).toBe('PENDING');

    await reconcileNow(service);
    expect((await readOrder(order.id)).status).toBe('PAID');
    expect((await eventsOf(service, order.id)).map((event) => event.type)).toEqual(['order.paid']);
    expect(await debitsOf(order.id)).toEqual([{ id: expect.any(String), status: 'SUCCEEDED' }]);
  });

  it('five wrong codes close the session and fail the order: order.failed with TOO_MANY_ATTEMPTS, no debit', async () => {
    const { order, token } = await createOrder();
    await submitCard(service, token, { pan: '8600000000000007' });
    for (let i = 0; i < 4; i++) expect((await submitCode(service, token, '000000')).body.code).toBe('WRONG_CODE');
    const last = await submitCode(service, token, '000000');
    expect(last.body).toMatchObject({ code: 'WRONG_CODE', message: expect.stringContaining('last attempt') });
    expect((await sessionState(service, token)).body).toMatchObject({ status: 'FAILED', failureCode: 'TOO_MANY_ATTEMPTS', order: { status: 'FAILED' } });
    expect(await readOrder(order.id)).toMatchObject({ status: 'FAILED', failureCode: 'TOO_MANY_ATTEMPTS', paymentIntent: null });
    const events = await eventsOf(service, order.id);
    expect(events.map((event) => event.type)).toEqual(['order.failed']);
    expect(events[0]!.data).toMatchObject({ status: 'FAILED', failureCode: 'TOO_MANY_ATTEMPTS' });
    expect((await submitCode(service, token, TEST_CODE)).body.code).toBe('TOO_MANY_ATTEMPTS');
    expect(await debitsOf(order.id)).toEqual([]);
  });

  it('an unclear answer that turns out refused makes the order FAILED', async () => {
    const { order, token } = await createOrder();
    await submitCard(service, token, { pan: '8600000000000049' });
    expect((await submitCode(service, token, TEST_CODE)).body.status).toBe('PROCESSING');
    await reconcileNow(service);
    expect((await readOrder(order.id)).status).toBe('FAILED');
    expect((await sessionState(service, token)).body.status).toBe('FAILED');
    expect((await eventsOf(service, order.id)).map((event) => event.type)).toEqual(['order.failed']);
  });

  it('saves the card for the customerRef when the buyer asks, and it can be charged later', async () => {
    const { order, token } = await createOrder({ customerRef: 'buyer-77' });
    expect((await sessionState(service, token)).body.canSaveCard).toBe(true);
    await submitCard(service, token, { pan: '9860000000000000', saveCard: true });
    await submitCode(service, token, TEST_CODE);
    const read = await readOrder(order.id);
    expect(read).toMatchObject({ status: 'PAID', saveCard: true, savedCard: expect.stringMatching(/^card_/) });
    const card = (await service.call({ method: 'GET', url: `/subscribe/v1/cards/${read.savedCard}`, key: merchant.test })).body;
    expect(card).toMatchObject({ status: 'ACTIVE', customerRef: 'buyer-77', rail: 'humo', maskedPan: '986000******0000' });
    const intent = (await service.call({ method: 'GET', url: `/subscribe/v1/charges/${read.paymentIntent}`, key: merchant.test })).body;
    expect(intent).toMatchObject({ card: read.savedCard, rail: 'humo', maskedPan: '986000******0000' });
    expect((await charge(service, merchant.test, { amount: 5_000, card: read.savedCard })).body).toMatchObject({ status: 'SUCCEEDED', maskedPan: '986000******0000' });
  });

  it('does not save a card the buyer did not ask to keep, nor one of a refused payment', async () => {
    const kept = await createOrder({ customerRef: 'buyer-78' });
    await submitCard(service, kept.token, { pan: '8600000000000007' });
    await submitCode(service, kept.token, TEST_CODE);
    expect(await readOrder(kept.order.id)).toMatchObject({ saveCard: false, savedCard: null });
    const refused = await createOrder({ customerRef: 'buyer-79' });
    await submitCard(service, refused.token, { pan: '8600000000000015', saveCard: true });
    await submitCode(service, refused.token, TEST_CODE);
    expect(await readOrder(refused.order.id)).toMatchObject({ status: 'FAILED', saveCard: false, savedCard: null });
    expect(await service.db.query("SELECT id FROM cards WHERE customer_ref IN ('buyer-78', 'buyer-79')")).toEqual([]);
  });

  it('refuses saveCard without a customerRef, and on a card binding', async () => {
    const { token } = await createOrder();
    const reply = await submitCard(service, token, { pan: '8600000000000007', saveCard: true });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'VALIDATION_ERROR', param: 'saveCard' });
    expect((await sessionState(service, token)).body.cardAttemptsLeft).toBe(3);
  });

  it('refunds an order payment', async () => {
    const { order, token } = await createOrder({ amount: 20_000 });
    await submitCard(service, token, { pan: '8600000000000007' });
    await submitCode(service, token, TEST_CODE);
    const { paymentIntent } = await readOrder(order.id);
    const refund = await service.call({ method: 'POST', idempotencyKey: idem(), url: '/v1/refunds', key: merchant.test, body: { paymentIntent } });
    expect(refund.body).toMatchObject({ status: 'SUCCEEDED', amount: 20_000 });
    expect(await railOperations(service, refund.body.id)).toBe(1);
  });
});

describe('cancel', () => {
  it('PENDING → CANCELED; the session closes; cancel again is 409 ORDER_NOT_CANCELABLE', async () => {
    const { order, token } = await createOrder();
    await submitCard(service, token, { pan: '8600000000000007' });
    const reply = await cancel(order.id);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ id: order.id, object: 'order', status: 'CANCELED' });
    expect((await sessionState(service, token)).body).toMatchObject({ status: 'EXPIRED', order: { status: 'CANCELED' } });
    expect((await submitCode(service, token, TEST_CODE)).body.code).toBe('INVALID_STATE');
    const again = await cancel(order.id);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ORDER_NOT_CANCELABLE');
    expect(await eventsOf(service, order.id)).toEqual([]);
    expect(await debitsOf(order.id)).toEqual([]);
  });

  it('refuses a paid order with 409 ORDER_NOT_CANCELABLE', async () => {
    const { order, token } = await createOrder();
    await submitCard(service, token, { pan: '8600000000000007' });
    await submitCode(service, token, TEST_CODE);
    expect((await cancel(order.id)).body.code).toBe('ORDER_NOT_CANCELABLE');
  });

  it("answers another product's or mode's order with 404", async () => {
    const { order } = await createOrder();
    const other = await service.createMerchant();
    expect((await cancel(order.id, other.test)).status).toBe(404);
    expect((await cancel(order.id, merchant.live)).status).toBe(404);
    expect((await readOrder(order.id)).status).toBe('PENDING');
  });

  it('races paying: exactly one wins, the other gets its 409', async () => {
    // Each side starts first in turn, with a lead from none to one that decides the race, so both outcomes occur.
    const rounds = [0, 2, 50].flatMap((leadMs) => [{ first: 'pay', leadMs }, { first: 'cancel', leadMs }] as const);
    const finals = new Set<string>();
    for (const { first, leadMs } of rounds) {
      const { order, token } = await createOrder();
      await submitCard(service, token, { pan: '8600000000000007' });
      const lead = () => new Promise((resolve) => setTimeout(resolve, leadMs));
      const pay = first === 'pay' ? submitCode(service, token, TEST_CODE) : lead().then(() => submitCode(service, token, TEST_CODE));
      const canceling = first === 'cancel' ? cancel(order.id) : lead().then(() => cancel(order.id));
      const [paid, canceled] = await Promise.all([pay, canceling]);
      const final = (await readOrder(order.id)).status;
      finals.add(final);
      if (final === 'PAID') {
        expect(paid.status).toBe(200);
        expect(canceled.status).toBe(409);
        expect(['ORDER_DEBIT_IN_PROGRESS', 'ORDER_NOT_CANCELABLE']).toContain(canceled.body.code);
        expect(await debitsOf(order.id)).toHaveLength(1);
      } else {
        expect(final).toBe('CANCELED');
        expect(canceled.status).toBe(200);
        expect(paid.status).toBe(409);
        expect(await debitsOf(order.id)).toEqual([]);
      }
    }
    expect([...finals].sort()).toEqual(['CANCELED', 'PAID']);
  });
});

describe('expiry', () => {
  it('PENDING → EXPIRED on read, with exactly one order.expired; its session answers 410', async () => {
    const { order, token } = await createOrder();
    await pastDue(order.id);
    const read = await readOrder(order.id);
    expect(read.status).toBe('EXPIRED');
    expect(await readOrder(order.id)).toEqual(read);
    const list = await service.call({ method: 'GET', url: '/merchant/v1/orders?limit=100', key: merchant.test });
    expect(list.body.data.find((o: { id: string }) => o.id === order.id).status).toBe('EXPIRED');
    await service.orders.expireDue(100);
    expect((await sessionState(service, token)).status).toBe(410);
    const events = await eventsOf(service, order.id);
    expect(events.map((event) => event.type)).toEqual(['order.expired']);
    expect(events[0]!.data).toEqual(read);
    expect((await cancel(order.id)).body.code).toBe('ORDER_NOT_CANCELABLE');
  });

  it('by the worker, once, and on the first session call', async () => {
    const byWorker = await createOrder();
    const byCall = await createOrder();
    await pastDue(byWorker.order.id);
    await pastDue(byCall.order.id);
    const submitted = await submitCard(service, byCall.token, { pan: '8600000000000007' });
    expect(submitted.status).toBe(410);
    expect(submitted.body).toMatchObject({ error: 'Gone', code: 'SESSION_EXPIRED' });
    expect(await service.orders.expireDue(100)).toBeGreaterThanOrEqual(1);
    await service.orders.expireDue(100);
    for (const { order } of [byWorker, byCall]) {
      expect((await readOrder(order.id)).status).toBe('EXPIRED');
      expect((await eventsOf(service, order.id)).map((event) => event.type)).toEqual(['order.expired']);
    }
  });

  it('races paying: the order is paid or expired, never both, and never expired under its debit', async () => {
    // From a code sent well before the order's end to one sent well after it, so both outcomes occur.
    const rounds = [{ ttlMs: 5_000, waitMs: 0 }, ...[22, 26, 30, 34].map((waitMs) => ({ ttlMs: 30, waitMs })), { ttlMs: 30, waitMs: 80 }];
    const finals = new Set<string>();
    for (const { ttlMs, waitMs } of rounds) {
      const { order, token } = await createOrder();
      await submitCard(service, token, { pan: '8600000000000007' });
      await service.db.query("UPDATE orders SET expires_at = now() + $2 * interval '1 millisecond' WHERE id = $1", [order.id, ttlMs]);
      await service.db.query("UPDATE checkout_sessions SET expires_at = now() + $2 * interval '1 millisecond' WHERE order_id = $1", [order.id, ttlMs]);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      const [paid] = await Promise.all([submitCode(service, token, TEST_CODE), service.orders.expireDue(100)]);
      const final = await readOrder(order.id);
      finals.add(final.status);
      const types = (await eventsOf(service, order.id)).map((event) => event.type);
      if (final.status === 'PAID') {
        expect(paid.status).toBe(200);
        expect(types).toEqual(['order.paid']);
      } else {
        expect(final.status).toBe('EXPIRED');
        expect(paid.status).toBe(410);
        expect(types).toEqual(['order.expired']);
        expect(await debitsOf(order.id)).toEqual([]);
      }
    }
    expect([...finals].sort()).toEqual(['EXPIRED', 'PAID']);
  });
});

describe('double submission', () => {
  it('of the right code debits once', async () => {
    const { order, token } = await createOrder();
    await submitCard(service, token, { pan: '8600000000000007' });
    const replies = await Promise.all([0, 1, 2].map(() => submitCode(service, token, TEST_CODE)));
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409, 409]);
    const debits = await debitsOf(order.id);
    expect(debits).toHaveLength(1);
    expect(await railOperations(service, debits[0]!.id)).toBe(1);
    expect((await eventsOf(service, order.id)).map((event) => event.type)).toEqual(['order.paid']);
  });
});

describe('the session of an order', () => {
  it('holds the card submission rules of a binding', async () => {
    const { token } = await createOrder();
    expect((await submitCard(service, token, { pan: '8600000000000023' })).body.code).toBe('CARD_INACTIVE');
    expect((await submitCard(service, token, { pan: '8600000000000008' })).body.code).toBe('INVALID_CARD');
    expect((await sessionState(service, token)).body).toMatchObject({ status: 'PENDING', cardAttemptsLeft: 1 });
    expect((await submitCode(service, token, TEST_CODE)).body.code).toBe('INVALID_STATE');
    const phoneless = await service.call({ method: 'POST', url: `/checkout/v1/sessions/${token}/card`, body: { pan: '8600000000000007', expiry: '12/30' } });
    expect(phoneless.body).toMatchObject({ code: 'VALIDATION_ERROR', param: 'phone' });
    expect(PHONE).toMatch(/^998/);
  });
});
