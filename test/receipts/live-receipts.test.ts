// Live receipts end to end: the bank simulator is also the fiscal gateway (TOLOV_LIVE_FISCAL_URL), and its own list of
// registrations (GET /sim/v1/receipts) is the ground truth every receipt is checked against.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIM_PHONE } from '../../bank-sim/bank.js';
import { REFUSED_TEST_CODE } from '../../src/rails/test-fiscal.js';
import { idem } from '../support/harness.js';
import { bindLiveCard, fiscalizeNow, lastCode, simReceipts, startLive, type Live } from '../support/live.js';
import { receiptFor } from '../support/receipts.js';
import { eventsOf } from '../support/payments.js';

/** One line of `amount` with the item code the fiscal module refuses. */
const refusedLines = (amount: number) => ({ items: receiptFor(amount).items.map((item) => ({ ...item, code: REFUSED_TEST_CODE })) });

let live: Live;
let card: string;
beforeAll(async () => {
  live = await startLive({}, { receiptRequired: true });
  card = await bindLiveCard(live, '8600000000000007');
});
afterAll(() => live.stop());

const post = (url: string, body: Record<string, unknown>) => live.service.call({ method: 'POST', url, key: live.merchant.live, idempotencyKey: idem(), body });
const get = (url: string) => live.service.call({ method: 'GET', url, key: live.merchant.live });
const registrationsOf = async (id: string) => (await simReceipts(live.sim)).filter((receipt) => receipt.id === id);
const today = () => new Date().toISOString().slice(0, 10);

/** The receipt once the worker had its batch: FISCALIZED as the simulator registered it, exactly once. */
async function expectRegisteredOnce(id: string, type: 'sale' | 'return', amount: number) {
  const receipt = (await get(`/v1/receipts/${id}`)).body;
  expect(receipt).toMatchObject({ id, type, amount, status: 'FISCALIZED', livemode: true, failureCode: null });
  expect(receipt.terminalId).toMatch(/^UZ\d+$/);
  expect(await registrationsOf(id)).toEqual([
    { id, type, amount, terminalId: receipt.terminalId, receiptNumber: receipt.receiptNumber, fiscalSign: receipt.fiscalSign, registeredAt: receipt.fiscalizedAt },
  ]);
  return receipt;
}

