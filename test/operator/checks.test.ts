// The money checks (GET /admin/v1/checks): all ok while the books are right; each lists what breaks its rule, found
// here by breaking the books on purpose the way a bug or a lost answer would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { chargeCard } from '../support/payments.js';
import { makeAvailable, setPayoutAccount } from '../support/payouts.js';

let service: TestService;
let shop: Merchant;
beforeAll(async () => {
  service = await startService({ TOLOV_PAYOUT_MIN: '1000000', TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
  shop = await service.createMerchant();
});
afterAll(() => service.stop());

interface Check {
  name: string;
  ok: boolean;
  problems: Array<{ message: string; objectId: string | null; productId: string | null; livemode: boolean | null }>;
  truncated: boolean;
}

async function checks(): Promise<Map<string, Check>> {
  const reply = await service.admin('GET', '/admin/v1/checks');
  expect(reply.status).toBe(200);
  expect(reply.body.object).toBe('list');
  return new Map((reply.body.data as Check[]).map((check) => [check.name, check]));
}

const failing = async () => [...(await checks()).values()].filter((check) => !check.ok).map((check) => check.name);

describe('the money checks', () => {
  it('are all ok after payments, a refund and payouts, and need the operator token', async () => {
    const intent = await makeAvailable(service, shop.test, 3_000_000);
    await makeAvailable(service, shop.test, 2_000_000);
    await setPayoutAccount(service, shop.productId);
    expect((await service.call({ method: 'POST', url: '/v1/refunds', key: shop.test, idempotencyKey: idem(), body: { paymentIntent: intent.id } })).status).toBe(201);
    expect((await service.call({ method: 'POST', url: '/v1/test_helpers/payouts/run', key: shop.test })).body.status).toBe('PAID');
    const all = await checks();
    expect([...all.keys()]).toEqual([
      'ledger_total_zero',
      'ledger_transactions_balanced',
      'balances',
      'bank_reconciliation',
      'operations_open',
      'receipts_unsettled',
      'payouts_failed',
      'webhook_endpoints_failing',
    ]);
    for (const check of all.values()) expect(check).toMatchObject({ ok: true, problems: [], truncated: false });
    expect((await service.call({ method: 'GET', url: '/admin/v1/checks' })).status).toBe(401);
    expect((await service.call({ method: 'GET', url: '/admin/v1/checks', key: shop.test })).status).toBe(401);
  });

  it('list a FAILED payout, and a payment PROCESSING for over an hour', async () => {
    const other = await service.createMerchant();
    await setPayoutAccount(service, other.productId, { last4: '0002' });
    await makeAvailable(service, other.test, 2_000_000);
    const payout = (await service.call({ method: 'POST', url: '/v1/test_helpers/payouts/run', key: other.test })).body;
    expect(payout.status).toBe('FAILED');
    const processing = await chargeCard(service, other.test, '8600000000000031', 100_000);
    expect(processing.status).toBe('PROCESSING');
    // The bank executed the debit that Tolov still counts PROCESSING: reconciliation settles it, so no alarm yet.
    expect(await failing()).toEqual(['payouts_failed']);
    // Sent two hours ago, and executed by the bank then (the two sides' dates stay within the reports' margin at any
    // time of day, across midnight too).
    await service.db.query(`UPDATE payment_intents SET debit_started_at = now() - interval '2 hours' WHERE id = $1`, [processing.id]);
    await service.db.query(`UPDATE test_rail_operations SET created_at = now() - interval '2 hours' WHERE operation_id = $1`, [processing.id]);
    const all = await checks();
    expect(all.get('payouts_failed')!.problems).toEqual([{ objectId: payout.id, productId: other.productId, livemode: false, message: expect.stringContaining('FAILED') }]);
    expect(all.get('operations_open')!.problems).toEqual([
      { objectId: processing.id, productId: other.productId, livemode: false, message: expect.stringContaining('PROCESSING') },
    ]);
    await service.db.query(`UPDATE payouts SET created_at = now() - interval '31 days', sent_at = now() - interval '31 days' WHERE id = $1`, [payout.id]);
    expect(await failing()).toEqual(['operations_open']);
  });

  it('list a debit the bank never executed', async () => {
    const lost = await chargeCard(service, shop.test, '8600000000000007', 100_000);
    await service.db.query('DELETE FROM test_rail_operations WHERE operation_id = $1', [lost.id]);
    const problems = (await checks()).get('bank_reconciliation')!.problems.filter((problem) => problem.objectId === lost.id);
    expect(problems).toEqual([{ objectId: lost.id, productId: null, livemode: false, message: expect.stringMatching(new RegExp(`debit ${lost.id} is missing_at_bank$`)) }]);
  });

  it('list an unbalanced ledger transaction, and the balances it throws off', async () => {
    const [entry] = await service.db.query<{ transaction_id: string }>(
      `SELECT transaction_id FROM ledger_entries WHERE product_id = $1 AND account = 'merchant_available' LIMIT 1`,
      [shop.productId],
    );
    // What a bug past the balancing trigger would leave: an entry with no counterpart.
    await service.db.transaction(async (tx) => {
      await tx.query('ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_balanced');
      await tx.query(`INSERT INTO ledger_entries (transaction_id, product_id, livemode, account, amount) VALUES ($1, $2, false, 'merchant_available', 500)`, [
        entry!.transaction_id,
        shop.productId,
      ]);
      await tx.query(`UPDATE ledger_balances SET amount = amount + 500 WHERE product_id = $1 AND NOT livemode AND account = 'merchant_available' AND shard = (
        SELECT min(shard) FROM ledger_balances WHERE product_id = $1 AND NOT livemode AND account = 'merchant_available')`, [shop.productId]);
      await tx.query('ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_balanced');
    });
    const all = await checks();
    expect(all.get('ledger_total_zero')!.problems).toEqual([{ objectId: null, productId: null, livemode: false, message: 'The test ledger sums to 500 tiyin, not 0' }]);
    expect(all.get('ledger_transactions_balanced')!.problems).toEqual([
      { objectId: entry!.transaction_id, productId: shop.productId, livemode: false, message: `Ledger transaction ${entry!.transaction_id} is unbalanced by 500 tiyin` },
    ]);
    const balances = all.get('balances')!.problems;
    expect(balances).toHaveLength(2);
    expect(balances.every((problem) => problem.productId === shop.productId)).toBe(true);
  });

  it('list an enabled endpoint that failed every delivery for a day, not one that recovered', async () => {
    const created = await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: shop.test, body: { url: 'http://127.0.0.1:9/hook' } });
    expect(created.status).toBe(201);
    await chargeCard(service, shop.test, '8600000000000007', 100_000);
    const [delivery] = await service.db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 LIMIT 1', [created.body.id]);
    const attempt = (number: number, hoursAgo: number, statusCode: number) =>
      service.db.query(`INSERT INTO webhook_attempts (delivery_id, number, attempted_at, status_code, duration_ms) VALUES ($1, $2, now() - $3 * interval '1 hour', $4, 5)`, [
        delivery!.id,
        number,
        hoursAgo,
        statusCode,
      ]);
    await attempt(101, 30, 500);
    await attempt(102, 2, 500);
    const problems = (await checks()).get('webhook_endpoints_failing')!.problems;
    expect(problems).toEqual([{ objectId: created.body.id, productId: shop.productId, livemode: false, message: expect.stringContaining('http://127.0.0.1:9/hook has failed every delivery since') }]);
    await attempt(103, 1, 200);
    expect((await checks()).get('webhook_endpoints_failing')!.ok).toBe(true);
  });
});
