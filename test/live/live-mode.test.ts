import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem } from '../support/harness.js';
import { bindLiveCard, lastCode, liveCharge, startLive, type Live } from '../support/live.js';
import { balance, reconcileNow } from '../support/payments.js';

let live: Live;
beforeAll(async () => {
  live = await startLive();
});
afterAll(() => live.stop());

const simOperation = async (operationId: string) =>
  (await live.sim.db.query<{ status: string; amount: number; type: string }>('SELECT status, amount, type FROM sim_operations WHERE operation_id = $1', [operationId]))[0];

describe('live mode against the bank simulator', () => {
  it('binds a card with the SMS code the bank sent, and refuses a wrong one', async () => {
    const { service, merchant, sim } = live;
    const binding = (await service.call({ method: 'POST', url: '/subscribe/v1/card_bindings', key: merchant.live, body: {} })).body;
    expect(binding.livemode).toBe(true);
    await service.call({ method: 'POST', url: `/checkout/v1/sessions/${binding.clientToken}/card`, body: { pan: '9860000000000000', expiry: '12/30', phone: '998901234567' } });
    const code = await lastCode(sim);
    expect(code).toMatch(/^\d{6}$/);
    const wrong = code === '000000' ? '000001' : '000000';
    expect((await service.call({ method: 'POST', url: `/checkout/v1/sessions/${binding.clientToken}/code`, body: { code: wrong } })).body.code).toBe('WRONG_CODE');
    expect((await service.call({ method: 'POST', url: `/checkout/v1/sessions/${binding.clientToken}/code`, body: { code } })).body.status).toBe('COMPLETED');
    const card = (await service.call({ method: 'GET', url: `/subscribe/v1/card_bindings/${binding.id}`, key: merchant.live })).body.card;
    expect((await service.call({ method: 'GET', url: `/subscribe/v1/cards/${card}`, key: merchant.live })).body).toMatchObject({ rail: 'humo', livemode: true });
  });

  it('refuses an inactive card, and a phone the bank does not know for the card', async () => {
    const { service, merchant } = live;
    const binding = (await service.call({ method: 'POST', url: '/subscribe/v1/card_bindings', key: merchant.live, body: {} })).body;
    const inactive = await service.call({ method: 'POST', url: `/checkout/v1/sessions/${binding.clientToken}/card`, body: { pan: '8600000000000023', expiry: '12/30', phone: '998901234567' } });
    expect(inactive.body.code).toBe('CARD_INACTIVE');
    const otherPhone = await service.call({ method: 'POST', url: `/checkout/v1/sessions/${binding.clientToken}/card`, body: { pan: '8600000000000007', expiry: '12/30', phone: '998909999999' } });
    expect(otherPhone.body.code).toBe('CARD_INACTIVE');
  });

  it('charges, refunds, and moves the bank balance exactly once', async () => {
    const card = await bindLiveCard(live, '8600000000000007');
    const charged = await liveCharge(live, card, 250_000);
    expect(charged.body).toMatchObject({ status: 'SUCCEEDED', livemode: true, fee: 2_500 });
    expect(await simOperation(charged.body.id)).toEqual({ status: 'SUCCEEDED', amount: 250_000, type: 'debit' });
    const refund = await live.service.call({ method: 'POST', idempotencyKey: idem(), url: '/v1/refunds', key: live.merchant.live, body: { paymentIntent: charged.body.id } });
    expect(refund.body.status).toBe('SUCCEEDED');
    expect(await simOperation(refund.body.id)).toEqual({ status: 'SUCCEEDED', amount: 250_000, type: 'refund' });
  });

  it('has every test card behave as in test mode, ambiguous answers reconciled from the bank', async () => {
    const outcomes: Record<string, string> = {};
    for (const pan of ['8600000000000015', '8600000000000031', '8600000000000049', '8600000000000056']) {
      const card = await bindLiveCard(live, pan);
      outcomes[pan] = (await liveCharge(live, card, 1_000)).body.status;
    }
    expect(outcomes).toEqual({
      '8600000000000015': 'FAILED',
      '8600000000000031': 'PROCESSING',
      '8600000000000049': 'PROCESSING',
      '8600000000000056': 'FAILED',
    });
    await reconcileNow(live.service);
    const statuses = await live.service.db.query<{ status: string; failure_code: string | null }>(
      `SELECT status, failure_code FROM payment_intents WHERE livemode AND product_id = $1 AND amount = 1000 ORDER BY seq`,
      [live.merchant.productId],
    );
    expect(statuses).toEqual([
      { status: 'FAILED', failure_code: 'INSUFFICIENT_FUNDS' },
      { status: 'SUCCEEDED', failure_code: null },
      { status: 'FAILED', failure_code: 'PROCESSING_ERROR' },
      { status: 'FAILED', failure_code: 'CARD_BLOCKED' },
    ]);
  });

  it('pays a live order on the hosted page flow', async () => {
    const { service, merchant, sim } = live;
    const order = (
      await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.live, idempotencyKey: idem(), body: { amount: 70_000, customerRef: 'live-buyer' } })
    ).body;
    const token = order.paymentUrl.split('/pay/')[1];
    await service.call({ method: 'POST', url: `/checkout/v1/sessions/${token}/card`, body: { pan: '8600000000000007', expiry: '12/30', phone: '998901234567', saveCard: true } });
    const paid = await service.call({ method: 'POST', url: `/checkout/v1/sessions/${token}/code`, body: { code: await lastCode(sim) } });
    expect(paid.body.status).toBe('COMPLETED');
    const read = (await service.call({ method: 'GET', url: `/merchant/v1/orders/${order.id}`, key: merchant.live })).body;
    expect(read).toMatchObject({ status: 'PAID', livemode: true, saveCard: true });
    expect(await simOperation(read.paymentIntent)).toMatchObject({ status: 'SUCCEEDED', amount: 70_000 });
    expect((await balance(service, merchant.live)).pending).toBeGreaterThan(0);
  });
});
