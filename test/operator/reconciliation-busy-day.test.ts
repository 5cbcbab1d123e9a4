// The reconciliation report on a busy day: both sides read over the whole day by operation id, a page at a time, so
// that a day of more operations than a page (or than the 10,000 the report once cut each side at) reports exactly the
// operations the sides disagree on, and an operation Tolov dates just before midnight and the bank just after is one
// operation, not two mismatches.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/harness.js';
import { bindCard } from '../support/binding.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.stop());

/** Operations of the day: more than the report once compared per side. */
const COUNT = 12_000;
const DAY = '2026-11-20';

describe('the reconciliation report of a busy day', () => {
  it('compares every operation of the day by id and lists exactly those the sides disagree on', async () => {
    const shop = await service.createMerchant();
    const card = await bindCard(service, shop.test, '8600000000000007');
    const [row] = await service.db.query<{ rail_token: string }>('SELECT rail_token FROM cards WHERE id = $1', [card]);
    // Tolov dates operation g at g × 7 s after midnight; the bank executed each 0.8 s later. pi_busy000001 Tolov dates
    // just before the next midnight and the bank just after it; pi_busy000002 Tolov dates just before this day and the
    // bank in it.
    await service.db.exec(`
      INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, rail_token, rail, masked_pan, succeeded_at, created_at)
        SELECT 'pi_busy' || lpad(g::text, 6, '0'), '${shop.productId}', false, 1000 + g, 10, 'UZS', 'SUCCEEDED', '${card}', '${row!.rail_token}', 'uzcard',
               '860000******0007', now(), timestamptz '${DAY}T00:00:00Z' + g * interval '7 seconds'
          FROM generate_series(0, ${COUNT - 1}) g;
      UPDATE payment_intents SET created_at = timestamptz '${DAY}T23:59:59.5Z' WHERE id = 'pi_busy000001';
      UPDATE payment_intents SET created_at = timestamptz '${DAY}T00:00:00Z' - interval '0.5 seconds' WHERE id = 'pi_busy000002';
      -- A payment intent created the day before and confirmed on the day: dated by its confirm, as the bank dates it.
      UPDATE payment_intents SET created_at = timestamptz '${DAY}T00:00:00Z' - interval '14 hours', debit_started_at = timestamptz '${DAY}T15:00:00Z'
       WHERE id = 'pi_busy000003';
      INSERT INTO test_rail_operations (operation_id, type, token, amount, status, failure_code, created_at)
        SELECT id, 'debit', rail_token, amount, 'SUCCEEDED', NULL, coalesce(debit_started_at, created_at) + interval '0.8 seconds' FROM payment_intents WHERE id LIKE 'pi_busy%';
      -- What the report must find: one debit the bank never executed, one it executed for another amount.
      DELETE FROM test_rail_operations WHERE operation_id = 'pi_busy007777';
      UPDATE test_rail_operations SET amount = amount + 1 WHERE operation_id = 'pi_busy011111';`);
    const reply = await service.admin('GET', `/admin/v1/reconciliation?date=${DAY}&mode=test`);
    expect(reply.status).toBe(200);
    // Each side counts what it dates on the 20th (the bank not pi_busy000001, nor pi_busy007777 it never executed;
    // Tolov not pi_busy000002), and both are matched across midnight rather than reported.
    expect(reply.body.compared).toEqual({ tolov: COUNT - 1, bank: COUNT - 2 });
    expect(reply.body.truncated).toBe(false);
    expect(reply.body.mismatches).toEqual([
      { operationId: 'pi_busy007777', type: 'debit', problem: 'missing_at_bank', tolov: { status: 'SUCCEEDED', amount: 8777 }, bank: null },
      { operationId: 'pi_busy011111', type: 'debit', problem: 'amount_differs', tolov: { status: 'SUCCEEDED', amount: 12111 }, bank: { status: 'SUCCEEDED', amount: 12112 } },
    ]);
  }, 120_000);
});
