import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIM_PHONE } from '../../bank-sim/bank.js';
import { ADMIN_TOKEN, createPostgresDatabase, engine, SECRETS_KEY } from './harness.js';

const STARTUP_TIMEOUT_MS = 60_000;
const running = new Set<ChildProcess>();
const databases: Array<() => Promise<void>> = [];

/** Kills every process a test file started and left running, and drops the databases they used. */
export async function killAll(): Promise<void> {
  for (const child of running) child.kill('SIGKILL');
  await Promise.all(databases.splice(0).map((drop) => drop()));
}

/** Storage settings for a process: a fresh PostgreSQL database of its own, or an in-memory embedded one. */
export async function processStorage(): Promise<Record<string, string>> {
  if (engine === 'pglite') return { TOLOV_DATA_DIR: 'memory://' };
  const database = await createPostgresDatabase();
  databases.push(database.drop);
  return { DATABASE_URL: database.url };
}

export interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Starts `src/main.ts` as a user would (through tsx instead of the build) and waits for its URL. `env` must carry the
 * storage (see processStorage), so that a restart can reuse it.
 */
export function startMain(env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'info', TOLOV_ADMIN_TOKEN: ADMIN_TOKEN, TOLOV_SECRETS_KEY: SECRETS_KEY, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL within ${STARTUP_TIMEOUT_MS} ms:\n${output}`)), STARTUP_TIMEOUT_MS);
    const check = () => {
      const match = /Tolov listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        // Found once: matching again over the whole growing output on every chunk would cost time and memory.
        child.stdout!.off('data', check);
        resolve({ child, url: match[1]!, output: () => output, exited });
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening:\n${output}`));
    });
  });
}

export async function json(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** A JSON call of the process `server()` is now (a restarted one keeps the caller), with a key and an Idempotency-Key. */
export function apiCaller(server: () => { url: string }) {
  return (method: 'GET' | 'POST', path: string, key: string, body?: unknown, idempotencyKey?: string) =>
    json(`${server().url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
}

/** Storage a restarted process finds again: a folder of its own on the embedded engine (removed by killAll), else processStorage's. */
export async function persistentStorage(): Promise<Record<string, string>> {
  if (engine === 'postgres') return processStorage();
  const dir = await mkdtemp(join(tmpdir(), 'tolov-process-'));
  databases.push(() => rm(dir, { recursive: true, force: true }));
  return { TOLOV_DATA_DIR: dir };
}

/**
 * What a Tolov process killed and started again against the bank simulator `sim` runs with: storage it finds again, a
 * call window of 2.3 s (each attempt waits 300 ms to connect and 300 ms for the answer), reconciliation every 200 ms.
 */
export async function restartedAgainst(sim: { url: string }, secret: string): Promise<Record<string, string>> {
  return {
    ...(await persistentStorage()),
    TOLOV_LIVE_RAIL_URL: sim.url,
    TOLOV_LIVE_RAIL_SECRET: secret,
    TOLOV_LIVE_RAIL_TIMEOUT_MS: '300',
    TOLOV_RECONCILE_INTERVAL_MS: '200',
    LOG_LEVEL: 'warn',
  };
}

/**
 * A new product (`product`, the operator API's body) of the process at `url`, and a card bound to its key through the
 * hosted capture calls: the test card with its fixed code, or, with `sim`, a live card with the code the bank
 * simulator sent.
 */
export async function shopWithCard(url: string, product: Record<string, unknown>, sim?: { url: string }): Promise<{ key: string; card: string }> {
  const call = (path: string, key: string, body?: unknown) =>
    json(`${url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const keys = (await call('/admin/v1/products', ADMIN_TOKEN, product)).body.keys as { test: string; live: string };
  const key = sim ? keys.live : keys.test;
  const binding = (await call('/subscribe/v1/card_bindings', key, {})).body;
  await call(`/checkout/v1/sessions/${binding.clientToken}/card`, key, { pan: '8600000000000007', expiry: '12/30', phone: sim ? SIM_PHONE : '998901234567' });
  const code = sim ? (await json(`${sim.url}/sim/v1/sms?phone=${SIM_PHONE}`)).body.code : '111111';
  await call(`/checkout/v1/sessions/${binding.clientToken}/code`, key, { code });
  return { key, card: (await call(`/subscribe/v1/card_bindings/${binding.id}`, key)).body.card as string };
}