describe('live receipts at the fiscal gateway', () => {
  it('fiscalizes a live charge with lines, and the return receipt of its refund, each registered once', async () => {
    const paid = await post('/subscribe/v1/charges', { amount: 250_000, card, receipt: receiptFor(250_000) });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.body).toMatchObject({ status: 'SUCCEEDED', livemode: true, receipt: expect.stringMatching(/^rcpt_/) });
    expect((await get(`/v1/receipts/${paid.body.receipt}`)).body.status).toBe('PENDING');
    expect(await registrationsOf(paid.body.receipt)).toEqual([]);

    expect(await fiscalizeNow(live.service)).toBe(1);
    const sale = await expectRegisteredOnce(paid.body.receipt, 'sale', 250_000);
    expect(sale.qrUrl).toContain(`t=${sale.terminalId}&r=${sale.receiptNumber}`);
    const events = await eventsOf(live.service, sale.id);
    expect(events.map((event) => event.type)).toEqual(['receipt.fiscalized']);
    expect(events[0]!.data).toEqual(sale);

    const refund = await post('/v1/refunds', { paymentIntent: paid.body.id });
    expect(refund.body).toMatchObject({ status: 'SUCCEEDED', receipt: expect.stringMatching(/^rcpt_/) });
    expect(await fiscalizeNow(live.service)).toBe(1);
    await expectRegisteredOnce(refund.body.receipt, 'return', 250_000);
    // Nothing is left to register, and nothing is registered again.
    const registered = (await simReceipts(live.sim)).length;
    expect(await fiscalizeNow(live.service)).toBe(0);
    expect((await simReceipts(live.sim)).length).toBe(registered);
  });

  it('fiscalizes a live order with lines paid on its hosted page', async () => {
    const order = await post('/merchant/v1/orders', { amount: 70_000, receipt: receiptFor(70_000) });
    expect(order.status, order.text).toBe(201);
    const token = order.body.paymentUrl.split('/pay/')[1];
    await live.service.call({ method: 'POST', url: `/checkout/v1/sessions/${token}/card`, body: { pan: '8600000000000007', expiry: '12/30', phone: SIM_PHONE } });
    const paid = await live.service.call({ method: 'POST', url: `/checkout/v1/sessions/${token}/code`, body: { code: await lastCode(live.sim) } });
    expect(paid.body.status).toBe('COMPLETED');
    const read = (await get(`/merchant/v1/orders/${order.body.id}`)).body;
    expect(read).toMatchObject({ status: 'PAID', receipt: expect.stringMatching(/^rcpt_/) });
    await fiscalizeNow(live.service);
    await expectRegisteredOnce(read.receipt, 'sale', 70_000);
  });

  it('takes the refusal of a line code as final at once: FAILED INVALID_CODE, nothing registered, the payment untouched', async () => {
    const paid = (await post('/subscribe/v1/charges', { amount: 10_000, card, receipt: refusedLines(10_000) })).body;
    expect(paid.status).toBe('SUCCEEDED');
    await fiscalizeNow(live.service);
    const receipt = (await get(`/v1/receipts/${paid.receipt}`)).body;
    expect(receipt).toMatchObject({ status: 'FAILED', failureCode: 'INVALID_CODE', terminalId: null, fiscalSign: null, qrUrl: null });
    expect((await eventsOf(live.service, receipt.id)).map((event) => event.type)).toEqual(['receipt.failed']);
    expect(await registrationsOf(receipt.id)).toEqual([]);
    expect((await get(`/subscribe/v1/charges/${paid.id}`)).body.status).toBe('SUCCEEDED');
    // A single attempt decided it.
    const [row] = await live.service.db.query<{ attempts: number }>('SELECT attempts FROM receipts WHERE id = $1', [receipt.id]);
    expect(row!.attempts).toBe(1);
  });
});

describe('live receipts required', () => {
  it('refuses live orders and charges without lines (RECEIPT_REQUIRED) until the operator says the merchant fiscalizes itself', async () => {
    const refusedCharge = await post('/subscribe/v1/charges', { amount: 5_000, card });
    const refusedOrder = await post('/merchant/v1/orders', { amount: 5_000 });
    for (const refused of [refusedCharge, refusedOrder]) {
      expect({ status: refused.status, code: refused.body.code, param: refused.body.param }).toEqual({ status: 400, code: 'RECEIPT_REQUIRED', param: 'receipt' });
    }
    const [{ intents }] = (await live.service.db.query<{ intents: number }>(
      'SELECT count(*)::int AS intents FROM payment_intents WHERE product_id = $1 AND amount = 5000',
      [live.merchant.productId],
    )) as [{ intents: number }];
    expect(intents).toBe(0);

    const off = await live.service.admin('POST', `/admin/v1/products/${live.merchant.productId}`, { receiptRequired: false });
    expect(off.body).toMatchObject({ id: live.merchant.productId, receiptRequired: false });
    const charged = await post('/subscribe/v1/charges', { amount: 5_000, card });
    expect(charged.body).toMatchObject({ status: 'SUCCEEDED', receipt: null });
    expect((await post('/merchant/v1/orders', { amount: 5_000 })).status).toBe(201);

    const on = await live.service.admin('POST', `/admin/v1/products/${live.merchant.productId}`, { receiptRequired: true });
    expect(on.body.receiptRequired).toBe(true);
    expect((await post('/subscribe/v1/charges', { amount: 5_000, card })).body.code).toBe('RECEIPT_REQUIRED');
  });
});

