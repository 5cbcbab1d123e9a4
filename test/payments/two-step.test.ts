import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard, submitCard, submitCode, TEST_CODE } from '../support/binding.js';
import { ADMIN_TOKEN, idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { balance, charge, eventsOf, injectedCrashes, reconcileNow } from '../support/payments.js';
import { queueDepths } from '../../src/modules/monitoring/queues.js';
import { receiptFor } from '../support/receipts.js';

const { hooks, crash, heal } = injectedCrashes();
let service: TestService;
beforeAll(async () => {
  service = await startService({ TOLOV_SETTLEMENT_DELAY_SECONDS: '0' }, { hooks });
});
afterAll(() => service.stop());

async function holding(amount: number, pan = '8600000000000007', extra: Record<string, unknown> = {}) {
  const shop = await service.createMerchant({ feeBps: 100 });
  const card = await bindCard(service, shop.test, pan);
  const reply = await charge(service, shop.test, { amount, card, capture: 'manual', ...extra });
  expect(reply.status).toBe(201);
  return { shop, card, intent: reply.body as { id: string; status: string; [field: string]: unknown } };
}

const capture = (shop: Merchant, id: string, body: Record<string, unknown> = {}, idempotencyKey = idem()) =>
  service.call({ method: 'POST', url: `/subscribe/v1/charges/${id}/capture`, key: shop.test, body, idempotencyKey });
const cancel = (shop: Merchant, id: string) => service.call({ method: 'POST', url: `/subscribe/v1/charges/${id}/cancel`, key: shop.test, idempotencyKey: idem() });
const read = async (shop: Merchant, id: string) => (await service.call({ method: 'GET', url: `/subscribe/v1/charges/${id}`, key: shop.test })).body;
/** What the test bank executed for a hold: the hold itself and each of its ends, by type. */
const bankOf = (holdId: string) =>
  service.db.query<{ type: string; amount: number; status: string }>(
    `SELECT type, amount, status FROM test_rail_operations WHERE (operation_id = $1 OR hold_operation_id = $1) AND status <> 'FENCED' ORDER BY created_at, type`,
    [holdId],
  );
const endsOf = (holdId: string) =>
  service.db.query<{ kind: string; status: string; reason: string }>('SELECT kind, status, reason FROM hold_ends WHERE payment_intent_id = $1 ORDER BY created_at', [holdId]);
const ageHold = (id: string, days: number) => service.db.query(`UPDATE payment_intents SET held_at = now() - $2 * interval '1 day' WHERE id = $1`, [id, days]);

describe('two-step payments: hold', () => {
  it('a manual charge holds the amount: REQUIRES_CAPTURE with amountCapturable, one event, nothing in the balance', async () => {
    const { shop, intent } = await holding(100_000);
    expect(intent).toMatchObject({ status: 'REQUIRES_CAPTURE', amount: 100_000, fee: 1_000, amountCapturable: 100_000, captureMethod: 'manual', receipt: null });
    expect(await bankOf(intent.id)).toEqual([{ type: 'hold', amount: 100_000, status: 'SUCCEEDED' }]);
    expect((await eventsOf(service, intent.id)).map((event) => [event.type, event.data.status])).toEqual([['payment_intent.requires_capture', 'requires_capture']]);
    expect(await balance(service, shop.test)).toMatchObject({ available: 0, pending: 0 });
    const listed = await service.call({ method: 'GET', url: '/subscribe/v1/charges?status=REQUIRES_CAPTURE', key: shop.test });
    expect(listed.body.data.map((row: { id: string }) => row.id)).toEqual([intent.id]);
  });

  it('an automatic charge says so, with nothing capturable', async () => {
    const shop = await service.createMerchant();
    const card = await bindCard(service, shop.test, '8600000000000007');
    const reply = await charge(service, shop.test, { amount: 5_000, card });
    expect(reply.body).toMatchObject({ status: 'SUCCEEDED', captureMethod: 'automatic', amountCapturable: 0 });
  });

  it('a hold the bank refuses fails as a debit does, with nothing to capture', async () => {
    const { shop, intent } = await holding(7_000, '8600000000000015');
    expect(intent).toMatchObject({ status: 'FAILED', failureCode: 'INSUFFICIENT_FUNDS', amountCapturable: 0 });
    expect((await capture(shop, intent.id)).body).toMatchObject({ code: 'INVALID_STATE' });
  });

  it('an unclear hold stays PROCESSING until reconciliation finds it held', async () => {
    const { shop, intent } = await holding(8_000, '8600000000000031');
    expect(intent.status).toBe('PROCESSING');
    await reconcileNow(service);
    expect(await read(shop, intent.id)).toMatchObject({ status: 'REQUIRES_CAPTURE', amountCapturable: 8_000 });
    expect((await capture(shop, intent.id)).body).toMatchObject({ status: 'SUCCEEDED', amount: 8_000 });
  });
});

describe('two-step payments: capture', () => {
  it('captures the whole hold: SUCCEEDED, its fee and pending balance, one capture at the bank', async () => {
    const { shop, intent } = await holding(100_000);
    const reply = await capture(shop, intent.id);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ id: intent.id, status: 'SUCCEEDED', amount: 100_000, fee: 1_000, amountCapturable: 0 });
    expect(await balance(service, shop.test)).toMatchObject({ available: 0, pending: 99_000 });
    expect(await bankOf(intent.id)).toEqual([
      { type: 'hold', amount: 100_000, status: 'SUCCEEDED' },
      { type: 'capture', amount: 100_000, status: 'SUCCEEDED' },
    ]);
    expect((await eventsOf(service, intent.id)).map((event) => event.type)).toEqual(['payment_intent.requires_capture', 'payment_intent.succeeded']);
    // Captured once: a second capture is refused and changes nothing.
    expect((await capture(shop, intent.id)).body).toMatchObject({ code: 'INVALID_STATE' });
    expect(await endsOf(intent.id)).toEqual([{ kind: 'capture', status: 'SUCCEEDED', reason: 'requested' }]);
  });

  it('captures part of it: the amount and fee captured, the rest released by the bank, refundable as any payment', async () => {
    const { shop, intent } = await holding(100_000);
    const reply = await capture(shop, intent.id, { amount: 60_000 });
    expect(reply.body).toMatchObject({ status: 'SUCCEEDED', amount: 60_000, fee: 600, amountCapturable: 0 });
    expect(await balance(service, shop.test)).toMatchObject({ pending: 59_400 });
    expect((await bankOf(intent.id)).map((row) => [row.type, row.amount])).toEqual([
      ['hold', 100_000],
      ['capture', 60_000],
    ]);
    await service.payments.settle(0, 100);
    const refund = await service.call({ method: 'POST', url: '/v1/refunds', key: shop.test, idempotencyKey: idem(), body: { paymentIntent: intent.id } });
    expect(refund.body).toMatchObject({ status: 'SUCCEEDED', amount: 60_000 });
  });

  it('never captures more than was held, and a bad amount changes nothing', async () => {
    const { shop, intent } = await holding(50_000);
    for (const amount of [50_001, 0, -1, 1.5]) {
      const reply = await capture(shop, intent.id, { amount });
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ code: 'VALIDATION_ERROR', param: 'amount' });
    }
    expect(await endsOf(intent.id)).toEqual([]);
    expect(await read(shop, intent.id)).toMatchObject({ status: 'REQUIRES_CAPTURE', amountCapturable: 50_000 });
  });

  it('keeps the payment fiscal lines for a whole capture, and asks for lines of a smaller one', async () => {
    const { shop, intent } = await holding(12_000, '8600000000000007', { receipt: receiptFor(12_000) });
    const partial = await capture(shop, intent.id, { amount: 10_000 });
    expect(partial.status).toBe(400);
    expect(partial.body).toMatchObject({ code: 'RECEIPT_MISMATCH', param: 'receipt' });
    const wrongLines = await capture(shop, intent.id, { amount: 10_000, receipt: receiptFor(9_000) });
    expect(wrongLines.body).toMatchObject({ code: 'RECEIPT_MISMATCH' });
    const captured = await capture(shop, intent.id, { amount: 10_000, receipt: receiptFor(10_000) });
    expect(captured.body).toMatchObject({ status: 'SUCCEEDED', amount: 10_000, receipt: expect.stringMatching(/^rcpt_/) });
    const receipt = await service.call({ method: 'GET', url: `/v1/receipts/${captured.body.receipt}`, key: shop.test });
    expect(receipt.body).toMatchObject({ type: 'sale', amount: 10_000, paymentIntent: intent.id });

    const whole = await holding(12_000, '8600000000000007', { receipt: receiptFor(12_000) });
    const kept = await capture(whole.shop, whole.intent.id);
    const sale = await service.call({ method: 'GET', url: `/v1/receipts/${kept.body.receipt}`, key: whole.shop.test });
    expect(sale.body).toMatchObject({ type: 'sale', amount: 12_000 });
  });

  it('answers 402 PAYMENT_FAILED when the bank refuses the capture: the hold kept stays capturable, one it let lapse is CANCELED', async () => {
    const kept = await holding(16_000);
    // The bank's own record says less was held than Tolov asked for: it refuses to capture more.
    await service.db.query(`UPDATE test_rail_operations SET amount = 10000 WHERE operation_id = $1`, [kept.intent.id]);
    const refused = await capture(kept.shop, kept.intent.id);
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'PAYMENT_FAILED', failureCode: 'AMOUNT_EXCEEDS_HOLD' });
    expect(await read(kept.shop, kept.intent.id)).toMatchObject({ status: 'REQUIRES_CAPTURE', amountCapturable: 16_000 });
    expect((await capture(kept.shop, kept.intent.id, { amount: 10_000 })).body).toMatchObject({ status: 'SUCCEEDED', amount: 10_000 });

    const lapsed = await holding(17_000);
    // The bank released the hold on its own (its own expiry).
    await service.db.query(
      `INSERT INTO test_rail_operations (operation_id, type, token, amount, status, hold_operation_id)
       SELECT 'bank-expiry-' || operation_id, 'release', token, amount, 'SUCCEEDED', operation_id FROM test_rail_operations WHERE operation_id = $1`,
      [lapsed.intent.id],
    );
    const gone = await capture(lapsed.shop, lapsed.intent.id);
    expect(gone.status).toBe(402);
    expect(gone.body).toMatchObject({ code: 'PAYMENT_FAILED', failureCode: 'HOLD_NOT_ACTIVE' });
    expect(await read(lapsed.shop, lapsed.intent.id)).toMatchObject({ status: 'CANCELED' });
    expect((await eventsOf(service, lapsed.intent.id)).map((event) => event.type)).toEqual(['payment_intent.requires_capture', 'payment_intent.hold_released']);
    expect(await balance(service, lapsed.shop.test)).toMatchObject({ pending: 0 });
  });

  it('refuses to capture what is not a hold: 404 for another product, 409 for a payment taken at once', async () => {
    const { intent } = await holding(5_000);
    const stranger = await service.createMerchant();
    expect((await capture(stranger, intent.id)).status).toBe(404);
    const shop = await service.createMerchant();
    const card = await bindCard(service, shop.test, '8600000000000007');
    const paid = await charge(service, shop.test, { amount: 5_000, card });
    const refused = await capture(shop, paid.body.id);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('REQUIRES_CAPTURE');
    expect((await cancel(shop, paid.body.id)).status).toBe(409);
  });
});

