import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { SEED, seeded } from '../support/random.js';
import { balance, charge, reconcileNow } from '../support/payments.js';

const STEPS = 300;


let service: TestService;
let shop: Merchant;
beforeAll(async () => {
  service = await startService({ TOLOV_SETTLEMENT_DELAY_SECONDS: '0' });
  shop = await service.createMerchant({ feeBps: 137 });
});
afterAll(() => service.stop());

const one = async <T>(sql: string): Promise<T> => (await service.db.query<T & object>(sql, [shop.productId]))[0]!;

async function checkInvariants(step: string): Promise<void> {
  const context = `seed ${SEED}, after ${step}`;
  // 1. Every ledger transaction balances, and so does the whole ledger.
  const unbalanced = await service.db.query(
    'SELECT transaction_id FROM ledger_entries WHERE product_id = $1 GROUP BY transaction_id HAVING sum(amount) <> 0',
    [shop.productId],
  );
  expect(unbalanced, context).toEqual([]);
  expect((await one<{ total: number }>('SELECT coalesce(sum(amount), 0)::bigint AS total FROM ledger_entries WHERE product_id = $1')).total, context).toBe(0);

  // 2. The balance rows are exactly the sums of the entries.
  const totals = (table: string) =>
    service.db.query(
      `SELECT account, sum(amount)::bigint AS total FROM ${table} WHERE product_id = $1 GROUP BY account HAVING sum(amount) <> 0 ORDER BY account`,
      [shop.productId],
    );
  expect(await totals('ledger_balances'), context).toEqual(await totals('ledger_entries'));

  // 3. available + pending = succeeded amounts − their fees − succeeded refunds; pending = unsettled net amounts.
  const expected = await one<{ net: number; unsettled: number }>(
    `SELECT coalesce(sum(amount - fee) FILTER (WHERE status = 'SUCCEEDED'), 0)::bigint
              - (SELECT coalesce(sum(amount), 0) FROM refunds WHERE product_id = $1 AND status = 'SUCCEEDED')::bigint AS net,
            coalesce(sum(amount - fee) FILTER (WHERE status = 'SUCCEEDED' AND settled_at IS NULL), 0)::bigint AS unsettled
       FROM payment_intents WHERE product_id = $1`,
  );
  const actual = await balance(service, shop.test);
  expect(actual.available + actual.pending, context).toBe(expected.net);
  expect(actual.pending, context).toBe(expected.unsettled);

  // 4. SUCCEEDED ⇔ exactly one posted payment; a succeeded refund ⇔ exactly one posted refund.
  const mismatched = await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM payment_intents i
      WHERE i.product_id = $1
        AND (i.status = 'SUCCEEDED')::int <> (SELECT count(*) FROM ledger_transactions t WHERE t.reference_id = i.id AND t.reason = 'payment_succeeded')`,
  );
  expect(mismatched.n, context).toBe(0);
  const refundsMismatched = await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM refunds r
      WHERE r.product_id = $1
        AND (r.status = 'SUCCEEDED')::int <> (SELECT count(*) FROM ledger_transactions t WHERE t.reference_id = r.id AND t.reason = 'refund_succeeded')`,
  );
  expect(refundsMismatched.n, context).toBe(0);

  // 5. Exactly one event per final state, none for the others.
  const wrongEvents = await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM payment_intents i
      WHERE i.product_id = $1
        AND (i.status IN ('SUCCEEDED', 'FAILED'))::int <> (SELECT count(*) FROM events e WHERE e.object_id = i.id)`,
  );
  expect(wrongEvents.n, context).toBe(0);
}

describe('the ledger under a random sequence of payments', () => {
  it(`keeps every invariant after each of ${STEPS} steps`, async () => {
    process.stdout.write(`ledger invariants: TOLOV_TEST_SEED=${SEED}\n`);
    const next = seeded(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const pans = ['8600000000000007', '9860000000000000', '8600000000000015', '8600000000000031', '8600000000000049', '8600000000000064'];
    const cards = await Promise.all(pans.map((pan) => bindCard(service, shop.test, pan)));
    const blockable = await bindCard(service, shop.test, '8600000000000056');
    const done: Record<string, number> = {};

    for (let step = 0; step < STEPS; step++) {
      const action = pick(['charge', 'charge', 'charge', 'legacy', 'refund', 'refund', 'reconcile', 'settle', 'block'] as const);
      const amount = 1 + Math.floor(next() * 5_000_000);
      if (action === 'charge') {
        expect((await charge(service, shop.test, { amount, card: pick(cards) })).status).toBe(201);
      } else if (action === 'legacy') {
        const created = await service.call({ method: 'POST', url: '/v1/payment_intents', key: shop.test, body: { amount, card: pick(cards) } });
        if (next() < 0.8) await service.call({ method: 'POST', idempotencyKey: idem(), url: `/v1/payment_intents/${created.body.id}/confirm`, key: shop.test });
      } else if (action === 'refund') {
        const candidates = await service.db.query<{ id: string }>(
          `SELECT id FROM payment_intents i WHERE product_id = $1 AND status IN ('SUCCEEDED', 'PROCESSING', 'FAILED')
             AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.payment_intent_id = i.id)`,
          [shop.productId],
        );
        if (candidates.length > 0) {
          const reply = await service.call({ method: 'POST', idempotencyKey: idem(), url: '/v1/refunds', key: shop.test, body: { paymentIntent: pick(candidates).id } });
          expect([201, 409]).toContain(reply.status);
        }
      } else if (action === 'reconcile') {
        await reconcileNow(service);
      } else if (action === 'settle') {
        await service.payments.settle(0, 50);
      } else {
        const reply = await charge(service, shop.test, { amount, card: blockable });
        expect([201, 400]).toContain(reply.status);
      }
      done[action] = (done[action] ?? 0) + 1;
      await checkInvariants(`step ${step} (${action})`);
    }
    // The sequence exercised every kind of step.
    expect(Object.keys(done).sort()).toEqual(['block', 'charge', 'legacy', 'reconcile', 'refund', 'settle']);
    const statuses = await service.db.query<{ status: string }>('SELECT DISTINCT status FROM payment_intents WHERE product_id = $1', [shop.productId]);
    expect(statuses.map((row) => row.status)).toEqual(expect.arrayContaining(['SUCCEEDED', 'FAILED']));
  });
});
