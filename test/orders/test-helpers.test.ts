// Test mode's helpers: an order expired or paid at once, with the events a buyer or time would cause; nothing with a
// live key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { eventsOf } from '../support/payments.js';

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
});
afterAll(async () => service.stop());

const createOrder = async (key = merchant.test) =>
  (await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 250_000 } })).body;
const helper = (order: string, action: 'expire' | 'pay', body?: unknown, key = merchant.test) =>
  service.call({ method: 'POST', url: `/v1/test_helpers/orders/${order}/${action}`, key, ...(body === undefined ? {} : { body }) });

describe('test helpers', () => {
  it('expire a PENDING order now, with order.expired, and only a PENDING one', async () => {
    const order = await createOrder();
    const expired = await helper(order.id, 'expire');
    expect(expired.status).toBe(200);
    expect(expired.body).toMatchObject({ id: order.id, status: 'EXPIRED' });
    expect((await eventsOf(service, order.id)).map((event) => event.type)).toEqual(['order.expired']);
    const again = await helper(order.id, 'expire');
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'INVALID_STATE', message: 'Only a PENDING order expires; this one is EXPIRED' });
  });

  it('pay an order as a buyer would: the test card decides, and the events follow', async () => {
    const paid = await helper((await createOrder()).id, 'pay', {});
    expect(paid.body).toMatchObject({ status: 'PAID', paymentIntent: expect.stringMatching(/^pi_/) });
    expect((await eventsOf(service, paid.body.id)).map((event) => event.type)).toEqual(['order.paid']);

    const declined = await helper((await createOrder()).id, 'pay', { card: '8600000000000015' });
    expect(declined.body).toMatchObject({ status: 'FAILED', failureCode: 'INSUFFICIENT_FUNDS' });
    expect((await eventsOf(service, declined.body.id)).map((event) => event.type)).toEqual(['order.failed']);

    const intent = await service.call({ method: 'GET', url: `/subscribe/v1/charges/${paid.body.paymentIntent}`, key: merchant.test });
    expect(intent.body).toMatchObject({ status: 'SUCCEEDED', amount: 250_000 });
    expect((await helper(paid.body.id, 'pay', {})).body).toMatchObject({ code: 'INVALID_STATE' });
  });

  it('refuse what a buyer would be refused, and a body that is not a card', async () => {
    const inactive = await helper((await createOrder()).id, 'pay', { card: '8600000000000023' });
    expect(inactive.status).toBe(400);
    expect(inactive.body.code).toBe('CARD_INACTIVE');
    for (const body of [{ card: '1234' }, { card: 8600000000000007 }, { pan: '8600000000000007' }]) {
      expect((await helper((await createOrder()).id, 'pay', body)).body.code).toBe('VALIDATION_ERROR');
    }
    expect((await helper('ord_missing', 'expire')).status).toBe(404);
  });

  it('do not exist for a live key, nor for another product', async () => {
    const order = await createOrder();
    const live = await helper(order.id, 'expire', undefined, merchant.live);
    expect(live.status).toBe(404);
    expect(live.body.message).toMatch(/^Route POST \/v1\/test_helpers\/orders\/.+\/expire not found$/);
    const other = await service.createMerchant();
    expect((await helper(order.id, 'expire', undefined, other.test)).status).toBe(404);
    expect((await service.call({ method: 'GET', url: `/merchant/v1/orders/${order.id}`, key: merchant.test })).body.status).toBe('PENDING');
  });

  it('complete a card binding as a buyer would, saving a test card that charges as its row says', async () => {
    const binding = (await service.call({ method: 'POST', url: '/subscribe/v1/card_bindings', key: merchant.test, idempotencyKey: idem(), body: {} })).body;
    const completed = await service.call({ method: 'POST', url: `/v1/test_helpers/card_bindings/${binding.id}/complete`, key: merchant.test, body: { card: '8600000000000015' } });
    expect(completed.body).toMatchObject({ id: binding.id, status: 'COMPLETED', card: expect.stringMatching(/^card_/) });
    const declined = await service.call({ method: 'POST', url: '/subscribe/v1/charges', key: merchant.test, idempotencyKey: idem(), body: { amount: 100, card: completed.body.card } });
    expect(declined.body).toMatchObject({ status: 'FAILED', failureCode: 'INSUFFICIENT_FUNDS' });
    const again = await service.call({ method: 'POST', url: `/v1/test_helpers/card_bindings/${binding.id}/complete`, key: merchant.test, body: {} });
    expect(again.body).toMatchObject({ code: 'INVALID_STATE' });
    expect((await service.call({ method: 'POST', url: `/v1/test_helpers/card_bindings/${binding.id}/complete`, key: merchant.live, body: {} })).status).toBe(404);
  });
});