describe('two-step payments: release', () => {
  it('cancel releases the whole hold: CANCELED, hold_released, nothing in the balance, no capture after', async () => {
    const { shop, intent } = await holding(30_000);
    const reply = await cancel(shop, intent.id);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ status: 'CANCELED', amount: 30_000, amountCapturable: 0 });
    expect((await bankOf(intent.id)).map((row) => [row.type, row.amount])).toEqual([
      ['hold', 30_000],
      ['release', 30_000],
    ]);
    expect((await eventsOf(service, intent.id)).map((event) => event.type)).toEqual(['payment_intent.requires_capture', 'payment_intent.hold_released']);
    expect(await balance(service, shop.test)).toMatchObject({ available: 0, pending: 0 });
    expect((await capture(shop, intent.id)).status).toBe(409);
    // The legacy cancel is for intents awaiting confirmation alone.
    const legacy = await service.call({ method: 'POST', url: `/v1/payment_intents/${intent.id}/cancel`, key: shop.test });
    expect(legacy.status).toBe(409);
  });

  it("test mode's helper releases a hold now, as its time passing would; a live key finds no such helper", async () => {
    const { shop, intent } = await holding(6_000);
    const helper = (key: string) => service.call({ method: 'POST', url: `/v1/test_helpers/charges/${intent.id}/expire_hold`, key });
    expect((await helper(shop.live)).status).toBe(404);
    const released = await helper(shop.test);
    expect(released.body).toMatchObject({ id: intent.id, status: 'CANCELED' });
    expect(await endsOf(intent.id)).toEqual([{ kind: 'release', status: 'SUCCEEDED', reason: 'expired' }]);
    expect((await helper(shop.test)).body).toMatchObject({ code: 'INVALID_STATE' });
  });

  it('the worker asks again an hour after the bank refused a release, without holding up the other holds', async () => {
    const refused = await holding(21_000);
    const next = await holding(22_000);
    await ageHold(refused.intent.id, 9);
    await ageHold(next.intent.id, 8);
    // The bank's record holds less than Tolov asks it to release: it refuses, and keeps the hold.
    await service.db.query(`UPDATE test_rail_operations SET amount = 1000 WHERE operation_id = $1`, [refused.intent.id]);
    await service.holds.releaseExpired(50);
    expect(await read(refused.shop, refused.intent.id)).toMatchObject({ status: 'REQUIRES_CAPTURE' });
    expect(await read(next.shop, next.intent.id)).toMatchObject({ status: 'CANCELED' });
    expect(await endsOf(refused.intent.id)).toEqual([{ kind: 'release', status: 'FAILED', reason: 'expired' }]);
    await service.holds.releaseExpired(50);
    expect(await endsOf(refused.intent.id)).toHaveLength(1);
    await service.db.query(`UPDATE hold_ends SET created_at = now() - interval '61 minutes' WHERE payment_intent_id = $1`, [refused.intent.id]);
    await service.db.query(`UPDATE test_rail_operations SET amount = 21000 WHERE operation_id = $1`, [refused.intent.id]);
    await service.holds.releaseExpired(50);
    expect(await read(refused.shop, refused.intent.id)).toMatchObject({ status: 'CANCELED' });
    expect((await endsOf(refused.intent.id)).map((end) => end.status)).toEqual(['FAILED', 'SUCCEEDED']);
  });

  it('a hold on an order made with a key that cannot capture is refused: capture "manual" needs the subscribe scope', async () => {
    const shop = await service.createMerchant({ scopes: ['sale_of_goods'] });
    const reply = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: idem(), body: { amount: 5_000, capture: 'manual' } });
    expect(reply.status).toBe(403);
    expect(reply.body).toMatchObject({ code: 'SCOPE_REQUIRED', param: 'capture' });
  });

  it('the worker releases holds older than TOLOV_HOLD_DAYS (7), and only those', async () => {
    const old = await holding(20_000);
    const young = await holding(20_000);
    await ageHold(old.intent.id, 7.01);
    await ageHold(young.intent.id, 6.9);
    expect(await service.holds.releaseExpired(50)).toBeGreaterThanOrEqual(1);
    expect(await read(old.shop, old.intent.id)).toMatchObject({ status: 'CANCELED' });
    expect(await endsOf(old.intent.id)).toEqual([{ kind: 'release', status: 'SUCCEEDED', reason: 'expired' }]);
    expect(await read(young.shop, young.intent.id)).toMatchObject({ status: 'REQUIRES_CAPTURE' });
  });
});

