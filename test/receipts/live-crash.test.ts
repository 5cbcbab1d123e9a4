// Tolov killed (-9) with live receipts on their way to the fiscal gateway: between a payment (or refund) and its fiscal
// call, and during the call while the simulator sleeps on it, both before and past the call's deadline. After each
// restart, every payment and refund has exactly one FISCALIZED receipt, registered exactly once at the simulator, and
// the reconciliation report finds nothing to say until a side is corrupted.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SIM_PHONE } from '../../bank-sim/bank.js';
import { startBankSim, type BankSim } from '../../bank-sim/sim.js';
import { ADMIN_TOKEN, engine } from '../support/harness.js';
import { setFaults, simCalls, simReceipts, SIM_SECRET } from '../support/live.js';
import { json, killAll, processStorage, startMain, type Started } from '../support/process.js';
import { receiptFor } from '../support/receipts.js';
import { waitFor } from '../support/wait.js';

afterAll(killAll);

const REGISTER = '/v1/receipts/register';
/** The first attempt waits 3 s after the payment: time to kill Tolov before it. */
const RETRY_SCHEDULE = '3,1,1,1,1,1,1,1';
/** Each call attempt waits 300 ms to connect and 300 ms for the answer: the call window (the deadline) is 2.3 s. */
const RAIL_TIMEOUT_MS = '300';
/** Asleep at the simulator for less than the deadline: the call registers while Tolov is dead. */
const WITHIN_DEADLINE_MS = 1_500;
/** Asleep past the deadline: the call registers nothing, and the next process registers afresh. */
const PAST_DEADLINE_MS = 6_000;
/**
 * A restarted process takes a live receipt leased by the dead one once its lease has passed: three call windows of the
 * live module and 5 s, 11.9 s in all (a test receipt's, at the test module's 15 s windows, would be 50 s).
 */
const SETTLE_TIMEOUT_MS = 30_000;

interface Shop {
  env: Record<string, string>;
  server: Started;
  /** The live key, once the product is made with the operator token. */
  key: string;
  card: string;
}

