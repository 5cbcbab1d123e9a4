import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { balance, chargeCard, railOperations, reconcileNow } from '../support/payments.js';

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService({ TOLOV_SETTLEMENT_DELAY_SECONDS: '0' });
  merchant = await service.createMerchant();
});
afterAll(() => service.stop());

const refund = (key: string, body: Record<string, unknown>, idempotencyKey = idem()) =>
  service.call({ method: 'POST', url: '/v1/refunds', key, body, idempotencyKey });
const refundRows = async (paymentIntent: string) =>
  service.db.query<{ status: string }>('SELECT status FROM refunds WHERE payment_intent_id = $1', [paymentIntent]);

describe('refunds', () => {
  it('refund the full amount: SUCCEEDED, amountRefunded, available debited, fee kept', async () => {
    const shop = await service.createMerchant({ feeBps: 100 });
    const intent = await chargeCard(service, shop.test, '8600000000000007', 200_000);
    await service.payments.settle(0, 100);
    expect(await balance(service, shop.test)).toMatchObject({ available: 198_000, pending: 0 });

    const reply = await refund(shop.test, { paymentIntent: intent.id, reason: 'requested_by_customer' });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^re_/),
      object: 'refund',
      amount: 200_000,
      currency: 'UZS',
      paymentIntent: intent.id,
      status: 'SUCCEEDED',
      failureCode: null,
      reason: 'requested_by_customer',
      receipt: null,
      livemode: false,
      created: expect.any(String),
    });
    expect((await service.call({ method: 'GET', url: `/subscribe/v1/charges/${intent.id}`, key: shop.test })).body.amountRefunded).toBe(200_000);
    expect(await balance(service, shop.test)).toMatchObject({ available: -2_000, pending: 0 });
    expect((await service.call({ method: 'GET', url: `/v1/refunds/${reply.body.id}`, key: shop.test })).body).toEqual(reply.body);
    expect((await service.call({ method: 'GET', url: '/v1/refunds', key: shop.test })).body.data).toEqual([reply.body]);
  });

  it('takes an amount equal to the payment', async () => {
    const intent = await chargeCard(service, merchant.test, '8600000000000007', 5_000);
    expect((await refund(merchant.test, { paymentIntent: intent.id, amount: 5_000 })).body.status).toBe('SUCCEEDED');
  });

  it('refuses a partial amount with 400 PARTIAL_REFUND_NOT_SUPPORTED before any record exists', async () => {
    const intent = await chargeCard(service, merchant.test, '8600000000000007', 5_000);
    for (const amount of [4_999, 5_001, 1]) {
      const reply = await refund(merchant.test, { paymentIntent: intent.id, amount });
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ code: 'PARTIAL_REFUND_NOT_SUPPORTED', param: 'amount' });
    }
    expect(await refundRows(intent.id)).toHaveLength(0);
  });

  it('refuses a second refund with 409 ALREADY_REFUNDED', async () => {
    const intent = await chargeCard(service, merchant.test, '8600000000000007', 5_000);
    await refund(merchant.test, { paymentIntent: intent.id });
    const second = await refund(merchant.test, { paymentIntent: intent.id });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('ALREADY_REFUNDED');
    expect(await refundRows(intent.id)).toHaveLength(1);
  });

  it('refunds once when asked twice at once', async () => {
    const intent = await chargeCard(service, merchant.test, '8600000000000007', 5_000);
    const replies = await Promise.all([0, 1, 2].map(() => refund(merchant.test, { paymentIntent: intent.id })));
    expect(replies.map((reply) => reply.status).sort()).toEqual([201, 409, 409]);
    expect(await refundRows(intent.id)).toEqual([{ status: 'SUCCEEDED' }]);
  });

  it('refuses a payment that did not succeed with 409 PAYMENT_NOT_REFUNDABLE', async () => {
    const failed = await chargeCard(service, merchant.test, '8600000000000015');
    const processing = await chargeCard(service, merchant.test, '8600000000000031');
    for (const intent of [failed, processing]) {
      const reply = await refund(merchant.test, { paymentIntent: intent.id });
      expect(reply.status).toBe(409);
      expect(reply.body.code).toBe('PAYMENT_NOT_REFUNDABLE');
    }
  });

  it('8600 0000 0000 0064: PENDING, then reconciled to SUCCEEDED once', async () => {
    const shop = await service.createMerchant({ feeBps: 0 });
    const intent = await chargeCard(service, shop.test, '8600000000000064', 8_000);
    const reply = await refund(shop.test, { paymentIntent: intent.id });
    expect(reply.body.status).toBe('PENDING');
    expect(await balance(service, shop.test)).toMatchObject({ available: 0, pending: 8_000 });
    expect((await refund(shop.test, { paymentIntent: intent.id })).body.code).toBe('ALREADY_REFUNDED');
    await reconcileNow(service);
    await reconcileNow(service);
    expect((await service.call({ method: 'GET', url: `/v1/refunds/${reply.body.id}`, key: shop.test })).body.status).toBe('SUCCEEDED');
    expect(await balance(service, shop.test)).toMatchObject({ available: -8_000, pending: 8_000 });
    expect(await railOperations(service, reply.body.id)).toBe(1);
  });

  it("answers another product's or mode's payment and refund with 404", async () => {
    const intent = await chargeCard(service, merchant.test, '8600000000000007', 5_000);
    const done = await refund(merchant.test, { paymentIntent: intent.id });
    const other = await service.createMerchant();
    expect((await refund(other.test, { paymentIntent: intent.id })).status).toBe(404);
    expect((await service.call({ method: 'GET', url: `/v1/refunds/${done.body.id}`, key: other.test })).status).toBe(404);
    expect((await service.call({ method: 'GET', url: `/v1/refunds/${done.body.id}`, key: merchant.live })).status).toBe(404);
    const list = await service.call({ method: 'GET', url: '/v1/refunds?limit=100', key: other.test });
    expect(list.body.data).toEqual([]);
  });

  it.each([
    [{}, 'paymentIntent'],
    [{ paymentIntent: 'pi_x', amount: 0 }, 'amount'],
    [{ paymentIntent: 'pi_x', amount: 1.5 }, 'amount'],
    [{ paymentIntent: 'pi_x', reason: 'r'.repeat(501) }, 'reason'],
    [{ paymentIntent: 'pi_x', currency: 'UZS' }, 'currency'],
  ])('refuses %j with 400', async (body, param) => {
    const reply = await refund(merchant.test, body);
    expect(reply.status).toBe(400);
    expect(reply.body.param).toBe(param);
  });
});

