// Live payouts against the bank simulator: the credit transfer of docs/rail-protocol.md executed once per payout at the
// merchant's account, refused for a closed account with the amount back, left IN_TRANSIT by any unclear answer and then
// reconciled to what the bank did (fenced when it did nothing, so that it never does it late), and compared with the
// bank's own record by the reconciliation report.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem } from '../support/harness.js';
import { bindLiveCard, gateway, liveCharge, setFaults, simCalls, startLive, type Live } from '../support/live.js';
import { balance, eventsOf, reconcileNow } from '../support/payments.js';
import { setPayoutAccount } from '../support/payouts.js';

/** Tolov waits 500 ms to connect and 500 ms for an answer, three attempts 100 and 400 ms apart: a 3.5 s call window. */
const RAIL_TIMEOUT_MS = 500;
const CALL_WINDOW_MS = 3 * (RAIL_TIMEOUT_MS + RAIL_TIMEOUT_MS) + 100 + 400;
/** A bank slower than the whole call window, by enough for Tolov to fence a transfer while the bank still sleeps. */
const BANK_MONEY_LATENCY_MS = CALL_WINDOW_MS + 2_000;
const MFO = '00440';

let live: Live;
let key: string;
beforeAll(async () => {
  live = await startLive({ TOLOV_LIVE_RAIL_TIMEOUT_MS: String(RAIL_TIMEOUT_MS) });
  key = live.merchant.live;
  const card = await bindLiveCard(live, '8600000000000007');
  const charged = await liveCharge(live, card, 200_000_000);
  expect(charged.body.status).toBe('SUCCEEDED');
  // The charge's net is available at once, as the settlement delay would make it.
  await live.service.payments.settle(-10 * 365 * 86_400, 1_000);
  expect((await balance(live.service, key)).available).toBe(198_000_000);
});
afterAll(() => live?.stop());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const today = () => new Date().toISOString().slice(0, 10);
const available = async () => (await balance(live.service, key)).available as number;

/** The live payout account, ending in `last4`; returns its number. */
const useAccount = (last4: string) => setPayoutAccount(live.service, live.merchant.productId, { last4, livemode: true });

async function createPayout(amount: number): Promise<string> {
  const reply = await live.service.call({ method: 'POST', url: '/v1/payouts', key, idempotencyKey: idem(), body: { amount } });
  expect(reply.status, reply.text).toBe(201);
  expect(reply.body).toMatchObject({ status: 'PENDING', amount, livemode: true });
  return reply.body.id;
}

const payout = async (id: string) => (await live.service.call({ method: 'GET', url: `/v1/payouts/${id}`, key })).body;

/** What the bank executed under the operation id, from its own books. */
const atBank = (operationId: string) =>
  live.sim.db.query<{ type: string; amount: number; status: string; failure_code: string | null }>(
    'SELECT type, amount::int AS amount, status, failure_code FROM sim_operations WHERE operation_id = $1',
    [operationId],
  );

/** The account's balance at the bank (GET /sim/v1/accounts/{mfo}/{number}), or null when no transfer ever reached it. */
async function accountAtBank(accountNumber: string): Promise<number | null> {
  const response = await fetch(`${live.sim.url}/sim/v1/accounts/${MFO}/${accountNumber}`);
  if (response.status === 404) return null;
  expect(response.status).toBe(200);
  return ((await response.json()) as { balance: number }).balance;
}

/** The simulator's public list of its operations (GET /sim/v1/operations). */
async function listedByBank(): Promise<{ operationId: string; type: string; amount: number; status: string }[]> {
  const response = await fetch(`${live.sim.url}/sim/v1/operations?limit=10000`);
  return ((await response.json()) as { data: { operationId: string; type: string; amount: number; status: string }[] }).data;
}

const report = async () => {
  const reply = await live.service.admin('GET', `/admin/v1/reconciliation?date=${today()}&mode=live`);
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
};

