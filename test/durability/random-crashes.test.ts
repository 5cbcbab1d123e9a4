import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PhaseHooks } from '../../src/core/idempotency.js';
import { bindCard, submitCard, submitCode, TEST_CODE } from '../support/binding.js';
import { startService, type Merchant, type TestService } from '../support/harness.js';
import { SEED, seeded } from '../support/random.js';
import { balance, reconcileNow } from '../support/payments.js';

const STEPS = 150;
const CRASH_RATE = 0.2;


const next = seeded(SEED);
let crashing = true;
const hooks: PhaseHooks = {
  afterCommit: () => {
    if (crashing && next() < CRASH_RATE) throw new Error('injected crash after a commit');
  },
  afterCall: () => {
    if (crashing && next() < CRASH_RATE) throw new Error('injected crash after a rail call');
  },
};

let service: TestService;
let shop: Merchant;
beforeAll(async () => {
  service = await startService({ TOLOV_SETTLEMENT_DELAY_SECONDS: '0' }, { hooks });
  shop = await service.createMerchant({ feeBps: 150 });
});
afterAll(() => service.stop());

describe('crashes injected between atomic phases at random points', () => {
  it(`keep money, ledger, rail and events in agreement over ${STEPS} random operations`, async () => {
    process.stdout.write(`random crashes: TOLOV_TEST_SEED=${SEED}\n`);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    crashing = false;
    const cards = await Promise.all(
      ['8600000000000007', '8600000000000015', '8600000000000031', '8600000000000049', '8600000000000064'].map((pan) => bindCard(service, shop.test, pan)),
    );
    crashing = true;
    const keys: Array<{ url: string; body: Record<string, unknown>; key: string }> = [];
    const send = (request: { url: string; body: Record<string, unknown>; key?: string }) =>
      service.call({ method: 'POST', url: request.url, key: shop.test, body: request.body, ...(request.key ? { idempotencyKey: request.key } : {}) });

    for (let step = 0; step < STEPS; step++) {
      const action = pick(['charge', 'charge', 'refund', 'order', 'reconcile'] as const);
      if (action === 'charge') {
        const request = { url: '/subscribe/v1/charges', body: { amount: 1 + Math.floor(next() * 1_000_000), card: pick(cards) }, key: `rc-${SEED}-${step}` };
        keys.push(request);
        // The client retries a failed request with the same key, a few times.
        for (let attempt = 0; attempt < 3; attempt++) if ((await send(request)).status < 500) break;
      } else if (action === 'refund') {
        const [intent] = await service.db.query<{ id: string }>(
          `SELECT id FROM payment_intents i WHERE product_id = $1 AND status = 'SUCCEEDED' AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.payment_intent_id = i.id) ORDER BY random() LIMIT 1`,
          [shop.productId],
        );
        if (intent) {
          const request = { url: '/v1/refunds', body: { paymentIntent: intent.id }, key: `rr-${SEED}-${step}` };
          keys.push(request);
          for (let attempt = 0; attempt < 3; attempt++) if ((await send(request)).status < 500) break;
        }
      } else if (action === 'order') {
        const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: `ro-${SEED}-${step}`, body: { amount: 1 + Math.floor(next() * 500_000) } });
        if (order.status === 201) {
          const token = order.body.paymentUrl.split('/pay/')[1];
          await submitCard(service, token, { pan: pick(['8600000000000007', '8600000000000015', '8600000000000031']) });
          await submitCode(service, token, TEST_CODE);
        }
      } else {
        await reconcileNow(service);
      }
    }

    // The crashes stop; every client retries every key once more, and reconciliation and settlement catch up.
    crashing = false;
    await service.db.query('UPDATE idempotency_keys SET locked_at = NULL');
    for (const request of keys) expect((await send(request)).status, `retry of ${request.key}`).toBeLessThan(500);
    for (let round = 0; round < 5; round++) await reconcileNow(service);
    await service.payments.settle(0, 1_000);

    const context = `seed ${SEED}`;
    const one = async <T>(sql: string) => (await service.db.query<T & object>(sql, [shop.productId]))[0]!;
    expect((await one<{ n: number }>(`SELECT count(*)::int AS n FROM payment_intents WHERE product_id = $1 AND status = 'PROCESSING'`)).n, context).toBe(0);
    expect((await one<{ n: number }>(`SELECT count(*)::int AS n FROM refunds WHERE product_id = $1 AND status = 'PENDING'`)).n, context).toBe(0);

    // The rail's own record and Tolov agree on every debit: never FAILED when money moved, never SUCCEEDED when not.
    const disagreements = await service.db.query(
      `SELECT i.id, i.status, o.status AS rail FROM payment_intents i LEFT JOIN test_rail_operations o ON o.operation_id = i.id
        WHERE i.product_id = $1 AND i.status IN ('SUCCEEDED', 'FAILED')
          AND (i.status = 'SUCCEEDED') <> (o.status IS NOT DISTINCT FROM 'SUCCEEDED')`,
      [shop.productId],
    );
    expect(disagreements, context).toEqual([]);
    const refundDisagreements = await service.db.query(
      `SELECT r.id FROM refunds r LEFT JOIN test_rail_operations o ON o.operation_id = r.id
        WHERE r.product_id = $1 AND (r.status = 'SUCCEEDED') <> (o.status IS NOT DISTINCT FROM 'SUCCEEDED')`,
      [shop.productId],
    );
    expect(refundDisagreements, context).toEqual([]);

    // The ledger balances, matches the payments, and moved once per payment and refund.
    expect(await service.db.query('SELECT transaction_id FROM ledger_entries WHERE product_id = $1 GROUP BY transaction_id HAVING sum(amount) <> 0', [shop.productId])).toEqual([]);
    const expected = await one<{ net: number }>(
      `SELECT (coalesce(sum(amount - fee) FILTER (WHERE status = 'SUCCEEDED'), 0)
               - (SELECT coalesce(sum(amount), 0) FROM refunds WHERE product_id = $1 AND status = 'SUCCEEDED'))::bigint AS net
         FROM payment_intents WHERE product_id = $1`,
    );
    const current = await balance(service, shop.test);
    expect(current.available + current.pending, context).toBe(expected.net);
    expect(current.pending, context).toBe(0);
    const doubled = await service.db.query(
      `SELECT reference_id FROM ledger_transactions WHERE product_id = $1 GROUP BY reference_id, reason HAVING count(*) > 1`,
      [shop.productId],
    );
    expect(doubled, context).toEqual([]);

    // One event per final state, and one intent per key.
    const wrongEvents = await one<{ n: number }>(
      `SELECT count(*)::int AS n FROM payment_intents i WHERE i.product_id = $1
          AND (i.status IN ('SUCCEEDED', 'FAILED'))::int <> (SELECT count(*) FROM events e WHERE e.object_id = i.id AND e.type LIKE 'payment_intent.%')`,
    );
    expect(wrongEvents.n, context).toBe(0);
    const orderEvents = await one<{ n: number }>(
      `SELECT count(*)::int AS n FROM orders o WHERE o.product_id = $1
          AND (o.status IN ('PAID', 'FAILED', 'EXPIRED'))::int <> (SELECT count(*) FROM events e WHERE e.object_id = o.id)`,
    );
    expect(orderEvents.n, context).toBe(0);
    const intents = await one<{ n: number }>(`SELECT count(*)::int AS n FROM payment_intents WHERE product_id = $1 AND order_id IS NULL`);
    expect(intents.n, context).toBe(keys.filter((request) => request.url === '/subscribe/v1/charges').length);
  }, 120_000);
});
