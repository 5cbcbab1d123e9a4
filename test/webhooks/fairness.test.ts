// One merchant's dead endpoints hold back only their own deliveries: another merchant's event arrives while theirs hang,
// on another host or on the same one, each endpoint and each account has a bounded number of attempts in flight, and
// an endpoint that does not answer waits before the next.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SENDS_PER_ENDPOINT_MAX, SENDS_PER_PRODUCT_MAX } from '../../src/modules/webhooks/dispatch.js';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const TIMEOUT_MS = 3_000;

let service: TestService;
let healthy: Receiver;
let blackHole: Receiver;
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true', TOLOV_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
  healthy = await startReceiver();
  blackHole = await startReceiver();
  blackHole.behaviour = 'hang';
});
afterAll(async () => {
  await healthy.close();
  await blackHole.close();
  await service.stop();
});

/** An order expired now: one order.expired event, delivered to every endpoint of the product. */
async function expiredOrder(shop: Merchant, on: TestService = service): Promise<string> {
  const order = await on.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: idem(), body: { amount: 100 } });
  await on.db.query('UPDATE orders SET expires_at = now() WHERE id = $1', [order.body.id]);
  await on.orders.expireDue(100);
  return order.body.id;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('webhook delivery under a dead endpoint', () => {
  it("delivers another merchant's event at once while one merchant's endpoints hang, with bounded attempts per endpoint", async () => {
    const noisy = await service.createMerchant();
    for (let n = 0; n < 16; n++) {
      await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: noisy.test, body: { url: `${blackHole.url}/dead/${n}` } });
    }
    for (let i = 0; i < 12; i++) await expiredOrder(noisy);
    const quiet = await service.createMerchant();
    await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: quiet.test, body: { url: `${healthy.url}/quiet` } });

    // The worker's loop, as it runs: lease what has room, start it, come back.
    let running = true;
    const worker = (async () => {
      while (running) {
        await service.webhooks.startDue(256);
        await sleep(50);
      }
    })();
    await sleep(300);
    // Every dead endpoint holds its attempts now; the quiet merchant's event comes after them.
    const sent = Date.now();
    const orderId = await expiredOrder(quiet);
    while (!healthy.received.some((request) => JSON.parse(request.body).data.id === orderId) && Date.now() - sent < TIMEOUT_MS * 2) await sleep(20);
    const waited = Date.now() - sent;
    running = false;
    await worker;

    expect(waited).toBeLessThan(TIMEOUT_MS / 2);
    // At most SENDS_PER_ENDPOINT_MAX attempts at once to each dead endpoint: 12 events each, 8 sent, 4 waiting.
    const perEndpoint = new Map<string, number>();
    for (const request of blackHole.received) perEndpoint.set(request.path, (perEndpoint.get(request.path) ?? 0) + 1);
    expect([...perEndpoint.entries()].filter(([, count]) => count > SENDS_PER_ENDPOINT_MAX)).toEqual([]);
    expect(perEndpoint.size).toBe(16);
    await service.webhooks.idle();
  }, 30_000);

  it("delivers another merchant's event at once while one merchant's endpoints on the same host hang", async () => {
    // One host for everyone (a shared webhook service): paths under /dead/ never answer, the others answer at once.
    const answered: string[] = [];
    const host: Server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        if (request.url!.startsWith('/dead/')) return;
        answered.push(request.url!);
        response.end('ok');
      });
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(host.address() as { port: number }).port}`;
    try {
      const noisy = await service.createMerchant();
      for (let n = 0; n < 16; n++) await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: noisy.test, body: { url: `${url}/dead/${n}` } });
      for (let i = 0; i < 12; i++) await expiredOrder(noisy);
      const quiet = await service.createMerchant();
      await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: quiet.test, body: { url: `${url}/quiet` } });

      // The noisy merchant's attempts all start (8 per endpoint, 128 in all) and hang.
      await service.webhooks.startDue(256);
      await sleep(300);
      const sent = Date.now();
      await expiredOrder(quiet);
      await service.webhooks.startDue(256);
      while (!answered.includes('/quiet') && Date.now() - sent < TIMEOUT_MS * 2) await sleep(20);
      expect(Date.now() - sent).toBeLessThan(TIMEOUT_MS / 2);
      await service.webhooks.idle();
    } finally {
      host.closeAllConnections();
      await new Promise<void>((resolve) => host.close(() => resolve()));
    }
  }, 30_000);

  it('makes an endpoint that did not answer wait before its next attempt, and lets it go on once it answers', async () => {
    // A service of its own: the other tests' endpoints come out of their backoff with deliveries due, and would be counted.
    const own = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true', TOLOV_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
    try {
      const shop = await own.createMerchant();
      const endpoint = (await own.call({ method: 'POST', url: '/v1/webhook_endpoints', key: shop.test, body: { url: `${blackHole.url}/slow` } })).body;
      await expiredOrder(shop, own);
      await own.webhooks.deliverDue(256);
      expect(blackHole.received.filter((request) => request.path === '/slow')).toHaveLength(1);
      // A second event is due at once, but the endpoint just failed to answer: it waits for its backoff.
      await expiredOrder(shop, own);
      expect(await own.webhooks.deliverDue(256)).toBe(0);
      await sleep(1_100);
      await own.call({ method: 'POST', url: `/v1/webhook_endpoints/${endpoint.id}`, key: shop.test, body: { url: `${healthy.url}/slow` } });
      expect(await own.webhooks.deliverDue(256)).toBe(1);
      expect(healthy.received.filter((request) => request.path === '/slow')).toHaveLength(1);
    } finally {
      await own.stop();
    }
  }, 30_000);

  it("delivers another merchant's event at once while three accounts' 48 endpoints hang, each account within its share", async () => {
    // A service of its own: nothing else in flight.
    const own = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true', TOLOV_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
    try {
      const noisy = await Promise.all(Array.from({ length: 3 }, () => own.createMerchant()));
      for (const [m, shop] of noisy.entries()) {
        for (let n = 0; n < 16; n++) await own.call({ method: 'POST', url: '/v1/webhook_endpoints', key: shop.test, body: { url: `${blackHole.url}/share/${m}/${n}` } });
        for (let i = 0; i < 8; i++) await expiredOrder(shop, own);
      }
      const quiet = await own.createMerchant();
      await own.call({ method: 'POST', url: '/v1/webhook_endpoints', key: quiet.test, body: { url: `${healthy.url}/shared-quiet` } });

      // 3 × 16 × 8 = 384 attempts are due, more than the process's 256: each account gets its share and no more.
      for (let round = 0; round < 4; round++) await own.webhooks.startDue(256);
      // On a busy machine the receiver reads the requests over a while: once it has as many as the shares allow, each
      // account must have sent exactly its share.
      const perAccount = () => [0, 1, 2].map((m) => blackHole.received.filter((request) => request.path.startsWith(`/share/${m}/`)).length);
      await expect.poll(() => perAccount().reduce((sum, count) => sum + count, 0)).toBeGreaterThanOrEqual(3 * SENDS_PER_PRODUCT_MAX);
      expect(perAccount()).toEqual([SENDS_PER_PRODUCT_MAX, SENDS_PER_PRODUCT_MAX, SENDS_PER_PRODUCT_MAX]);
      const sent = Date.now();
      const orderId = await expiredOrder(quiet, own);
      await own.webhooks.startDue(256);
      while (!healthy.received.some((request) => JSON.parse(request.body).data.id === orderId) && Date.now() - sent < TIMEOUT_MS * 2) await sleep(20);
      expect(Date.now() - sent).toBeLessThan(TIMEOUT_MS / 2);
      await own.webhooks.idle();
    } finally {
      await own.stop();
    }
  }, 60_000);
});