describe('refunds and their idempotency keys', () => {
  it('stores a refusal under its key: a retry after the payment became refundable replays the 409', async () => {
    const shop = await service.createMerchant();
    const unclear = await chargeCard(service, shop.test, '8600000000000031', 7_000);
    expect(unclear.status).toBe('PROCESSING');
    const key = idem();
    const refused = await refund(shop.test, { paymentIntent: unclear.id }, key);
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 409, code: 'PAYMENT_NOT_REFUNDABLE' });
    await reconcileNow(service);
    expect((await service.call({ method: 'GET', url: `/subscribe/v1/charges/${unclear.id}`, key: shop.test })).body.status).toBe('SUCCEEDED');
    const retried = await refund(shop.test, { paymentIntent: unclear.id }, key);
    expect({ status: retried.status, text: retried.text, replayed: retried.headers['idempotent-replayed'] }).toEqual({
      status: 409,
      text: refused.text,
      replayed: 'true',
    });
    expect(await refundRows(unclear.id)).toEqual([]);
    // A new key is a new attempt.
    expect((await refund(shop.test, { paymentIntent: unclear.id })).status).toBe(201);
  });

  it('requires the key on every call that moves money, naming the header; nothing is done without it', async () => {
    const shop = await service.createMerchant();
    const paid = await chargeCard(service, shop.test, '8600000000000007');
    const created = await service.call({ method: 'POST', url: '/v1/payment_intents', key: shop.test, body: { amount: 700, card: paid.card } });
    const calls = [
      { url: '/v1/refunds', body: { paymentIntent: paid.id } },
      { url: `/v1/payment_intents/${created.body.id}/confirm` },
      { url: '/subscribe/v1/charges', body: { amount: 700, card: paid.card } },
      { url: '/merchant/v1/orders', body: { amount: 700 } },
    ];
    for (const call of calls) {
      const reply = await service.call({ method: 'POST', key: shop.test, ...call });
      expect({ url: call.url, status: reply.status, code: reply.body.code, param: reply.body.param }).toEqual({
        url: call.url,
        status: 400,
        code: 'IDEMPOTENCY_KEY_REQUIRED',
        param: 'Idempotency-Key',
      });
      expect(reply.body.message).toContain('Idempotency-Key');
    }
    expect(await refundRows(paid.id)).toEqual([]);
    expect((await service.call({ method: 'GET', url: `/v1/payment_intents/${created.body.id}`, key: shop.test })).body.status).toBe('REQUIRES_PAYMENT');
    expect(await railOperations(service, created.body.id)).toBe(0);
  });
});
