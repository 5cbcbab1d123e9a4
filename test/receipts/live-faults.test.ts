// Live receipts while the fiscal gateway misbehaves: down (5xx, then not even listening) and back, or answering
// ambiguously after it registered. Every receipt ends FISCALIZED, registered exactly once at the simulator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem } from '../support/harness.js';
import { bindLiveCard, fiscalizeNow, fiscalizeUntilSettled, setFaults, simCalls, simReceipts, startLive, type Live } from '../support/live.js';
import { receiptFor } from '../support/receipts.js';

const REGISTER = '/v1/receipts/register';
const STATUS = '/v1/receipts/status';

let live: Live;
let card: string;
beforeAll(async () => {
  // Ten attempts: the outages below never spend the schedule.
  live = await startLive({ TOLOV_LIVE_RAIL_TIMEOUT_MS: '300', TOLOV_WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1,1' }, { receiptRequired: true });
  card = await bindLiveCard(live, '8600000000000007');
});
afterAll(() => live.stop());

const post = (url: string, body: Record<string, unknown>) => live.service.call({ method: 'POST', url, key: live.merchant.live, idempotencyKey: idem(), body });

/** Pays `amount` with lines; returns the sale receipt's id. */
async function paidReceipt(amount: number): Promise<{ paymentIntent: string; receipt: string }> {
  const paid = await post('/subscribe/v1/charges', { amount, card, receipt: receiptFor(amount) });
  expect(paid.body.status, paid.text).toBe('SUCCEEDED');
  return { paymentIntent: paid.body.id, receipt: paid.body.receipt };
}

/** Each receipt's status, keyed by id. */
const statusesOf = async (ids: string[]) =>
  Object.fromEntries((await live.service.db.query<{ id: string; status: string }>('SELECT id, status FROM receipts WHERE id = ANY($1)', [ids])).map((row) => [row.id, row.status]));
const all = (ids: string[], status: string) => Object.fromEntries(ids.map((id) => [id, status]));

/** Each receipt FISCALIZED with the one registration the simulator holds for its id. */
async function expectEachRegisteredOnce(ids: string[]): Promise<void> {
  const registered = (await simReceipts(live.sim)).filter((receipt) => ids.includes(receipt.id));
  expect(registered.map((receipt) => receipt.id).sort()).toEqual([...ids].sort());
  const ours = await live.service.db.query<{ id: string; status: string; receipt_number: string; fiscal_sign: string }>(
    'SELECT id, status, receipt_number, fiscal_sign FROM receipts WHERE id = ANY($1)',
    [ids],
  );
  const theirs = new Map(registered.map((receipt) => [receipt.id, receipt]));
  for (const row of ours) {
    expect({ id: row.id, status: row.status, receiptNumber: row.receipt_number, fiscalSign: row.fiscal_sign }).toEqual({
      id: row.id,
      status: 'FISCALIZED',
      receiptNumber: theirs.get(row.id)!.receiptNumber,
      fiscalSign: theirs.get(row.id)!.fiscalSign,
    });
  }
}

describe('the fiscal gateway down for a while, then back', () => {
  it('keeps sales and returns PENDING through 5xx answers and a closed port, then fiscalizes each once', async () => {
    const sales = [await paidReceipt(11_000), await paidReceipt(12_000), await paidReceipt(13_000)];
    const refund = await post('/v1/refunds', { paymentIntent: sales[0]!.paymentIntent });
    expect(refund.body.status).toBe('SUCCEEDED');
    const ids = [...sales.map((sale) => sale.receipt), refund.body.receipt as string];

    // The sales are tried, the return waits for its sale; nothing is final while the schedule lasts.
    await setFaults(live.sim, { errorRate: 1 });
    for (let round = 0; round < 2; round++) expect(await fiscalizeNow(live.service)).toBeGreaterThanOrEqual(3);
    expect(await statusesOf(ids)).toEqual(all(ids, 'PENDING'));
    await live.stopSim();
    for (let round = 0; round < 2; round++) expect(await fiscalizeNow(live.service)).toBeGreaterThanOrEqual(3);
    expect(await statusesOf(ids)).toEqual(all(ids, 'PENDING'));
    // Back on its data, still answering 5xx until its faults clear: it registered none of them.
    await live.startSim();
    expect((await simReceipts(live.sim)).filter((receipt) => ids.includes(receipt.id))).toEqual([]);

    await setFaults(live.sim, {});
    await fiscalizeUntilSettled(live.service, ids);
    await expectEachRegisteredOnce(ids);
    expect(await fiscalizeNow(live.service)).toBe(0);
  });
});

describe('ambiguous answers after the registration committed', () => {
  it.each([
    ['202 pending', { ambiguousRate: 1 }],
    ['the connection dropped', { dropAfterCommitRate: 1 }],
  ])('%s: the next attempt asks status and never registers again', async (_label, faults) => {
    const { receipt } = await paidReceipt(21_000);
    await setFaults(live.sim, faults);
    try {
      const registerCalls = simCalls(live.sim, REGISTER);
      expect(await fiscalizeNow(live.service)).toBe(1);
      // Registered at the first call; its answer, and those of the two repeats under the same id, were unclear.
      expect(await statusesOf([receipt])).toEqual({ [receipt]: 'PENDING' });
      expect(simCalls(live.sim, REGISTER) - registerCalls).toBe(3);
      expect((await simReceipts(live.sim)).filter((registered) => registered.id === receipt)).toHaveLength(1);

      const statusCalls = simCalls(live.sim, STATUS);
      expect(await fiscalizeNow(live.service)).toBe(1);
      expect(simCalls(live.sim, STATUS) - statusCalls).toBe(1);
      expect(simCalls(live.sim, REGISTER) - registerCalls).toBe(3);
      await expectEachRegisteredOnce([receipt]);
    } finally {
      await setFaults(live.sim, {});
    }
  });
});