describe('two-step payments: orders paid on the hosted page', () => {
  async function heldOrder(shop: Merchant, amount: number, extra: Record<string, unknown> = {}) {
    const created = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: idem(), body: { amount, capture: 'manual', ...extra } });
    expect(created.body).toMatchObject({ status: 'PENDING', captureMethod: 'manual' });
    const token = created.body.paymentUrl.split('/pay/')[1] as string;
    expect((await submitCard(service, token, { pan: '8600000000000007' })).status).toBe(200);
    expect((await submitCode(service, token, TEST_CODE)).body.status).toBe('COMPLETED');
    return (await service.call({ method: 'GET', url: `/merchant/v1/orders/${created.body.id}`, key: shop.test })).body;
  }

  it('is PAID once the bank holds the money; its payment REQUIRES_CAPTURE, captured later with its sale receipt', async () => {
    const shop = await service.createMerchant({ feeBps: 0 });
    const order = await heldOrder(shop, 20_000, { receipt: receiptFor(20_000) });
    expect(order).toMatchObject({ status: 'PAID', receipt: null, paymentIntent: expect.stringMatching(/^pi_/) });
    expect(await read(shop, order.paymentIntent)).toMatchObject({ status: 'REQUIRES_CAPTURE', order: order.id, amountCapturable: 20_000 });
    expect((await eventsOf(service, order.id)).map((event) => event.type)).toEqual(['order.paid']);
    expect(await balance(service, shop.test)).toMatchObject({ pending: 0 });
    const captured = await capture(shop, order.paymentIntent);
    expect(captured.body).toMatchObject({ status: 'SUCCEEDED', receipt: expect.stringMatching(/^rcpt_/) });
    expect((await service.call({ method: 'GET', url: `/merchant/v1/orders/${order.id}`, key: shop.test })).body).toMatchObject({ status: 'PAID', receipt: captured.body.receipt });
    expect(await balance(service, shop.test)).toMatchObject({ pending: 20_000 });
  });

  it('a released hold leaves the order as paid by the buyer, its payment CANCELED and nothing in the balance', async () => {
    const shop = await service.createMerchant();
    const order = await heldOrder(shop, 15_000);
    expect((await cancel(shop, order.paymentIntent)).body).toMatchObject({ status: 'CANCELED', order: order.id });
    expect((await service.call({ method: 'GET', url: `/merchant/v1/orders/${order.id}`, key: shop.test })).body).toMatchObject({ status: 'PAID' });
    expect(await balance(service, shop.test)).toMatchObject({ pending: 0, available: 0 });
  });
});

