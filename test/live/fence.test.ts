// A bank slower than Tolov's patience: every money call carries its deadline, and reconciliation fences an operation
// the bank has not executed before failing it, so that a call the bank runs late moves no money.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { idem } from '../support/harness.js';
import { reconcileNow } from '../support/payments.js';
import { bindLiveCard, gateway, liveCharge, setFaults, startLive, type Live } from '../support/live.js';

/** Tolov waits 200 ms an attempt (3 attempts, about 1.7 s in all); the bank takes this long to run a money call. */
const RAIL_TIMEOUT_MS = 200;
const BANK_MONEY_LATENCY_MS = 2_500;

let live: Live;
let card: string;
beforeAll(async () => {
  live = await startLive({ TOLOV_LIVE_RAIL_TIMEOUT_MS: String(RAIL_TIMEOUT_MS) });
  card = await bindLiveCard(live, '8600000000000007');
});
afterAll(() => live.stop());

const bankOperations = async (operationId: string) =>
  live.sim.db.query<{ type: string; status: string }>('SELECT type, status FROM sim_operations WHERE operation_id = $1', [operationId]);
const cardBalance = async () => (await live.sim.db.query<{ balance: number }>(`SELECT balance FROM sim_cards WHERE last4 = '0007'`))[0]!.balance;
const bankToken = async () => (await live.service.db.query<{ rail_token: string }>('SELECT rail_token FROM cards WHERE id = $1', [card]))[0]!.rail_token;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const inAMinute = () => new Date(Date.now() + 60_000).toISOString();

describe('the gateway protocol: deadline and fence', () => {
  it('a debit still sleeping in the bank when it is fenced never executes', async () => {
    await setFaults(live.sim, { moneyLatencyMs: 800 });
    try {
      const before = await cardBalance();
      const operationId = newId('pi');
      const debit = gateway(live.sim, '/v1/debits', { operationId, token: await bankToken(), amount: 1_000, deadline: inAMinute() });
      await sleep(200);
      expect(await gateway(live.sim, '/v1/operations/fence', { operationId })).toEqual({ result: 'fenced' });
      expect(await debit).toEqual({ result: 'refused', code: 'FENCED' });
      expect(await bankOperations(operationId)).toEqual([]);
      expect(await cardBalance()).toBe(before);
      expect(await gateway(live.sim, '/v1/operations/fence', { operationId })).toEqual({ result: 'fenced' });
    } finally {
      await setFaults(live.sim, {});
    }
  });

  it('fencing an operation that executed answers what it was, and changes nothing', async () => {
    const operationId = newId('pi');
    expect(await gateway(live.sim, '/v1/debits', { operationId, token: await bankToken(), amount: 1_000, deadline: inAMinute() })).toMatchObject({ result: 'ok' });
    expect(await gateway(live.sim, '/v1/operations/fence', { operationId })).toEqual({ result: 'ok', status: 'SUCCEEDED' });
    expect(await bankOperations(operationId)).toEqual([{ type: 'debit', status: 'SUCCEEDED' }]);
  });

  it('a money call reaching the bank after its deadline is refused and moves nothing; one without a deadline is refused', async () => {
    const before = await cardBalance();
    const late = newId('pi');
    const passed = new Date(Date.now() - 1_000).toISOString();
    expect(await gateway(live.sim, '/v1/debits', { operationId: late, token: await bankToken(), amount: 1_000, deadline: passed })).toEqual({
      result: 'refused',
      code: 'DEADLINE_PASSED',
    });
    expect(await gateway(live.sim, '/v1/debits', { operationId: newId('pi'), token: await bankToken(), amount: 1_000 })).toEqual({
      result: 'refused',
      code: 'BAD_REQUEST',
    });
    expect(await bankOperations(late)).toEqual([]);
    expect(await cardBalance()).toBe(before);
  });
});

describe('Tolov against a bank slower than its call window', () => {
  it('a debit the bank runs late: PROCESSING, then FAILED once fenced, and the bank never takes the money', async () => {
    const before = await cardBalance();
    await setFaults(live.sim, { moneyLatencyMs: BANK_MONEY_LATENCY_MS });
    try {
      const charged = await liveCharge(live, card, 40_000);
      expect(charged.body.status).toBe('PROCESSING');
      await reconcileNow(live.service);
      const read = await live.service.call({ method: 'GET', url: `/subscribe/v1/charges/${charged.body.id}`, key: live.merchant.live });
      expect(read.body).toMatchObject({ status: 'FAILED', failureCode: 'PROCESSING_ERROR' });
      // Every attempt Tolov sent wakes at the bank after the fence.
      await sleep(BANK_MONEY_LATENCY_MS + 500);
      expect(await bankOperations(charged.body.id)).toEqual([]);
      expect(await cardBalance()).toBe(before);
    } finally {
      await setFaults(live.sim, {});
    }
  });

  it('a refund the bank runs late: FAILED once fenced, and a new refund pays the buyer once', async () => {
    const paid = await liveCharge(live, card, 60_000);
    expect(paid.body.status).toBe('SUCCEEDED');
    const before = await cardBalance();
    await setFaults(live.sim, { moneyLatencyMs: BANK_MONEY_LATENCY_MS });
    let first: string;
    try {
      const refund = await live.service.call({ method: 'POST', url: '/v1/refunds', key: live.merchant.live, idempotencyKey: idem(), body: { paymentIntent: paid.body.id } });
      expect(refund.body.status).toBe('PENDING');
      first = refund.body.id;
      await reconcileNow(live.service);
      expect((await live.service.call({ method: 'GET', url: `/v1/refunds/${first}`, key: live.merchant.live })).body.status).toBe('FAILED');
      await sleep(BANK_MONEY_LATENCY_MS + 500);
      expect(await bankOperations(first)).toEqual([]);
    } finally {
      await setFaults(live.sim, {});
    }
    const again = await live.service.call({ method: 'POST', url: '/v1/refunds', key: live.merchant.live, idempotencyKey: idem(), body: { paymentIntent: paid.body.id } });
    expect(again.body.status).toBe('SUCCEEDED');
    const refunds = await live.sim.db.query<{ operation_id: string }>(`SELECT operation_id FROM sim_operations WHERE type = 'refund' AND operation_id IN ($1, $2)`, [
      first,
      again.body.id,
    ]);
    expect(refunds).toEqual([{ operation_id: again.body.id }]);
    expect(await cardBalance()).toBe(before + 60_000);
    // The books agree on every operation Tolov made (the protocol tests above debited the bank directly).
    const report = await live.service.admin('GET', `/admin/v1/reconciliation?date=${new Date().toISOString().slice(0, 10)}`);
    const tolovIds = (await live.service.db.query<{ id: string }>('SELECT id FROM payment_intents UNION ALL SELECT id FROM refunds')).map((row) => row.id);
    expect(tolovIds).toEqual(expect.arrayContaining([paid.body.id, first, again.body.id]));
    expect(report.body.mismatches.filter((mismatch: { operationId: string }) => tolovIds.includes(mismatch.operationId))).toEqual([]);
  });
});