describe('a live payout', () => {
  it('is credited to the account at the bank once: PAID, listed by the simulator as a transfer', async () => {
    const account = await useAccount('0001');
    const before = { available: await available(), credited: (await accountAtBank(account)) ?? 0, calls: simCalls(live.sim, '/v1/transfers') };
    const id = await createPayout(1_500_000);
    expect(await available()).toBe(before.available - 1_500_000);

    expect(await live.service.payouts.sendDue(100)).toBe(1);
    expect(await payout(id)).toMatchObject({ status: 'PAID', failureCode: null, destination: { bankMfo: MFO, accountLast4: '0001' } });
    expect(await atBank(id)).toEqual([{ type: 'transfer', amount: 1_500_000, status: 'SUCCEEDED', failure_code: null }]);
    expect(await listedByBank()).toContainEqual({ operationId: id, type: 'transfer', amount: 1_500_000, status: 'SUCCEEDED' });
    expect(await accountAtBank(account)).toBe(before.credited + 1_500_000);
    expect(simCalls(live.sim, '/v1/transfers')).toBe(before.calls + 1);
    expect((await eventsOf(live.service, id)).map((event) => event.type)).toEqual(['payout.paid']);
    expect(await available()).toBe(before.available - 1_500_000);

    // Nothing sends it again: it is no longer PENDING.
    await live.service.payouts.send(id);
    await live.service.payouts.sendDue(100);
    expect(simCalls(live.sim, '/v1/transfers')).toBe(before.calls + 1);
    expect(await accountAtBank(account)).toBe(before.credited + 1_500_000);
  });

  it('to a closed account (…0002) is refused ACCOUNT_CLOSED: FAILED, its amount back, nothing credited', async () => {
    const account = await useAccount('0002');
    const before = await available();
    const id = await createPayout(2_000_000);
    expect(await available()).toBe(before - 2_000_000);
    await live.service.payouts.sendDue(100);
    expect(await payout(id)).toMatchObject({ status: 'FAILED', failureCode: 'ACCOUNT_CLOSED' });
    expect(await available()).toBe(before);
    expect(await atBank(id)).toEqual([{ type: 'transfer', amount: 2_000_000, status: 'FAILED', failure_code: 'ACCOUNT_CLOSED' }]);
    expect(await accountAtBank(account)).toBeNull();
    expect((await eventsOf(live.service, id)).map((event) => event.type)).toEqual(['payout.failed']);
  });

  it('credited with its answer left pending (…0003): IN_TRANSIT, a mismatch in the report, then PAID by reconciliation', async () => {
    const account = await useAccount('0003');
    const before = { available: await available(), credited: (await accountAtBank(account)) ?? 0 };
    const id = await createPayout(3_000_000);
    await live.service.payouts.sendDue(100);
    expect((await payout(id)).status).toBe('IN_TRANSIT');
    // The bank moved the money; Tolov does not count it as moved yet: the report says so.
    expect(await atBank(id)).toEqual([{ type: 'transfer', amount: 3_000_000, status: 'SUCCEEDED', failure_code: null }]);
    expect(await accountAtBank(account)).toBe(before.credited + 3_000_000);
    expect((await report()).mismatches).toEqual([
      { operationId: id, type: 'transfer', problem: 'missing_at_tolov', tolov: { status: 'IN_TRANSIT', amount: 3_000_000 }, bank: { status: 'SUCCEEDED', amount: 3_000_000 } },
    ]);
    expect(await available()).toBe(before.available - 3_000_000);

    await reconcileNow(live.service);
    expect(await payout(id)).toMatchObject({ status: 'PAID', failureCode: null });
    expect(await atBank(id)).toHaveLength(1);
    expect(await accountAtBank(account)).toBe(before.credited + 3_000_000);
    expect(await available()).toBe(before.available - 3_000_000);
    expect((await eventsOf(live.service, id)).map((event) => event.type)).toEqual(['payout.paid']);
    expect((await report()).mismatches).toEqual([]);
  });
});