const call = (shop: Shop, method: 'GET' | 'POST', path: string, body?: unknown, idempotencyKey?: string) =>
  json(`${shop.server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${shop.key}`, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** A live card bound through the hosted capture calls, with the code the simulator sent. */
async function bindCard(shop: Shop, sim: BankSim): Promise<string> {
  const binding = await call(shop, 'POST', '/subscribe/v1/card_bindings', {}, 'bind');
  await call(shop, 'POST', `/checkout/v1/sessions/${binding.body.clientToken}/card`, { pan: '8600000000000007', expiry: '12/30', phone: SIM_PHONE });
  const sms = (await json(`${sim.url}/sim/v1/sms?phone=${SIM_PHONE}`)).body.code as string;
  await call(shop, 'POST', `/checkout/v1/sessions/${binding.body.clientToken}/code`, { code: sms });
  return (await call(shop, 'GET', `/subscribe/v1/card_bindings/${binding.body.id}`)).body.card as string;
}

const waitFiscalized = (shop: Shop, receipt: string) =>
  waitFor(async () => ((await call(shop, 'GET', `/v1/receipts/${receipt}`)).body.status === 'FISCALIZED' ? true : null), SETTLE_TIMEOUT_MS, `${receipt} FISCALIZED`);

/** Kills the process as soon as a registration call has reached the simulator; returns the register calls by then. */
async function killDuringRegistration(shop: Shop, sim: BankSim, before: number): Promise<number> {
  // Polled often: Tolov repeats an unanswered call within 100 ms of its 300 ms timeout.
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  while (simCalls(sim, REGISTER) === before) {
    if (Date.now() > deadline) throw new Error('no registration call reached the simulator');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  shop.server.child.kill('SIGKILL');
  await shop.server.exited;
  return simCalls(sim, REGISTER);
}

/** A live charge with lines; its payment and sale receipt. */
async function pay(shop: Shop, amount: number) {
  const paid = await call(shop, 'POST', '/subscribe/v1/charges', { amount, card: shop.card, receipt: receiptFor(amount) }, `pay-${amount}`);
  expect(paid.body.status).toBe('SUCCEEDED');
  return { paymentIntent: paid.body.id as string, receipt: paid.body.receipt as string };
}

/** A refund of the payment; its return receipt. */
async function refund(shop: Shop, paymentIntent: string): Promise<string> {
  const refunded = await call(shop, 'POST', '/v1/refunds', { paymentIntent }, `refund-${paymentIntent}`);
  expect(refunded.body.status).toBe('SUCCEEDED');
  return refunded.body.receipt as string;
}

/** Tolov as its own process, against the simulator as bank and fiscal gateway, with a live merchant and its card. */
async function openShop(sim: BankSim, dir: string): Promise<Shop> {
  const env = {
    ...(engine === 'pglite' ? { TOLOV_DATA_DIR: dir } : await processStorage()),
    TOLOV_LIVE_RAIL_URL: sim.url,
    TOLOV_LIVE_RAIL_SECRET: SIM_SECRET,
    TOLOV_LIVE_FISCAL_URL: sim.url,
    TOLOV_LIVE_FISCAL_SECRET: SIM_SECRET,
    TOLOV_LIVE_RAIL_TIMEOUT_MS: RAIL_TIMEOUT_MS,
    TOLOV_WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE,
    LOG_LEVEL: 'warn',
  };
  const shop: Shop = { env, server: await startMain(env), key: ADMIN_TOKEN, card: '' };
  const product = await call(shop, 'POST', '/admin/v1/products', { name: 'Receipts shop' });
  expect(product.body.receiptRequired).toBe(true);
  shop.key = product.body.keys.live as string;
  shop.card = await bindCard(shop, sim);
  return shop;
}

describe('kill -9 of Tolov around the fiscal call', () => {
  it('leaves exactly one FISCALIZED receipt per payment and per refund, registered once, and a clean report', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tolov-receipts-crash-'));
    const simDir = await mkdtemp(join(tmpdir(), 'tolov-receipts-crash-bank-'));
    const sim = await startBankSim({ dataDir: simDir, secret: SIM_SECRET, port: 0, log: false });
    try {
      const shop = await openShop(sim, dir);
      // Between the money and the fiscal call: a sale and a return written, their first attempt 3 s away.
      const first = await pay(shop, 10_000);
      await waitFiscalized(shop, first.receipt);
      const second = await pay(shop, 20_000);
      const firstReturn = await refund(shop, first.paymentIntent);
      shop.server.child.kill('SIGKILL');
      await shop.server.exited;
      expect(simCalls(sim, REGISTER), 'only the first sale was ever sent').toBe(1);
      shop.server = await startMain(shop.env);
      await waitFiscalized(shop, second.receipt);
      await waitFiscalized(shop, firstReturn);

      // During the call, within its deadline: the sleeping call registers while Tolov is dead; the next asks status.
      const secondReturn = await refund(shop, second.paymentIntent);
      await setFaults(sim, { moneyLatencyMs: WITHIN_DEADLINE_MS });
      const registerCalls = await killDuringRegistration(shop, sim, simCalls(sim, REGISTER));
      shop.server = await startMain(shop.env);
      await waitFiscalized(shop, secondReturn);
      expect(simCalls(sim, REGISTER), 'the restarted process registered nothing again').toBe(registerCalls);

      // During the call, past its deadline: nothing registers it but the next process, afresh.
      await setFaults(sim, {});
      const third = await pay(shop, 30_000);
      await setFaults(sim, { moneyLatencyMs: PAST_DEADLINE_MS });
      const callsAtKill = await killDuringRegistration(shop, sim, simCalls(sim, REGISTER));
      await setFaults(sim, {});
      shop.server = await startMain(shop.env);
      await waitFiscalized(shop, third.receipt);
      expect(simCalls(sim, REGISTER), 'registered afresh, the late calls having found their deadline passed').toBeGreaterThan(callsAtKill);

      const expected = [
        [first.receipt, 'sale', 10_000],
        [firstReturn, 'return', 10_000],
        [second.receipt, 'sale', 20_000],
        [secondReturn, 'return', 20_000],
        [third.receipt, 'sale', 30_000],
      ] as const;
      await expectOneEach(shop, sim, expected, [first, second, third]);
      await expectReport(shop, sim, third.receipt);
      shop.server.child.kill('SIGTERM');
      expect(await shop.server.exited).toBe(0);
    } finally {
      await sim.close();
      await rm(dir, { recursive: true, force: true });
      await rm(simDir, { recursive: true, force: true });
    }
  }, 400_000);
});

/** The simulator registered each receipt once, as Tolov shows it; each payment has one sale, each refund one return. */
async function expectOneEach(
  shop: Shop,
  sim: BankSim,
  expected: ReadonlyArray<readonly [string, 'sale' | 'return', number]>,
  payments: Array<{ paymentIntent: string }>,
): Promise<void> {
  const ids = expected.map(([id]) => id);
  const registered = (await simReceipts(sim)).filter((receipt) => ids.includes(receipt.id));
  expect(registered.map(({ id, type, amount }) => [id, type, amount]).sort()).toEqual(expected.map((entry) => [...entry]).sort());
  for (const receipt of registered) {
    const ours = (await call(shop, 'GET', `/v1/receipts/${receipt.id}`)).body;
    expect(ours).toMatchObject({ status: 'FISCALIZED', terminalId: receipt.terminalId, receiptNumber: receipt.receiptNumber, fiscalSign: receipt.fiscalSign });
  }
  const types = await Promise.all(
    payments.map(async ({ paymentIntent }) => (await call(shop, 'GET', `/v1/receipts?paymentIntent=${paymentIntent}`)).body.data.map((r: { type: string; status: string }) => `${r.type}:${r.status}`)),
  );
  expect(types).toEqual([
    ['return:FISCALIZED', 'sale:FISCALIZED'],
    ['return:FISCALIZED', 'sale:FISCALIZED'],
    ['sale:FISCALIZED'],
  ]);
}

/** No mismatch of money or receipts; then one, once the simulator "forgets" a registration. */
async function expectReport(shop: Shop, sim: BankSim, forgotten: string): Promise<void> {
  const report = async () => (await call({ ...shop, key: ADMIN_TOKEN }, 'GET', `/admin/v1/reconciliation?date=${new Date().toISOString().slice(0, 10)}`)).body;
  const clean = await report();
  expect(clean.mismatches).toEqual([]);
  expect(clean.receipts).toEqual({ compared: { tolov: 5, fiscal: 5 }, truncated: false, mismatches: [], error: null });
  await sim.db.query('DELETE FROM sim_receipts WHERE receipt_id = $1', [forgotten]);
  expect((await report()).receipts.mismatches).toEqual([{ receiptId: forgotten, problem: 'missing_at_fiscal', tolov: { type: 'sale', amount: 30_000 }, fiscal: null }]);
}
