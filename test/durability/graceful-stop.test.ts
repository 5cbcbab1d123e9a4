// SIGTERM as a deploy sends it, to the real process under a steady charge load from keep-alive clients: every request
// the process accepted is answered and stays done, no client sees its connection reset, and the stop ends within
// TOLOV_SHUTDOWN_TIMEOUT_MS, a slow request and a client that keeps its connection open included; a stop kept waiting
// past that limit exits with code 1 at the limit.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { startBankSim } from '../../bank-sim/sim.js';
import { loadConfig } from '../../src/config.js';
import { setFaults, SIM_SECRET } from '../support/live.js';
import { json, killAll, persistentStorage, processStorage, shopWithCard, startMain, type Started } from '../support/process.js';
import { startReceiver } from '../support/receiver.js';
import { waitFor } from '../support/wait.js';

afterAll(killAll);

const CLIENTS = 8;
/** Charges answered before the signal: the load is steady by then. */
const CHARGES_BEFORE_SIGNAL = 60;
const DRAIN_MS = 500;
const SHUTDOWN_TIMEOUT_MS = 30_000;

/** One request of the load: when it was sent, and its answer or the error its client saw. */
interface Sent {
  sentAt: number;
  answeredAt: number | null;
  status?: number;
  retryAfter?: string;
  connection?: string;
  intent?: { id: string; status: string };
  error?: string;
}

/**
 * Clients that each charge over one keep-alive connection, back to back, until one of their requests fails (the
 * process is gone). `sent` fills as they go; the promise ends when every client has stopped.
 */
function chargeLoad(url: string, key: string, card: string, sent: Sent[]): Promise<void> {
  const client = async (c: number) => {
    const http = new Client(url);
    try {
      for (let n = 0; ; n++) {
        const request: Sent = { sentAt: Date.now(), answeredAt: null };
        sent.push(request);
        try {
          const reply = await http.request({
            method: 'POST',
            path: '/subscribe/v1/charges',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'idempotency-key': `stop-${c}-${n}` },
            body: JSON.stringify({ amount: 10_000 + n, card }),
          });
          const text = await reply.body.text();
          Object.assign(request, { answeredAt: Date.now(), status: reply.statusCode, retryAfter: reply.headers['retry-after'], connection: reply.headers.connection });
          if (reply.statusCode === 201) request.intent = JSON.parse(text) as { id: string; status: string };
        } catch (error) {
          request.error = (error as { code?: string }).code ?? String(error);
          return;
        }
      }
    } finally {
      await http.destroy();
    }
  };
  return Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c))).then(() => {});
}

/** Every charge the key sees, page by page. */
async function allCharges(url: string, key: string): Promise<Array<{ id: string; status: string }>> {
  const charges: Array<{ id: string; status: string }> = [];
  for (let after = ''; ; ) {
    const page = await json(`${url}/subscribe/v1/charges?limit=100${after}`, { headers: { authorization: `Bearer ${key}` } });
    charges.push(...(page.body.data as Array<{ id: string; status: string }>));
    if (!page.body.has_more) return charges;
    after = `&starting_after=${charges.at(-1)!.id}`;
  }
}