describe('a live payout under the network faults', () => {
  /** Sends one payout under `faults`, which are cleared once it has its answer (or none). */
  async function sendUnder(faults: Record<string, number>, id: string) {
    await setFaults(live.sim, faults);
    try {
      await live.service.payouts.send(id);
    } finally {
      await setFaults(live.sim, {});
    }
    return (await payout(id)).status as string;
  }

  for (const fault of ['dropAfterCommitRate', 'ambiguousRate']) {
    it(`${fault}: the bank executed it, the answer was lost; IN_TRANSIT, then PAID by reconciliation, one transfer`, async () => {
      const account = await useAccount('0001');
      const before = { available: await available(), credited: (await accountAtBank(account)) ?? 0, calls: simCalls(live.sim, '/v1/transfers') };
      const id = await createPayout(1_000_000);
      expect(await sendUnder({ [fault]: 1 }, id)).toBe('IN_TRANSIT');
      // Tolov asked three times under one operation id; the bank executed it once.
      expect(simCalls(live.sim, '/v1/transfers')).toBe(before.calls + 3);
      expect(await atBank(id)).toEqual([{ type: 'transfer', amount: 1_000_000, status: 'SUCCEEDED', failure_code: null }]);
      await reconcileNow(live.service);
      expect(await payout(id)).toMatchObject({ status: 'PAID', failureCode: null });
      expect(await atBank(id)).toHaveLength(1);
      expect(await accountAtBank(account)).toBe(before.credited + 1_000_000);
      expect(await available()).toBe(before.available - 1_000_000);
      expect((await eventsOf(live.service, id)).map((event) => event.type)).toEqual(['payout.paid']);
    });
  }

  it('timeoutRate: the bank never answered nor executed it; IN_TRANSIT, then fenced: FAILED, its amount back, no transfer', async () => {
    const account = await useAccount('0004');
    const before = { available: await available(), calls: simCalls(live.sim, '/v1/transfers') };
    const id = await createPayout(1_000_000);
    expect(await sendUnder({ timeoutRate: 1 }, id)).toBe('IN_TRANSIT');
    expect(simCalls(live.sim, '/v1/transfers')).toBe(before.calls + 3);
    expect(await available()).toBe(before.available - 1_000_000);
    await reconcileNow(live.service);
    expect(await payout(id)).toMatchObject({ status: 'FAILED', failureCode: 'PROCESSING_ERROR' });
    expect(await available()).toBe(before.available);
    expect(await atBank(id)).toEqual([]);
    expect(await accountAtBank(account)).toBeNull();
    // Fenced for good: the same transfer arriving at the bank now, within a deadline, is refused and moves nothing.
    const again = { operationId: id, amount: 1_000_000, bankMfo: MFO, accountNumber: account, tin: '301234567', holderName: 'Chorsu Market LLC' };
    expect(await gateway(live.sim, '/v1/transfers', { ...again, deadline: new Date(Date.now() + 60_000).toISOString() })).toEqual({ result: 'refused', code: 'FENCED' });
    expect(await atBank(id)).toEqual([]);
    expect(await accountAtBank(account)).toBeNull();
  });

  it('every fault at random, payouts sent at once: each ends as the bank has it, each transfer executed at most once', async () => {
    const account = await useAccount('0001');
    const before = { available: await available(), credited: (await accountAtBank(account)) ?? 0 };
    const amounts = [110_000, 120_000, 130_000, 140_000, 150_000, 160_000, 170_000, 180_000];
    const ids: string[] = [];
    for (const amount of amounts) ids.push(await createPayout(amount));
    await setFaults(live.sim, { dropAfterCommitRate: 0.3, ambiguousRate: 0.3, timeoutRate: 0.3, errorRate: 0.2 });
    try {
      await Promise.all(ids.map((id) => live.service.payouts.send(id)));
    } finally {
      await setFaults(live.sim, {});
    }
    await reconcileNow(live.service);
    const finals = await Promise.all(ids.map(async (id) => (await payout(id)).status as string));
    const bank = await Promise.all(ids.map(async (id) => (await atBank(id)).map((row) => row.status)));
    // PAID exactly when the bank executed it (once); FAILED exactly when it never did, and never will.
    expect(ids.map((id, index) => [id, finals[index]])).toEqual(ids.map((id, index) => [id, bank[index]!.length === 1 ? 'PAID' : 'FAILED']));
    expect(bank.every((rows) => rows.length === 0 || (rows.length === 1 && rows[0] === 'SUCCEEDED'))).toBe(true);
    const paid = amounts.filter((_, index) => finals[index] === 'PAID').reduce((sum, amount) => sum + amount, 0);
    expect(await accountAtBank(account)).toBe(before.credited + paid);
    expect(await available()).toBe(before.available - paid);
  });
});