describe('the reconciliation report compares receipts', () => {
  it('still compares the money when the fiscal module does not answer, and says why its receipts are not compared', async () => {
    // The bank answers; the fiscal gateway is an address where nothing listens.
    const apart = await startLive({ TOLOV_LIVE_FISCAL_URL: 'http://127.0.0.1:9', TOLOV_LIVE_RAIL_TIMEOUT_MS: '300' });
    try {
      const reply = await apart.service.admin('GET', `/admin/v1/reconciliation?date=${today()}&mode=live`);
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body).toMatchObject({ mismatches: [], receipts: { compared: { tolov: 0, fiscal: 0 }, mismatches: [], error: expect.stringMatching(/fiscal gateway/) } });
    } finally {
      await apart.stop();
    }
  });

  const report = async (mode = 'live') => {
    const reply = await live.service.admin('GET', `/admin/v1/reconciliation?date=${today()}&mode=${mode}`);
    expect(reply.status, reply.text).toBe(200);
    return reply.body;
  };

  it("matches Tolov's FISCALIZED receipts with the module's registrations, and names every mismatch of a corrupted side", async () => {
    const fiscalized = await live.service.db.query<{ id: string; type: 'sale' | 'return'; amount: number }>(
      `SELECT id, type, amount FROM receipts WHERE livemode AND status = 'FISCALIZED' ORDER BY seq`,
    );
    expect(fiscalized).toHaveLength(3);
    const clean = await report();
    expect(clean.mismatches).toEqual([]);
    expect(clean.receipts).toEqual({ compared: { tolov: 3, fiscal: 3 }, truncated: false, mismatches: [], error: null });
    expect((await report('test')).receipts).toEqual({ compared: { tolov: 0, fiscal: 0 }, truncated: false, mismatches: [], error: null });

    const [lost, skewed, returned] = [fiscalized.find((r) => r.amount === 70_000)!, fiscalized.find((r) => r.type === 'sale')!, fiscalized.find((r) => r.type === 'return')!];
    // The module "forgets" one receipt and records another with another amount; Tolov's books change one; and the
    // module has one that Tolov never asked for.
    await live.sim.db.query('DELETE FROM sim_receipts WHERE receipt_id = $1', [lost.id]);
    await live.sim.db.query('UPDATE sim_receipts SET amount = amount + 1 WHERE receipt_id = $1', [skewed.id]);
    await live.service.db.query('UPDATE receipts SET amount = amount - 1 WHERE id = $1', [returned.id]);
    await live.sim.db.query(
      `INSERT INTO sim_receipts (receipt_id, type, amount, status, terminal_id, receipt_number, fiscal_sign)
       VALUES ('rcpt_stranger', 'sale', 900, 'REGISTERED', 'UZ191211501001', nextval('sim_receipt_numbers'), '000000000000')`,
    );
    const corrupted = await report();
    expect(corrupted.mismatches).toEqual([]);
    expect(corrupted.receipts.compared).toEqual({ tolov: 3, fiscal: 3 });
    expect(corrupted.receipts.mismatches).toEqual(
      expect.arrayContaining([
        { receiptId: lost.id, problem: 'missing_at_fiscal', tolov: { type: 'sale', amount: 70_000 }, fiscal: null },
        { receiptId: skewed.id, problem: 'amount_differs', tolov: { type: 'sale', amount: 250_000 }, fiscal: { type: 'sale', amount: 250_001 } },
        { receiptId: returned.id, problem: 'amount_differs', tolov: { type: 'return', amount: 249_999 }, fiscal: { type: 'return', amount: 250_000 } },
        { receiptId: 'rcpt_stranger', problem: 'missing_at_tolov', tolov: null, fiscal: { type: 'sale', amount: 900 } },
      ]),
    );
    expect(corrupted.receipts.mismatches).toHaveLength(4);
  });
});
