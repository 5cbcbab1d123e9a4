import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIM_PHONE } from '../../bank-sim/bank.js';
import { startBankSim, type BankSim } from '../../bank-sim/sim.js';
import { gatewaySignature, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../src/rails/protocol.js';
import { idem, startService, type Merchant, type TestService } from './harness.js';

export const SIM_SECRET = 'bank-sim-test-secret';

export interface Live {
  sim: BankSim;
  service: TestService;
  merchant: Merchant;
  /** Stops the simulator and starts it again on the same data, as a crash and restart of the bank would. */
  restartSim(): Promise<void>;
  /** Stops the simulator: nothing answers on its port until `startSim`. */
  stopSim(): Promise<void>;
  /** Starts the simulator again on its data and port, with the faults it had. */
  startSim(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Tolov in live mode against a bank simulator of its own (its own folder, its own port), which is its fiscal gateway
 * too. The merchant fiscalizes its sales itself unless `receiptRequired`: most live tests are about money, and
 * test/receipts/live-*.test.ts cover live receipts.
 */
export async function startLive(env: Record<string, string> = {}, options: { receiptRequired?: boolean } = {}): Promise<Live> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tolov-bank-sim-'));
  let sim = await startBankSim({ dataDir, secret: SIM_SECRET, port: 0, log: false });
  const port = new URL(sim.url).port;
  const service = await startService({
    TOLOV_LIVE_RAIL_URL: sim.url,
    TOLOV_LIVE_RAIL_SECRET: SIM_SECRET,
    TOLOV_LIVE_FISCAL_URL: sim.url,
    TOLOV_LIVE_FISCAL_SECRET: SIM_SECRET,
    ...env,
  });
  const merchant = await service.createMerchant({ name: 'Live shop', feeBps: 100, receiptRequired: options.receiptRequired ?? false });
  let faults = sim.faults;
  const live: Live = {
    sim,
    service,
    merchant,
    async restartSim() {
      await live.stopSim();
      await live.startSim();
    },
    async stopSim() {
      faults = live.sim.faults;
      await live.sim.close();
    },
    async startSim() {
      sim = await startBankSim({ dataDir, secret: SIM_SECRET, port: Number(port), log: false, faults });
      live.sim = sim;
    },
    async stop() {
      await service.stop();
      await live.sim.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return live;
}

/** The last SMS code the simulator sent to the phone. */
export async function lastCode(sim: BankSim): Promise<string> {
  const response = await fetch(`${sim.url}/sim/v1/sms?phone=${SIM_PHONE}`);
  return ((await response.json()) as { code: string }).code;
}

/** Binds a live card through the public calls, with the SMS code the bank sent. */
export async function bindLiveCard(live: Live, pan: string): Promise<string> {
  const { service, merchant, sim } = live;
  const binding = (await service.call({ method: 'POST', url: '/subscribe/v1/card_bindings', key: merchant.live, body: {} })).body;
  const card = await service.call({ method: 'POST', url: `/checkout/v1/sessions/${binding.clientToken}/card`, body: { pan, expiry: '12/30', phone: SIM_PHONE } });
  if (card.status !== 200) throw new Error(`card refused: ${card.text}`);
  const code = await service.call({ method: 'POST', url: `/checkout/v1/sessions/${binding.clientToken}/code`, body: { code: await lastCode(sim) } });
  if (code.status !== 200) throw new Error(`code refused: ${code.text}`);
  return (await service.call({ method: 'GET', url: `/subscribe/v1/card_bindings/${binding.id}`, key: merchant.live })).body.card;
}

export const liveCharge = (live: Live, card: string, amount: number, key = idem()) =>
  live.service.call({ method: 'POST', url: '/subscribe/v1/charges', key: live.merchant.live, idempotencyKey: key, body: { amount, card } });

export async function setFaults(sim: BankSim, faults: Record<string, number>): Promise<void> {
  const response = await fetch(`${sim.url}/sim/v1/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(faults) });
  if (response.status !== 200) throw new Error(`faults refused: ${await response.text()}`);
}

/** Makes every PENDING receipt due now (skipping the schedule's wait and any lease) and runs one fiscalization batch. */
export async function fiscalizeNow(service: TestService): Promise<number> {
  await service.db.query(`UPDATE receipts SET next_attempt_at = now() WHERE status = 'PENDING'`);
  return service.receipts.fiscalizeDue(100);
}

/** Runs `fiscalizeNow` until none of `ids` is PENDING, at most `roundsMax` times; returns how many rounds it took. */
export async function fiscalizeUntilSettled(service: TestService, ids: string[], roundsMax = 30): Promise<number> {
  for (let round = 1; round <= roundsMax; round++) {
    await fiscalizeNow(service);
    const [{ pending }] = (await service.db.query<{ pending: number }>(
      `SELECT count(*)::int AS pending FROM receipts WHERE id = ANY($1) AND status = 'PENDING'`,
      [ids],
    )) as [{ pending: number }];
    if (pending === 0) return round;
  }
  throw new Error(`receipts still PENDING after ${roundsMax} rounds of fiscalization`);
}

export interface SimReceipt {
  id: string;
  type: 'sale' | 'return';
  amount: number;
  terminalId: string;
  receiptNumber: string;
  fiscalSign: string;
  registeredAt: string;
}

/** What the simulator registered, newest first: the ground truth of live receipts. */
export async function simReceipts(sim: BankSim, limit = 10_000): Promise<SimReceipt[]> {
  const response = await fetch(`${sim.url}/sim/v1/receipts?limit=${limit}`);
  return ((await response.json()) as { data: SimReceipt[] }).data;
}

/** Signed calls the simulator received at `path` so far. */
export const simCalls = (sim: BankSim, path: string) => sim.calls.get(path) ?? 0;

/** A signed gateway call to the simulator, as Tolov makes it; the answer's body. */
export async function gateway(sim: BankSim, path: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const text = JSON.stringify(body);
  const timestamp = Math.floor(Date.now() / 1000);
  const response = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [TIMESTAMP_HEADER]: String(timestamp), [SIGNATURE_HEADER]: gatewaySignature(SIM_SECRET, timestamp, text) },
    body: text,
  });
  return (await response.json()) as Record<string, unknown>;
}
