// Requests answered at once are bounded (TOLOV_REQUESTS_IN_FLIGHT_MAX). Past the limit a request answers 503 at once,
// with Retry-After, in the error format, and changes nothing; the operator's probes still answer. A place is given back
// when its response closes, sent or dropped by its client, or its connection closes; a dropped request's charge still
// ends. A request being answered is never cut by the connection's idle timeout.
import { request } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine, idem, type Reply } from '../support/harness.js';
import { bindLiveCard, liveCharge, startLive, type Live } from '../support/live.js';

const MAX = 3;
const AMOUNT = 10_000;
const METRICS_TOKEN = 'mtk_in_flight_test_token_0123456789';

/** How long a connection may send nothing before it is closed (CONNECTION_TIMEOUT_MS in src/http/server.ts). */
const CONNECTION_IDLE_MS = 10_000;

let live: Live;
let base: string;
let card: string;
beforeAll(async () => {
  live = await startLive({ TOLOV_REQUESTS_IN_FLIGHT_MAX: String(MAX), TOLOV_METRICS_TOKEN: METRICS_TOKEN, TOLOV_LIVE_RAIL_TIMEOUT_MS: '60000' });
  base = await live.service.app.listen({ port: 0, host: '127.0.0.1' });
  card = await bindLiveCard(live, '8600000000000007');
});
afterAll(() => live.stop());