describe('a live payout to a bank slower than the call window', () => {
  it('is fenced, FAILED with its amount back, and the bank never executes it late', async () => {
    const account = await useAccount('0005');
    const before = await available();
    const fencedFirst = await createPayout(400_000);
    const deadlineFirst = await createPayout(500_000);
    await setFaults(live.sim, { moneyLatencyMs: BANK_MONEY_LATENCY_MS });
    let sentAt: number;
    try {
      sentAt = Date.now();
      await Promise.all([live.service.payouts.send(fencedFirst), live.service.payouts.send(deadlineFirst)]);
    } finally {
      await setFaults(live.sim, {});
    }
    expect([(await payout(fencedFirst)).status, (await payout(deadlineFirst)).status]).toEqual(['IN_TRANSIT', 'IN_TRANSIT']);
    // One is reconciled at once, while its calls still sleep at the bank: fenced before the bank wakes.
    await live.service.db.query(`UPDATE payouts SET next_attempt_at = now() + interval '1 hour' WHERE id = $1`, [deadlineFirst]);
    await live.service.db.query(`UPDATE payouts SET next_attempt_at = now() - interval '1 second' WHERE id = $1`, [fencedFirst]);
    await live.service.payouts.reconcile(100);
    expect(await payout(fencedFirst)).toMatchObject({ status: 'FAILED', failureCode: 'PROCESSING_ERROR' });
    expect(Date.now() - sentAt).toBeLessThan(BANK_MONEY_LATENCY_MS);
    expect(await available()).toBe(before - 500_000);

    // Every call has woken at the bank by now: the fenced one found its fence, the other its deadline passed.
    await sleep(Math.max(0, sentAt + CALL_WINDOW_MS + BANK_MONEY_LATENCY_MS + 500 - Date.now()));
    expect(await atBank(fencedFirst)).toEqual([]);
    expect(await atBank(deadlineFirst)).toEqual([]);
    const listed = (await listedByBank()).map((operation) => operation.operationId);
    expect(listed).not.toContain(fencedFirst);
    expect(listed).not.toContain(deadlineFirst);
    expect(await accountAtBank(account)).toBeNull();

    await live.service.db.query(`UPDATE payouts SET next_attempt_at = now() - interval '1 second' WHERE id = $1`, [deadlineFirst]);
    await live.service.payouts.reconcile(100);
    expect(await payout(deadlineFirst)).toMatchObject({ status: 'FAILED', failureCode: 'PROCESSING_ERROR' });
    expect(await available()).toBe(before);
    expect(await atBank(deadlineFirst)).toEqual([]);
    expect(await accountAtBank(account)).toBeNull();
  });
});

describe("the reconciliation report's transfers", () => {
  it('compares every payout sent today with the bank: none mismatches after all of the above, and a lost transfer shows', async () => {
    const clean = await report();
    expect(clean).toMatchObject({ object: 'reconciliation_report', mode: 'live', date: today(), truncated: false, mismatches: [] });
    const [sent] = await live.service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payouts WHERE livemode AND sent_at IS NOT NULL');
    const [debits] = await live.service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payment_intents WHERE livemode');
    const [atSim] = await live.sim.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sim_operations');
    expect(clean.compared).toEqual({ tolov: sent!.n + debits!.n, bank: atSim!.n });
    expect((await listedByBank()).filter((operation) => operation.type === 'transfer').length).toBeGreaterThanOrEqual(5);

    // A PAID payout whose transfer the bank does not have is Tolov counting money the bank never moved.
    const [paid] = await live.service.db.query<{ id: string; amount: number }>(`SELECT id, amount::int AS amount FROM payouts WHERE livemode AND status = 'PAID' LIMIT 1`);
    const [row] = await live.sim.db.query<Record<string, unknown>>('DELETE FROM sim_operations WHERE operation_id = $1 RETURNING *', [paid!.id]);
    try {
      expect((await report()).mismatches).toEqual([
        { operationId: paid!.id, type: 'transfer', problem: 'missing_at_bank', tolov: { status: 'SUCCEEDED', amount: paid!.amount }, bank: null },
      ]);
    } finally {
      await live.sim.db.query(
        'INSERT INTO sim_operations (operation_id, type, token, amount, status, failure_code, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [row!.operation_id, row!.type, row!.token, row!.amount, row!.status, row!.failure_code, row!.created_at],
      );
    }
    expect((await report()).mismatches).toEqual([]);
  });
});