describe('a graceful stop (SIGTERM)', () => {
  it('under a steady charge load, answers every request it accepted, resets no connection, keeps every charge, and exits 0 within TOLOV_SHUTDOWN_TIMEOUT_MS', async () => {
    const env = {
      ...(await persistentStorage()),
      TOLOV_SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
      TOLOV_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      TOLOV_RATE_LIMIT_KEY_PER_MINUTE: '1000000',
      LOG_LEVEL: 'warn',
    };
    const server: Started = await startMain(env);
    const { key, card } = await shopWithCard(server.url, { name: 'Stop shop', feeBps: 100 });
    const sent: Sent[] = [];
    const load = chargeLoad(server.url, key, card, sent);
    await waitFor(async () => (sent.filter((request) => request.status === 201).length >= CHARGES_BEFORE_SIGNAL ? true : null), 60_000, 'the load');
    const signalAt = Date.now();
    server.child.kill('SIGTERM');
    const inFlight = sent.filter((request) => request.answeredAt === null);
    const code = await server.exited;
    const stopMs = Date.now() - signalAt;
    await load;

    // Answered: 201, or 503 with Retry-After and the connection closed (a request that came after the server began
    // closing). Not answered: refused, because the listener was closed; never a connection reset under a request.
    const unanswered = sent.filter((request) => request.status === undefined);
    expect(unanswered.map((request) => request.error)).toEqual(unanswered.map(() => 'ECONNREFUSED'));
    for (const request of sent.filter((r) => r.status !== undefined && r.status !== 201)) {
      expect(request).toMatchObject({ status: 503, retryAfter: '1', connection: 'close' });
    }
    // The requests in flight at the signal, and those sent during the drain, were finished.
    expect(inFlight.length).toBeGreaterThan(0);
    expect(inFlight.map((request) => request.status)).toEqual(inFlight.map(() => 201));
    expect(sent.filter((request) => request.sentAt > signalAt && request.status === 201).length).toBeGreaterThan(0);
    expect(code).toBe(0);
    expect(stopMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS);

    // On the same storage, every charge answered 201 is there as answered, and there is no other.
    const restarted = await startMain(env);
    const answered = sent.filter((request) => request.status === 201).map((request) => request.intent!);
    for (const intent of answered) {
      const read = await json(`${restarted.url}/subscribe/v1/charges/${intent.id}`, { headers: { authorization: `Bearer ${key}` } });
      expect(read.status).toBe(200);
      expect(read.body.status).toBe(intent.status);
    }
    expect((await allCharges(restarted.url, key)).map((intent) => intent.id).sort()).toEqual(answered.map((intent) => intent.id).sort());
    restarted.child.kill('SIGTERM');
    expect(await restarted.exited).toBe(0);
  }, 180_000);

  it('finishes a request slower than its idle grace, and a client keeping that connection open does not hold the stop', async () => {
    const simDir = await mkdtemp(join(tmpdir(), 'tolov-stop-bank-'));
    const sim = await startBankSim({ dataDir: simDir, secret: SIM_SECRET, port: 0, log: false });
    let client: Client | undefined;
    try {
      const server = await startMain({
        ...(await processStorage()),
        TOLOV_LIVE_RAIL_URL: sim.url,
        TOLOV_LIVE_RAIL_SECRET: SIM_SECRET,
        TOLOV_SHUTDOWN_TIMEOUT_MS: '20000',
        LOG_LEVEL: 'warn',
      });
      const { key, card } = await shopWithCard(server.url, { name: 'Slow bank shop', receiptRequired: false }, sim);
      await setFaults(sim, { moneyLatencyMs: 2_500 });

      // A client that keeps an idle connection open for a minute (a keep-alive pool), as a proxy may.
      client = new Client(server.url, { keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
      const reply = client.request({
        method: 'POST',
        path: '/subscribe/v1/charges',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'idempotency-key': 'slow' },
        body: JSON.stringify({ amount: 10_000, card }),
      });
      await waitFor(async () => ((sim.calls.get('/v1/debits') ?? 0) > 0 ? true : null), 10_000, 'the debit at the bank');
      const signalAt = Date.now();
      server.child.kill('SIGTERM');
      const answer = await reply;
      expect(answer.statusCode).toBe(201);
      expect(((await answer.body.json()) as { status: string }).status).toBe('SUCCEEDED');
      // The client keeps its connection; the process closes it once idle, and exits.
      expect(await server.exited).toBe(0);
      expect(Date.now() - signalAt).toBeLessThan(20_000);
    } finally {
      await client?.destroy();
      await sim.close();
      await rm(simDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('exits with code 1 at TOLOV_SHUTDOWN_TIMEOUT_MS when the stop is kept waiting, naming what it waits for; a second SIGTERM changes nothing', async () => {
    const timeoutMs = 4_000;
    const receiver = await startReceiver();
    receiver.behaviour = 'hang';
    try {
      const server = await startMain({
        ...(await processStorage()),
        TOLOV_SHUTDOWN_TIMEOUT_MS: String(timeoutMs),
        // An attempt would keep the stop waiting for a minute.
        TOLOV_WEBHOOK_TIMEOUT_MS: '60000',
        TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true',
      });
      const { key, card } = await shopWithCard(server.url, { name: 'Stop shop', feeBps: 100 });
      const post = (path: string, body: unknown) =>
        json(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'idempotency-key': `${path}-1` },
          body: JSON.stringify(body),
        });
      expect((await post('/v1/webhook_endpoints', { url: `${receiver.url}/hooks` })).status).toBe(201);
      expect((await post('/subscribe/v1/charges', { amount: 10_000, card })).status).toBe(201);
      await waitFor(async () => (receiver.received.length > 0 ? true : null), 20_000, 'a webhook attempt in flight');

      const signalAt = Date.now();
      server.child.kill('SIGTERM');
      // Half way to the limit: were the limit counted again from here, the exit would come after signalAt + 1.5 × limit.
      setTimeout(() => server.child.kill('SIGTERM'), timeoutMs / 2);
      const code = await server.exited;
      const stopMs = Date.now() - signalAt;
      expect(code).toBe(1);
      expect(stopMs).toBeGreaterThanOrEqual(timeoutMs);
      expect(stopMs).toBeLessThan(timeoutMs * 1.5);
      expect(server.output()).toMatch(/the stop did not finish within TOLOV_SHUTDOWN_TIMEOUT_MS \(4000 ms\): still waiting for requests in flight and webhook attempts under way; exiting/);
      expect(server.output().match(/SIGTERM: finishing requests in flight/g)).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  }, 120_000);

  it('refuses a limit that does not leave time after the drain', () => {
    expect(() => loadConfig({ TOLOV_SHUTDOWN_DRAIN_MS: '30000' })).toThrow('TOLOV_SHUTDOWN_TIMEOUT_MS="30000" is invalid: expected more than TOLOV_SHUTDOWN_DRAIN_MS (30000)');
    expect(loadConfig({ TOLOV_SHUTDOWN_DRAIN_MS: '10000' }).shutdownTimeoutMs).toBe(30_000);
    expect(loadConfig({ TOLOV_SHUTDOWN_DRAIN_MS: '60000', TOLOV_SHUTDOWN_TIMEOUT_MS: '90000' }).shutdownTimeoutMs).toBe(90_000);
  });
});
