// Two-step payments in live mode against the bank simulator: the bank holds, captures (part of) and releases the
// money on the card; and Tolov killed (-9) while a capture and a release sleep at the bank leaves, after a restart and
// reconciliation, each hold ended once, with Tolov's statuses and the bank's the same.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startBankSim, type BankSim } from '../../bank-sim/sim.js';
import { ADMIN_TOKEN } from '../support/harness.js';
import { setFaults, SIM_SECRET } from '../support/live.js';
import { apiCaller, json, killAll, restartedAgainst, shopWithCard, startMain, type Started } from '../support/process.js';
import { waitFor } from '../support/wait.js';

afterAll(killAll);

const BANK_MONEY_LATENCY_MS = 3_000;
const CARD = '8600000000000007';

/** The simulated card's balance: a hold takes the amount off it until the hold ends. */
const cardBalance = async (sim: BankSim) =>
  Number((await sim.db.query<{ balance: string }>(`SELECT balance::text FROM sim_cards WHERE last4 = $1 AND network = 'uzcard'`, [CARD.slice(-4)]))[0]!.balance);
/** The ends the bank executed for a hold. */
const endsAtBank = (sim: BankSim, holdId: string) =>
  sim.db.query<{ type: string; amount: number; status: string }>(`SELECT type, amount::int, status FROM sim_operations WHERE hold_operation_id = $1`, [holdId]);

describe('two-step payments at the bank simulator', () => {
  it('holds, captures part and releases on the card; a kill -9 during a capture and a release leaves each hold ended once', async () => {
    const simDir = await mkdtemp(join(tmpdir(), 'tolov-holds-bank-'));
    const sim = await startBankSim({ dataDir: simDir, secret: SIM_SECRET, port: 0, log: false });
    const env = await restartedAgainst(sim, SIM_SECRET);
    let server: Started = await startMain(env);
    try {
      const call = apiCaller(() => server);
      const { key, card } = await shopWithCard(server.url, { name: 'Rental shop', receiptRequired: false, feeBps: 0 }, sim);
      const hold = async (amount: number, name: string) => {
        const reply = await call('POST', '/subscribe/v1/charges', key, { amount, card, capture: 'manual' }, name);
        expect(reply.body).toMatchObject({ status: 'REQUIRES_CAPTURE', amountCapturable: amount, livemode: true });
        return reply.body.id as string;
      };

      const before = await cardBalance(sim);
      const partial = await hold(100_000, 'hold-partial');
      const released = await hold(50_000, 'hold-released');
      expect(await cardBalance(sim)).toBe(before - 150_000);
      expect((await call('POST', `/subscribe/v1/charges/${partial}/capture`, key, { amount: 70_000 }, 'capture-partial')).body).toMatchObject({ status: 'SUCCEEDED', amount: 70_000 });
      expect((await call('POST', `/subscribe/v1/charges/${released}/cancel`, key)).body).toMatchObject({ status: 'CANCELED' });
      expect(await cardBalance(sim)).toBe(before - 70_000);
      expect(await endsAtBank(sim, partial)).toEqual([{ type: 'capture', amount: 70_000, status: 'SUCCEEDED' }]);

      // The bank now sleeps in every money call; Tolov is killed while a capture and a release sleep there.
      const toCapture = await hold(30_000, 'hold-a');
      const toRelease = await hold(20_000, 'hold-b');
      await setFaults(sim, { moneyLatencyMs: BANK_MONEY_LATENCY_MS });
      const requests = [
        { path: `/subscribe/v1/charges/${toCapture}/capture`, body: {}, idempotencyKey: 'slow-capture', hold: toCapture },
        { path: `/subscribe/v1/charges/${toRelease}/cancel`, body: {}, idempotencyKey: 'slow-release', hold: toRelease },
      ];
      const inFlight = requests.map((request) => call('POST', request.path, key, request.body, request.idempotencyKey).catch(() => null));
      await new Promise((resolve) => setTimeout(resolve, 400));
      server.child.kill('SIGKILL');
      await server.exited;
      await Promise.all(inFlight);
      await setFaults(sim, { moneyLatencyMs: 0 });

      server = await startMain(env);
      // Each client retries its key until it is answered: with the end's state, or, once reconciliation has fenced an
      // end the bank never executed, with its refusal (402): the bank is not called again under that key.
      for (const request of requests) {
        const answered = async () => [200, 402].includes((await call('POST', request.path, key, request.body, request.idempotencyKey)).status) || null;
        await waitFor(answered, 30_000, `${request.idempotencyKey} answered`);
      }
      const finals = await waitFor(async () => {
        const statuses = await Promise.all(requests.map(async (request) => (await call('GET', `/subscribe/v1/charges/${request.hold}`, key)).body.status as string));
        return statuses.includes('PROCESSING') ? null : statuses;
      }, 30_000, 'every end settled');
      // Every call sleeping at the bank has woken by now, and found its deadline passed or its fence.
      await new Promise((resolve) => setTimeout(resolve, BANK_MONEY_LATENCY_MS + 500));
      const captureEnds = (await endsAtBank(sim, toCapture)).filter((row) => row.status === 'SUCCEEDED');
      const releaseEnds = (await endsAtBank(sim, toRelease)).filter((row) => row.status === 'SUCCEEDED');
      // A capture the bank never executed left the hold in place (REQUIRES_CAPTURE); one it executed is a payment.
      expect([finals[0], captureEnds.length]).toEqual(finals[0] === 'SUCCEEDED' ? ['SUCCEEDED', 1] : ['REQUIRES_CAPTURE', 0]);
      expect([finals[1], releaseEnds.length]).toEqual(finals[1] === 'CANCELED' ? ['CANCELED', 1] : ['REQUIRES_CAPTURE', 0]);
      // Off the card: the first capture, the second hold (captured or still held), and the third unless released.
      expect(await cardBalance(sim)).toBe(before - 70_000 - 30_000 - (finals[1] === 'CANCELED' ? 0 : 20_000));

      const report = await json(`${server.url}/admin/v1/reconciliation?date=${new Date().toISOString().slice(0, 10)}&mode=live`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(report.body.mismatches).toEqual([]);
      expect(report.body.compared.bank).toBeGreaterThanOrEqual(6);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    } finally {
      await sim.close();
      await rm(simDir, { recursive: true, force: true });
    }
  }, 120_000);
});