describe('two-step payments: races and crashes', () => {
  it('capture, cancel and the expiry worker race for one hold: exactly one wins, and the bank agrees', async () => {
    for (let round = 0; round < 8; round++) {
      const { shop, intent } = await holding(40_000);
      await ageHold(intent.id, 8);
      const [captured, canceled] = await Promise.all([capture(shop, intent.id, { amount: 25_000 }), cancel(shop, intent.id), service.holds.releaseExpired(50)]);
      const final = await read(shop, intent.id);
      const ends = (await endsOf(intent.id)).filter((end) => end.status !== 'FAILED');
      expect(ends).toHaveLength(1);
      const bankEnds = (await bankOf(intent.id)).filter((row) => row.type !== 'hold' && row.status === 'SUCCEEDED');
      expect(bankEnds).toHaveLength(1);
      if (ends[0]!.kind === 'capture') {
        expect(final).toMatchObject({ status: 'SUCCEEDED', amount: 25_000 });
        expect(bankEnds[0]).toMatchObject({ type: 'capture', amount: 25_000 });
        expect(captured.status).toBe(200);
        expect(canceled.status).toBe(409);
      } else {
        expect(final).toMatchObject({ status: 'CANCELED' });
        expect(bankEnds[0]).toMatchObject({ type: 'release', amount: 40_000 });
        expect(captured.status).toBe(409);
      }
    }
  });

  it('a crash after recording the capture, before the call: the retry answers PROCESSING, reconciliation fences it and the hold can be captured again', async () => {
    const { shop, intent } = await holding(9_000);
    const processing = async () => (await queueDepths(service.db)).payments_processing;
    const before = await processing();
    const key = idem();
    crash('afterCommit', 'end');
    expect((await capture(shop, intent.id, {}, key)).status).toBe(500);
    heal();
    expect((await capture(shop, intent.id, {}, key)).body).toMatchObject({ status: 'PROCESSING', amountCapturable: 0 });
    // The monitoring gauge of payments awaiting the bank counts the capture in flight.
    expect(await processing()).toBe(before + 1);
    expect((await cancel(shop, intent.id)).status).toBe(409);
    // Over an hour at the bank, the capture (not the payment held days before it) is what the operator's checks list.
    const [end] = await service.db.query<{ id: string }>('SELECT id FROM hold_ends WHERE payment_intent_id = $1', [intent.id]);
    await service.db.query(`UPDATE hold_ends SET created_at = now() - interval '2 hours' WHERE id = $1`, [end!.id]);
    await service.db.query(`UPDATE payment_intents SET debit_started_at = now() - interval '3 days' WHERE id = $1`, [intent.id]);
    const checks = await service.admin('GET', '/admin/v1/checks');
    const open = checks.body.data.find((check: { name: string }) => check.name === 'operations_open');
    expect(open.problems.map((problem: { objectId: string }) => problem.objectId)).toEqual([end!.id]);
    await reconcileNow(service);
    expect(await read(shop, intent.id)).toMatchObject({ status: 'REQUIRES_CAPTURE', amountCapturable: 9_000 });
    expect((await endsOf(intent.id))[0]).toMatchObject({ kind: 'capture', status: 'FAILED' });
    expect(await processing()).toBeLessThanOrEqual(before);
    expect((await capture(shop, intent.id)).body).toMatchObject({ status: 'SUCCEEDED', amount: 9_000 });
    expect((await bankOf(intent.id)).filter((row) => row.type === 'capture')).toHaveLength(1);
  });

  it('a crash after the bank captured, before the outcome was recorded: never a second capture; reconciliation records it once', async () => {
    const { shop, intent } = await holding(11_000);
    crash('afterCall', 'end');
    expect((await capture(shop, intent.id)).status).toBe(500);
    heal();
    expect(await read(shop, intent.id)).toMatchObject({ status: 'PROCESSING' });
    await reconcileNow(service);
    await reconcileNow(service);
    expect(await read(shop, intent.id)).toMatchObject({ status: 'SUCCEEDED', amount: 11_000 });
    expect((await bankOf(intent.id)).filter((row) => row.type === 'capture')).toHaveLength(1);
    expect((await eventsOf(service, intent.id)).map((event) => event.type)).toEqual(['payment_intent.requires_capture', 'payment_intent.succeeded']);
    expect(await balance(service, shop.test)).toMatchObject({ pending: 11_000 - 110 });
  });

  it("the day's reconciliation report matches holds, captures and releases with the bank's", async () => {
    const captured = await holding(13_000);
    await capture(captured.shop, captured.intent.id, { amount: 12_000 });
    const released = await holding(14_000);
    await cancel(released.shop, released.intent.id);
    const today = new Date().toISOString().slice(0, 10);
    const report = await service.call({ method: 'GET', url: `/admin/v1/reconciliation?date=${today}&mode=test`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(report.status).toBe(200);
    expect(report.body.mismatches.filter((m: { operationId: string }) => m.operationId.startsWith('cap_') || m.operationId.startsWith('rel_') || m.operationId === captured.intent.id)).toEqual([]);
    // A capture the bank has no record of is reported as missing at the bank.
    await service.db.query(`DELETE FROM test_rail_operations WHERE hold_operation_id = $1`, [captured.intent.id]);
    const broken = await service.call({ method: 'GET', url: `/admin/v1/reconciliation?date=${today}&mode=test`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(broken.body.mismatches).toContainEqual(expect.objectContaining({ type: 'capture', problem: 'missing_at_bank', tolov: { status: 'SUCCEEDED', amount: 12_000 } }));
  });
});
