import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileNow } from '../support/payments.js';
import { bindLiveCard, liveCharge, setFaults, startLive, type Live } from '../support/live.js';

const CHARGES = 24;
const CONCURRENCY = 8;

let live: Live;
let card: string;
beforeAll(async () => {
  live = await startLive({ TOLOV_LIVE_RAIL_TIMEOUT_MS: '300' });
  card = await bindLiveCard(live, '8600000000000007');
});
afterAll(() => live.stop());

const simBalance = async () => (await live.sim.db.query<{ balance: number }>("SELECT balance FROM sim_cards WHERE last4 = '0007'"))[0]!.balance;

/** Reconciles until nothing is open, a bounded number of rounds. */
async function settleEverything(): Promise<void> {
  for (let round = 0; round < 10; round++) {
    const open = await live.service.db.query(
      `SELECT id FROM payment_intents WHERE status = 'PROCESSING' UNION ALL SELECT id FROM refunds WHERE status = 'PENDING'`,
    );
    if (open.length === 0) return;
    await reconcileNow(live.service);
  }
}

/** Runs the load; returns how many charges were left PROCESSING (unclear after the client's own retries). */
async function runLoad(label: string, midway?: () => Promise<void>): Promise<number> {
  const before = await simBalance();
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < CHARGES) {
      const index = next++;
      if (index === CHARGES / 2 && midway) await midway();
      const reply = await liveCharge(live, card, 10_000 + index, `${label}-${index}`);
      expect([201, 500, 503], reply.text).toContain(reply.status);
      if (reply.status === 201) ids.push(reply.body.id);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  // The client retries what failed before any intent existed (a 5xx is never stored), with the same keys.
  await setFaults(live.sim, {});
  for (let index = 0; index < CHARGES; index++) {
    const reply = await liveCharge(live, card, 10_000 + index, `${label}-${index}`);
    expect(reply.status, reply.text).toBe(201);
    if (!ids.includes(reply.body.id)) ids.push(reply.body.id);
  }
  expect(new Set(ids).size).toBe(CHARGES);
  const [{ unclear }] = (await live.service.db.query<{ unclear: number }>(
    `SELECT count(*)::int AS unclear FROM payment_intents WHERE id = ANY($1) AND status = 'PROCESSING'`,
    [ids],
  )) as [{ unclear: number }];
  await settleEverything();

  const intents = await live.service.db.query<{ id: string; status: string; amount: number }>('SELECT id, status, amount FROM payment_intents WHERE id = ANY($1)', [ids]);
  expect(intents.filter((intent) => intent.status === 'PROCESSING'), `${label}: left PROCESSING`).toEqual([]);
  const operations = await live.sim.db.query<{ operation_id: string; status: string; amount: number }>(
    'SELECT operation_id, status, amount FROM sim_operations WHERE operation_id = ANY($1)',
    [ids],
  );
  // Tolov and the bank agree on every operation, and the bank's balance moved once per succeeded debit.
  const succeededAtTolov = intents.filter((intent) => intent.status === 'SUCCEEDED').map((intent) => intent.id).sort();
  const succeededAtBank = operations.filter((operation) => operation.status === 'SUCCEEDED').map((operation) => operation.operation_id).sort();
  expect(succeededAtTolov, `${label}: succeeded debits`).toEqual(succeededAtBank);
  const moved = intents.filter((intent) => intent.status === 'SUCCEEDED').reduce((sum, intent) => sum + intent.amount, 0);
  expect(before - (await simBalance()), `${label}: bank balance movement`).toBe(moved);
  expect(operations.length, `${label}: operations at the bank`).toBeLessThanOrEqual(CHARGES);
  return unclear;
}

async function assertLedgerMatchesBank(): Promise<void> {
  const date = new Date().toISOString().slice(0, 10);
  const report = await live.service.admin('GET', `/admin/v1/reconciliation?date=${date}`);
  expect(report.status).toBe(200);
  expect(report.body.mismatches).toEqual([]);
  expect(report.body.compared.tolov).toBeGreaterThan(0);
  // Tolov's ledger for the live merchant equals what the bank moved for it.
  const [ledger] = await live.service.db.query<{ net: number }>(
    `SELECT coalesce(sum(amount), 0)::bigint AS net FROM ledger_entries WHERE product_id = $1 AND livemode AND account = 'rail_clearing'`,
    [live.merchant.productId],
  );
  const [bank] = await live.sim.db.query<{ net: number }>(
    `SELECT coalesce(sum(CASE WHEN type = 'debit' THEN amount ELSE -amount END), 0)::bigint AS net FROM sim_operations WHERE status = 'SUCCEEDED'`,
  );
  expect(-ledger!.net).toBe(bank!.net);
}

describe('live mode under gateway faults, with concurrent charges', () => {
  // High rates exhaust the client's own retries often, so that reconciliation, not luck, must settle the outcome.
  it.each([
    ['latency', { latencyMs: 100 }, false],
    ['timeouts', { timeoutRate: 0.7 }, true],
    ['5xx errors', { errorRate: 0.7 }, true],
    ['answers dropped after commit', { dropAfterCommitRate: 0.7 }, true],
    ['ambiguous answers', { ambiguousRate: 0.7 }, true],
    ['everything at once', { latencyMs: 20, timeoutRate: 0.2, errorRate: 0.2, dropAfterCommitRate: 0.2, ambiguousRate: 0.2 }, false],
  ] as const)('%s: nothing left PROCESSING, Tolov and the bank agree, no double debit', async (label, faults, unclearExpected) => {
    await setFaults(live.sim, faults);
    const unclear = await runLoad(label.replace(/\s+/g, '-'));
    if (unclearExpected) expect(unclear, 'some charges must have been left to reconciliation').toBeGreaterThan(0);
    await assertLedgerMatchesBank();
  });

  it('the bank killed and restarted mid-load', async () => {
    await setFaults(live.sim, { latencyMs: 30 });
    await runLoad('restart', () => live.restartSim());
    await assertLedgerMatchesBank();
  });
});
