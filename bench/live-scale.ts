// Live mode at scale: POST charge from many clients at once against the bank simulator, which answers every money call
// after a fixed latency. A charge waiting on the bank holds no database connection, so the rate is the clients' number
// over the bank's latency, or what the machine's CPU carries, whichever is lower; each charge in flight costs memory.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIM_PHONE } from '../bank-sim/bank.js';
import { bindCard, fetchCaller } from './calls.js';
import { addressPrinted, stopChild } from './child-process.js';

const SIM_SECRET = 'bench-bank-secret';
/** How often the service's memory and the bank's calls in flight are read during the load. */
const SAMPLE_MS = 250;
/** The first samples are the load's ramp-up, when the clients' first requests have not all arrived yet. */
const RAMP_UP_MS = 1_000;
/** Clients of the warm-up that precedes the idle reading: enough to compile the code paths, too few to grow the heap. */
const WARMUP_CLIENTS = 8;
/** A charge's answer is long in coming when the machine's CPU, not the bank, sets the rate. */
const ANSWER_TIMEOUT_SECONDS = 60;

export interface Bank {
  url: string;
  pid: number;
  /** The service's settings that point its live mode at this bank. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** The bank simulator as its own process (`npm run bank-sim`), on a fresh folder, answering money calls after `latencyMs`. */
export async function startBank(latencyMs: number): Promise<Bank> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tolov-bench-bank-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'bank-sim/main.ts'], {
    env: { PATH: process.env.PATH, BANK_SIM_SECRET: SIM_SECRET, BANK_SIM_PORT: '0', BANK_SIM_DATA_DIR: dataDir, BANK_SIM_FAULTS: JSON.stringify({ moneyLatencyMs: latencyMs }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await addressPrinted(child, /bank-sim listening on (http:\/\/\S+)/, 'bank-sim');
  const env = { TOLOV_LIVE_RAIL_URL: url, TOLOV_LIVE_RAIL_SECRET: SIM_SECRET, TOLOV_LIVE_FISCAL_URL: url, TOLOV_LIVE_FISCAL_SECRET: SIM_SECRET };
  return {
    url,
    pid: child.pid!,
    env,
    async stop() {
      await stopChild(child);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Binds the always-succeeding card in live mode through the public calls, with the SMS code the bank sent. */
export function bindLiveCard(url: string, bank: Bank, authorization: string): Promise<string> {
  return bindCard(fetchCaller(url), authorization, SIM_PHONE, async () => (await fetchCaller(bank.url)('GET', `/sim/v1/sms?phone=${SIM_PHONE}`)).code!);
}

/** A process's resident memory, in bytes. */
function residentBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match![1]) * 1024;
}

export interface LiveAtScale {
  clients: number;
  bankLatencyMs: number;
  chargesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than 201, and requests that got none. */
  failed: number;
  /** Charges the bank held unanswered during the load: on average, and at most. */
  atBankMean: number;
  atBankMax: number;
  /** The service's resident memory before the load and, on average, under it (MB). */
  idleMb: number;
  loadedMb: number;
  /** What the load added to the service's memory, per client's charge in flight (KB). */
  perChargeKb: number;
  /** CPU per charge (ms) of each process: the load's client, the service, its database, the bank. */
  cpuMs: Record<string, number>;
}

/** Starts counting CPU time; the returned function gives it per charge, by process. */
export type CpuMeter = () => (charges: number) => Record<string, number>;

export interface LiveLoad {
  url: string;
  pid: number;
  bank: Bank;
  authorization: string;
  card: string;
  clients: number;
  bankLatencyMs: number;
  warmupSeconds: number;
  seconds: number;
  cpu: CpuMeter;
}

let sequence = 0;

const chargeLoad = (load: LiveLoad, connections: number, seconds: number) =>
  autocannon({
    url: `${load.url}/subscribe/v1/charges`,
    connections,
    duration: seconds,
    timeout: ANSWER_TIMEOUT_SECONDS,
    requests: [
      {
        method: 'POST',
        body: JSON.stringify({ amount: 2_500_000, description: 'Benchmark live charge', card: load.card }),
        setupRequest: (request) => ({
          ...request,
          headers: { ...request.headers, authorization: load.authorization, 'content-type': 'application/json', 'idempotency-key': `live-${++sequence}` },
        }),
      },
    ],
  });

/** POST charge from `clients` at once against a bank answering in `bankLatencyMs`, with the memory it costs. */
export async function measureLiveAtScale(load: LiveLoad): Promise<LiveAtScale> {
  await chargeLoad(load, WARMUP_CLIENTS, load.warmupSeconds);
  const idle = residentBytes(load.pid);
  const samples: { resident: number; atBank: number }[] = [];
  const startedAt = Date.now();
  const sampler = setInterval(() => {
    if (Date.now() - startedAt < RAMP_UP_MS) return;
    const resident = residentBytes(load.pid);
    void fetchCaller(load.bank.url)('GET', '/sim/v1/money-calls').then((calls) => samples.push({ resident, atBank: Number(calls.inFlight) }), () => {});
  }, SAMPLE_MS);
  const cpu = load.cpu();
  let result: autocannon.Result;
  try {
    result = await chargeLoad(load, load.clients, load.seconds);
  } finally {
    clearInterval(sampler);
  }
  const cpuMs = cpu(result.requests.total);
  const { inFlightMax } = await fetchCaller(load.bank.url)('GET', '/sim/v1/money-calls');
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
  const loaded = mean(samples.map((sample) => sample.resident));
  process.stderr.write(`  live charges from ${load.clients} clients: ${Math.round(result.requests.average)}/s\n`);
  return {
    clients: load.clients,
    bankLatencyMs: load.bankLatencyMs,
    chargesPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failed: result.non2xx + result.errors + result.timeouts,
    atBankMean: Math.round(mean(samples.map((sample) => sample.atBank))),
    atBankMax: Number(inFlightMax),
    idleMb: Math.round(idle / 2 ** 20),
    loadedMb: Math.round(loaded / 2 ** 20),
    perChargeKb: Math.round((loaded - idle) / load.clients / 1024),
    cpuMs,
  };
}

/**
 * The rate and its two ceilings: what the clients' number over the bank's latency allows, and what the machine's cores
 * carry at the CPU a charge took in all (every process on this machine, the bank's included).
 */
export function liveAtScaleLine(engine: string, live: LiveAtScale): string {
  const bankBound = Math.round((live.clients * 1000) / live.bankLatencyMs);
  const cpuTotal = Object.values(live.cpuMs).reduce((sum, ms) => sum + ms, 0);
  const cpuBound = Math.round((availableParallelism() * 1000) / cpuTotal);
  const ceiling = Math.min(bankBound, cpuBound);
  const parts = Object.entries(live.cpuMs).map(([process, ms]) => `${process} ${ms}`).join(' + ');
  return (
    `${engine}: live POST charge from ${live.clients} clients, the bank answering in ${live.bankLatencyMs} ms: ${live.chargesPerSecond}/s, ` +
    `${(live.chargesPerSecond / ceiling).toFixed(2)}× the lower of ${bankBound}/s (the bank's latency) and ${cpuBound}/s (the CPU: ${parts} = ` +
    `${cpuTotal.toFixed(2)} ms per charge on ${availableParallelism()} cores), p50 ${live.p50Ms} ms, p99 ${live.p99Ms} ms, ` +
    `${live.failed} failed; at the bank ${live.atBankMean} on average, ${live.atBankMax} at most; the service's memory ${live.idleMb} MB idle, ` +
    `${live.loadedMb} MB under the load: ${live.perChargeKb} KB per charge in flight`
  );
}
