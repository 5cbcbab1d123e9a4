// A live charge waits on the bank holding nothing of the database: while the bank has taken a thousand charges and
// answered none, every one of them is at the bank at once (the service has ten connections on PostgreSQL, one session
// embedded), other requests are served, and once the bank answers, each charge succeeds exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine } from '../support/harness.js';
import { bindLiveCard, liveCharge, startLive, type Live } from '../support/live.js';

const CHARGES = 1_000;
const AMOUNT = 10_000;

let live: Live;
beforeAll(async () => {
  // The bank holds the calls for as long as the charges take to reach it: the call's timeout must outlast that.
  live = await startLive({ TOLOV_LIVE_RAIL_TIMEOUT_MS: '60000' });
});
afterAll(() => live.stop());

describe('a thousand live charges waiting on the bank at once', () => {
  it('are all at the bank together, leave the database to others, and each succeeds once when the bank answers', async () => {
    const { service, sim, merchant } = live;
    const card = await bindLiveCard(live, '8600000000000007');
    const answerAll = sim.holdMoneyCalls();
    let charges: ReturnType<typeof liveCharge>[];
    try {
      charges = Array.from({ length: CHARGES }, () => liveCharge(live, card, AMOUNT));
      // Within the calls' 60 s timeout, so that none has given up before the last arrives.
      await expect.poll(() => sim.moneyCalls.inFlight, { timeout: 50_000, interval: 100 }).toBe(CHARGES);
      // Ten connections, none of them waited for.
      if (engine === 'postgres') expect(service.db.poolState?.()).toMatchObject({ max: 10, waiting: 0 });
      // A thousand charges wait on the bank; the database answers a read and a write meanwhile.
      expect((await service.call({ method: 'GET', url: '/v1/balance', key: merchant.live })).status).toBe(200);
      expect((await service.call({ method: 'POST', url: '/subscribe/v1/card_bindings', key: merchant.live, body: {} })).status).toBe(201);
    } finally {
      answerAll();
    }
    const replies = await Promise.all(charges);
    const outcomes = replies.map((reply) => `${reply.status} ${reply.body.status}`);
    expect(new Set(outcomes)).toEqual(new Set(['201 SUCCEEDED']));
    expect(new Set(replies.map((reply) => reply.body.id)).size).toBe(CHARGES);

    const [bank] = await sim.db.query<{ debits: number; amount: number }>(
      `SELECT count(*)::int AS debits, coalesce(sum(amount), 0)::int AS amount FROM sim_operations WHERE type = 'debit' AND status = 'SUCCEEDED'`,
    );
    expect(bank).toEqual({ debits: CHARGES, amount: CHARGES * AMOUNT });
    const balance = (await service.call({ method: 'GET', url: '/v1/balance', key: merchant.live })).body;
    const net = AMOUNT - replies[0]!.body.fee;
    expect(balance.pending).toBe(CHARGES * net);
    expect(sim.moneyCalls).toEqual({ inFlight: 0, inFlightMax: CHARGES });
  }, 240_000);
});