/** The gauge of requests in flight, as Prometheus reads it. */
async function inFlight(): Promise<number> {
  const reply = await live.service.call({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(reply.status).toBe(200);
  return Number(/^tolov_http_requests_in_flight (\d+)$/m.exec(reply.text)![1]);
}

/** A refusal before any work: its status, `Retry-After: 1`, and the error body naming the request. */
function expectRefused(reply: Reply, body: { statusCode: number; error: string; code: string; message: string }): void {
  expect(reply.status).toBe(body.statusCode);
  expect(reply.headers['retry-after']).toBe('1');
  expect(reply.body).toEqual({ ...body, requestId: reply.headers['request-id'] });
}

const liveCharges = async () =>
  (await live.service.db.query<{ count: number }>('SELECT count(*)::int AS count FROM payment_intents WHERE livemode'))[0]!.count;

describe('requests in flight', () => {
  it('refuses the one past the limit at once and changes nothing, answers the probes, and counts a dropped request until it closes', async () => {
    const { service, sim, merchant } = live;
    const answerAll = sim.holdMoneyCalls();
    const dropped = new AbortController();
    const droppedKey = idem();
    let held: ReturnType<typeof liveCharge>[] = [];
    try {
      // Two charges through the app, and one over a real connection that its client will drop.
      held = [liveCharge(live, card, AMOUNT), liveCharge(live, card, AMOUNT)];
      const overSocket = fetch(`${base}/subscribe/v1/charges`, {
        method: 'POST',
        headers: { authorization: `Bearer ${merchant.live}`, 'content-type': 'application/json', 'idempotency-key': droppedKey },
        body: JSON.stringify({ amount: AMOUNT, card }),
        signal: dropped.signal,
      }).catch((error: Error) => error.name);
      await expect.poll(() => sim.moneyCalls.inFlight, { timeout: 20_000 }).toBe(MAX);
      expect(await inFlight()).toBe(MAX);

      // Full: a charge and a read are refused at once, in the error format, and the charge's key keeps nothing.
      const refusedKey = idem();
      expectRefused(await liveCharge(live, card, AMOUNT, refusedKey), {
        statusCode: 503,
        error: 'Service Unavailable',
        code: 'SERVICE_UNAVAILABLE',
        message: 'The service is answering as many requests as it can; retry after Retry-After seconds',
      });
      expect((await service.call({ method: 'GET', url: '/v1/balance', key: merchant.live })).status).toBe(503);
      // A request that takes no place is answered as ever: a wrong key is told so.
      expect((await service.call({ method: 'GET', url: '/v1/balance', key: `sk_live_${'x'.repeat(32)}` })).body.code).toBe('UNAUTHENTICATED');
      expect(await liveCharges()).toBe(MAX);
      // The probes answer during it.
      expect((await service.call({ method: 'GET', url: '/healthz' })).status).toBe(200);
      // (Unready only because a test runs no workers: the probe answered, it was not refused.)
      expect((await service.call({ method: 'GET', url: '/readyz' })).body).toEqual({ status: 'unready', failing: ['workers'] });

      // The dropped request gives its place back while its charge still waits on the bank.
      dropped.abort();
      expect(await overSocket).toBe('AbortError');
      await expect.poll(inFlight).toBe(MAX - 1);
      expect(sim.moneyCalls.inFlight).toBe(MAX);
      expect((await service.call({ method: 'GET', url: '/v1/balance', key: merchant.live })).status).toBe(200);

      // The refused charge, sent again under its key once there is room: made now, not a replay.
      answerAll();
      const retried = await liveCharge(live, card, AMOUNT, refusedKey);
      expect(retried.status).toBe(201);
      expect(retried.headers['idempotent-replayed']).toBeUndefined();
      expect(retried.body.status).toBe('SUCCEEDED');
    } finally {
      answerAll();
    }
    expect((await Promise.all(held)).map((reply) => `${reply.status} ${reply.body.status}`)).toEqual(['201 SUCCEEDED', '201 SUCCEEDED']);
    // The dropped request's charge ended without its client (409 while it records the bank's answer): its key answers
    // what it made.
    await expect.poll(async () => (await liveCharge(live, card, AMOUNT, droppedKey)).status).toBe(201);
    const replayed = await liveCharge(live, card, AMOUNT, droppedKey);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body.status).toBe('SUCCEEDED');
    expect(await liveCharges()).toBe(MAX + 1);
    await expect.poll(inFlight).toBe(0);
  }, 60_000);

  it('gives back the places of requests pipelined behind one whose connection its client drops', async () => {
    const { sim, merchant } = live;
    const answerAll = sim.holdMoneyCalls();
    const key = idem();
    const body = JSON.stringify({ amount: AMOUNT, card });
    const socket = connect(Number(new URL(base).port), '127.0.0.1');
    try {
      // A charge, and a read sent behind it on the same connection before its answer.
      socket.write(
        `POST /subscribe/v1/charges HTTP/1.1\r\nHost: tolov\r\nAuthorization: Bearer ${merchant.live}\r\nContent-Type: application/json\r\n` +
          `Idempotency-Key: ${key}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` +
          `GET /v1/balance HTTP/1.1\r\nHost: tolov\r\nAuthorization: Bearer ${merchant.live}\r\n\r\n`,
      );
      await expect.poll(() => sim.moneyCalls.inFlight).toBe(1);
      await expect.poll(inFlight).toBe(2);
      socket.destroy();
      await expect.poll(inFlight).toBe(0);
    } finally {
      socket.destroy();
      answerAll();
    }
    await expect.poll(async () => (await liveCharge(live, card, AMOUNT, key)).status).toBe(201);
  });

  // On PostgreSQL, where a lock keeps the key's lookup waiting while the test watches it wait.
  it.skipIf(engine !== 'postgres')('does not begin a request whose connection closed while its key was looked up', async () => {
    const { service } = live;
    const shop = await service.createMerchant();
    let unlock!: () => void;
    const locked = new Promise<void>((resolve) => (unlock = resolve));
    let holding!: Promise<void>;
    await new Promise<void>((tookLock) => {
      holding = service.db.transaction(async (tx) => {
        await tx.query('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE');
        tookLock();
        await locked;
      });
    });
    const socket = connect(Number(new URL(base).port), '127.0.0.1');
    try {
      // A key this process has not seen: its lookup waits for the lock.
      socket.write(`GET /v1/balance HTTP/1.1\r\nHost: tolov\r\nAuthorization: Bearer ${shop.live}\r\n\r\n`);
      const waiting = `SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%api_keys%'`;
      await expect.poll(async () => (await service.db.query<{ count: number }>(waiting))[0]!.count).toBe(1);
      socket.destroy();
      await new Promise((closed) => socket.once('close', closed));
    } finally {
      unlock();
      await holding;
    }
    // Its key was accepted once the lock went (its use is written right after), and its place was never taken.
    const used = `SELECT count(*)::int AS count FROM api_keys WHERE product_id = $1 AND last_used_at IS NOT NULL`;
    await expect.poll(async () => (await service.db.query<{ count: number }>(used, [shop.productId]))[0]!.count).toBe(1);
    expect(await inFlight()).toBe(0);
  });

  it("answers a connection's first request however long it takes, past the connection's idle timeout", async () => {
    const answerAll = live.sim.holdMoneyCalls();
    let answer: Promise<{ status: number; body: string }>;
    try {
      answer = chargeOnNewConnection(idem());
      await expect.poll(() => live.sim.moneyCalls.inFlight).toBe(1);
      await sleep(CONNECTION_IDLE_MS + 1_000);
    } finally {
      answerAll();
    }
    const { status, body } = await answer;
    expect(status).toBe(201);
    expect(JSON.parse(body).status).toBe('SUCCEEDED');
  }, 30_000);
});

/** A live charge sent on a connection of its own, its first and only request. */
function chargeOnNewConnection(key: string): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({ amount: AMOUNT, card });
  return new Promise((resolve, reject) => {
    const sent = request(`${base}/subscribe/v1/charges`, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${live.merchant.live}`, 'content-type': 'application/json', 'idempotency-key': key },
    });
    sent.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: text }));
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

describe("one client's share of the places", () => {
  let shared: Live;
  let sharedCard: string;
  beforeAll(async () => {
    shared = await startLive({ TOLOV_REQUESTS_IN_FLIGHT_MAX: '4', TOLOV_REQUESTS_IN_FLIGHT_PER_CLIENT_MAX: '2', TOLOV_LIVE_RAIL_TIMEOUT_MS: '60000' });
    sharedCard = await bindLiveCard(shared, '8600000000000007');
  });
  afterAll(() => shared.stop());

  it('refuses a product past its share with 429 and changes nothing, while its test mode and other products go on', async () => {
    const { service, sim, merchant } = shared;
    const answerAll = sim.holdMoneyCalls();
    let held: ReturnType<typeof liveCharge>[] = [];
    const refusedKey = idem();
    try {
      held = [liveCharge(shared, sharedCard, AMOUNT), liveCharge(shared, sharedCard, AMOUNT)];
      await expect.poll(() => sim.moneyCalls.inFlight, { timeout: 20_000 }).toBe(2);
      expectRefused(await liveCharge(shared, sharedCard, AMOUNT, refusedKey), {
        statusCode: 429,
        error: 'Too Many Requests',
        code: 'RATE_LIMITED',
        message: 'You have as many requests in flight as one client may have at once; retry after Retry-After seconds',
      });
      expect((await service.call({ method: 'GET', url: '/v1/balance', key: merchant.live })).status).toBe(429);
      const written = await service.db.query<{ count: number }>('SELECT count(*)::int AS count FROM payment_intents WHERE livemode');
      expect(written).toEqual([{ count: 2 }]);
      // The same product in test mode, and another product, have shares of their own.
      expect((await service.call({ method: 'GET', url: '/v1/balance', key: merchant.test })).status).toBe(200);
      const other = await service.createMerchant();
      expect((await service.call({ method: 'GET', url: '/v1/balance', key: other.test })).status).toBe(200);
    } finally {
      answerAll();
    }
    expect((await Promise.all(held)).map((reply) => reply.status)).toEqual([201, 201]);
    // The refused charge, sent again under its key: made now, not a replay.
    const retried = await liveCharge(shared, sharedCard, AMOUNT, refusedKey);
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  }, 60_000);
});
