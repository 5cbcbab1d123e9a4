import { createHmac } from 'node:crypto';
import net from 'node:net';
import type { LookupAddress } from 'node:dns';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { constructEvent } from '../../packages/node/src/webhooks.js';
import type { Lookup } from '../../src/modules/webhooks/sender.js';
import { INTERRUPTED_ATTEMPT, leaseDueDeliveries } from '../../src/modules/webhooks/store.js';
import { bindCard } from '../support/binding.js';
import { startService, type Merchant, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

let service: TestService;
let receiver: Receiver;
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true', TOLOV_WEBHOOK_RETRY_SCHEDULE: '0,60,300', TOLOV_WEBHOOK_TIMEOUT_MS: '400' });
  receiver = await startReceiver();
});
afterEach(() => {
  receiver.behaviour = 'ok';
  receiver.received.length = 0;
});
afterAll(async () => {
  await receiver.close();
  await service.stop();
});

async function shopWithEndpoint(body: Record<string, unknown> = {}, mode: 'test' | 'live' = 'test') {
  const shop = await service.createMerchant({ feeBps: 0 });
  const endpoint = (
    await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: shop[mode], body: { url: `${receiver.url}/hooks/${shop.productId}`, ...body } })
  ).body;
  const card = await bindCard(service, shop.test, '8600000000000007');
  return { shop, endpoint, card };
}

/** Runs delivery batches until nothing is due (bounded). */
async function deliverAll(): Promise<void> {
  for (let round = 0; round < 20; round++) if ((await service.webhooks.deliverDue(100)) === 0) return;
}
const makeDue = () => service.db.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE status = 'pending'`);
const receivedBy = (shop: Merchant) => receiver.received.filter((request) => request.path === `/hooks/${shop.productId}`);

describe('webhook deliveries', () => {
  it('are signed (Tolov and Standard Webhooks) over the exact body, which is the event', async () => {
    const { shop, endpoint, card } = await shopWithEndpoint();
    const intent = (await charge(service, shop.test, { amount: 12_345, card })).body;
    await deliverAll();
    const [request] = receivedBy(shop);
    expect(request).toBeDefined();
    const headers = request!.headers;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['tolov-event-type']).toBe('payment_intent.succeeded');
    expect(headers['tolov-delivery-id']).toMatch(/^wd_/);
    const event = JSON.parse(request!.body);
    expect(headers['tolov-event-id']).toBe(event.id);
    expect(event).toMatchObject({ object: 'event', type: 'payment_intent.succeeded', livemode: false, data: { ...intent, status: 'succeeded' } });
    // The body is exactly what GET /v1/events/{id} answers.
    const read = await service.call({ method: 'GET', url: `/v1/events/${event.id}`, key: shop.test });
    expect(request!.body).toBe(read.text);

    // An independent check of Tolov-Signature: t=…,v1=hex(HMAC-SHA256(secret, "t.body")).
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(headers['tolov-signature']))!;
    expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(60);
    expect(v1).toBe(createHmac('sha256', endpoint.secret).update(`${t}.${request!.body}`).digest('hex'));
    // An independent check of the Standard Webhooks headers.
    expect(headers['webhook-id']).toBe(event.id);
    expect(headers['webhook-timestamp']).toBe(t);
    const key = Buffer.from(endpoint.secret.slice('whsec_'.length), 'base64');
    const standard = createHmac('sha256', key).update(`${event.id}.${t}.${request!.body}`).digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${standard}`);
    // And the shipped helper agrees.
    expect(constructEvent(request!.body, headers['tolov-signature'], endpoint.secret).id).toBe(event.id);

    const deliveries = await service.call({ method: 'GET', url: `/v1/webhook_endpoints/${endpoint.id}/deliveries`, key: shop.test });
    expect(deliveries.body.data).toEqual([
      {
        id: headers['tolov-delivery-id'],
        object: 'webhook_delivery',
        endpoint: endpoint.id,
        event: event.id,
        eventType: 'payment_intent.succeeded',
        status: 'succeeded',
        nextAttemptAt: null,
        attempts: [{ number: 1, attemptedAt: expect.any(String), statusCode: 200, durationMs: expect.any(Number), error: null, responseExcerpt: 'ok' }],
        created: expect.any(String),
      },
    ]);
  });

  it('go only to endpoints of the same mode and subscribed types', async () => {
    const { shop, card } = await shopWithEndpoint({ enabledEvents: ['payment_intent.failed'] });
    const live = (await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: shop.live, body: { url: `${receiver.url}/live/${shop.productId}` } })).body;
    const all = (await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: shop.test, body: { url: `${receiver.url}/all/${shop.productId}` } })).body;
    await charge(service, shop.test, { amount: 100, card });
    const refusedCard = await bindCard(service, shop.test, '8600000000000015');
    await charge(service, shop.test, { amount: 100, card: refusedCard });
    await deliverAll();
    const types = (prefix: string) =>
      receiver.received.filter((request) => request.path === `/${prefix}/${shop.productId}`).map((request) => request.headers['tolov-event-type']);
    expect(types('hooks')).toEqual(['payment_intent.failed']);
    expect(types('all').sort()).toEqual(['payment_intent.failed', 'payment_intent.succeeded']);
    expect(types('live')).toEqual([]);
    expect({ live: live.livemode, all: all.livemode }).toEqual({ live: true, all: false });
  });

  it('are retried on the schedule and marked failed after the last attempt', async () => {
    const { shop, endpoint, card } = await shopWithEndpoint();
    receiver.behaviour = 'fail';
    await charge(service, shop.test, { amount: 100, card });
    const delivery = async () =>
      (await service.call({ method: 'GET', url: `/v1/webhook_endpoints/${endpoint.id}/deliveries`, key: shop.test })).body.data[0];
    for (const [attempt, delaySeconds] of [[1, 60], [2, 300]] as const) {
      await service.webhooks.deliverDue(100);
      const state = await delivery();
      expect(state.status).toBe('pending');
      expect(state.attempts).toHaveLength(attempt);
      expect(state.attempts.at(-1)).toMatchObject({ number: attempt, statusCode: 500, error: 'answered 500' });
      const waited = (Date.parse(state.nextAttemptAt) - Date.parse(state.attempts.at(-1).attemptedAt)) / 1000;
      expect(waited).toBeGreaterThanOrEqual(delaySeconds - 1);
      expect(waited).toBeLessThanOrEqual(delaySeconds + 2);
      // Not before its time.
      expect(await service.webhooks.deliverDue(100)).toBe(0);
      await makeDue();
    }
    await service.webhooks.deliverDue(100);
    const last = await delivery();
    expect(last).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(last.attempts).toHaveLength(3);
    expect(receivedBy(shop)).toHaveLength(3);
  });

  it('count an attempt its worker died in as made, log it as interrupted, and never send more than the schedule', async () => {
    // Schedule 0, 60, 300: three attempts. The worker dies holding attempt 2, and later attempt 3 of another delivery.
    const { shop, endpoint, card } = await shopWithEndpoint();
    receiver.behaviour = 'fail';
    const deliveries = async () =>
      (await service.call({ method: 'GET', url: `/v1/webhook_endpoints/${endpoint.id}/deliveries`, key: shop.test })).body.data;
    const dieHolding = async () => {
      const leased = await leaseDueDeliveries(service.db, { batchMax: 100, leaseMs: 60_000, firstDelaySeconds: 0, attemptsMax: 3, perEndpointMax: 8, perProductMax: 64 });
      expect(leased.length).toBeGreaterThan(0);
      await service.db.query(`UPDATE webhook_deliveries SET locked_until = now() - interval '1 second' WHERE locked_until IS NOT NULL`);
    };
    await charge(service, shop.test, { amount: 100, card });
    await service.webhooks.deliverDue(100);
    await makeDue();
    await dieHolding();
    await service.webhooks.deliverDue(100);
    const [first] = await deliveries();
    expect(first.attempts.map((attempt: { number: number; error: string }) => [attempt.number, attempt.error])).toEqual([
      [1, 'answered 500'],
      [2, INTERRUPTED_ATTEMPT],
      [3, 'answered 500'],
    ]);
    expect(first.status).toBe('failed');
    expect(receivedBy(shop)).toHaveLength(2);

    await charge(service, shop.test, { amount: 200, card });
    for (let attempt = 1; attempt <= 2; attempt++) {
      await service.webhooks.deliverDue(100);
      await makeDue();
    }
    await dieHolding();
    expect(await service.webhooks.deliverDue(100)).toBe(0);
    const [second] = await deliveries();
    expect(second.attempts.map((attempt: { number: number; error: string }) => [attempt.number, attempt.error])).toEqual([
      [1, 'answered 500'],
      [2, 'answered 500'],
      [3, INTERRUPTED_ATTEMPT],
    ]);
    expect(second).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(receivedBy(shop)).toHaveLength(4);
  });

  it('cut a receiver that does not answer at the timeout', async () => {
    const { shop, endpoint, card } = await shopWithEndpoint();
    receiver.behaviour = 'hang';
    await charge(service, shop.test, { amount: 100, card });
    const started = Date.now();
    await service.webhooks.deliverDue(100);
    expect(Date.now() - started).toBeLessThan(3_000);
    const [delivery] = (await service.call({ method: 'GET', url: `/v1/webhook_endpoints/${endpoint.id}/deliveries`, key: shop.test })).body.data;
    expect(delivery.status).toBe('pending');
    expect(delivery.attempts[0]).toMatchObject({ statusCode: null, error: 'timed out: no answer within 400 ms' });
    expect(delivery.attempts[0].durationMs).toBeGreaterThanOrEqual(350);
  });

  it('record why an attempt got no answer as a classified reason, never the raw network error', async () => {
    // A port nobody listens on, a server that hangs up at once, and a plain HTTP server spoken to over TLS.
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const hangUp = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => hangUp.listen(0, '127.0.0.1', resolve));
    const hangUpPort = (hangUp.address() as net.AddressInfo).port;
    try {
      const cases = [
        [`http://127.0.0.1:${closedPort}/hook`, 'connection refused'],
        [`http://127.0.0.1:${hangUpPort}/hook`, 'connection closed before an answer'],
        [`https://${new URL(receiver.url).host}/hook`, 'TLS error: no secure connection to the endpoint'],
      ] as const;
      for (const [url, reason] of cases) {
        const shop = await service.createMerchant();
        const endpoint = (await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: shop.test, body: { url } })).body;
        const card = await bindCard(service, shop.test, '8600000000000007');
        await charge(service, shop.test, { amount: 100, card });
        await service.webhooks.deliverDue(100);
        const [delivery] = (await service.call({ method: 'GET', url: `/v1/webhook_endpoints/${endpoint.id}/deliveries`, key: shop.test })).body.data;
        expect({ url, error: delivery.attempts[0].error }).toEqual({ url, error: reason });
      }
    } finally {
      await new Promise((resolve) => hangUp.close(resolve));
    }
  });

  it('count a redirect as a failure and never follow it', async () => {
    const { shop, endpoint, card } = await shopWithEndpoint();
    receiver.behaviour = 'redirect';
    await charge(service, shop.test, { amount: 100, card });
    await service.webhooks.deliverDue(100);
    // Earlier tests' deliveries may come due meanwhile on a slow run: only this shop's, and the redirect's target, count.
    expect(receiver.received.map((request) => request.path).filter((path) => path === '/moved' || path === `/hooks/${shop.productId}`)).toEqual([`/hooks/${shop.productId}`]);
    const [delivery] = (await service.call({ method: 'GET', url: `/v1/webhook_endpoints/${endpoint.id}/deliveries`, key: shop.test })).body.data;
    expect(delivery).toMatchObject({ status: 'pending', attempts: [{ statusCode: 302, error: 'answered 302' }] });
  });

  it('carry both signatures while a rolled secret overlaps', async () => {
    const { shop, endpoint, card } = await shopWithEndpoint();
    const rolled = (await service.call({ method: 'POST', url: `/v1/webhook_endpoints/${endpoint.id}/roll_secret`, key: shop.test, body: {} })).body;
    await charge(service, shop.test, { amount: 100, card });
    await deliverAll();
    const [request] = receivedBy(shop);
    const header = String(request!.headers['tolov-signature']);
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(constructEvent(request!.body, header, rolled.secret).type).toBe('payment_intent.succeeded');
    expect(constructEvent(request!.body, header, endpoint.secret).type).toBe('payment_intent.succeeded');
    expect(String(request!.headers['webhook-signature']).split(' ')).toHaveLength(2);
  });

  it('stop for a disabled endpoint, and an event can be sent again', async () => {
    const { shop, endpoint, card } = await shopWithEndpoint();
    await service.call({ method: 'POST', url: `/v1/webhook_endpoints/${endpoint.id}`, key: shop.test, body: { status: 'disabled' } });
    await charge(service, shop.test, { amount: 100, card });
    await deliverAll();
    expect(receivedBy(shop)).toEqual([]);
    await service.call({ method: 'POST', url: `/v1/webhook_endpoints/${endpoint.id}`, key: shop.test, body: { status: 'enabled' } });
    const [event] = (await service.call({ method: 'GET', url: '/v1/events', key: shop.test })).body.data;
    const resent = await service.call({ method: 'POST', url: `/v1/events/${event.id}/resend`, key: shop.test, body: { endpoint: endpoint.id } });
    expect(resent.status).toBe(201);
    expect(resent.body).toMatchObject({ object: 'webhook_delivery', event: event.id, endpoint: endpoint.id, status: 'pending' });
    await deliverAll();
    expect(receivedBy(shop).map((request) => request.headers['tolov-event-id'])).toEqual([event.id]);
    const other = await service.createMerchant();
    expect((await service.call({ method: 'POST', url: `/v1/events/${event.id}/resend`, key: other.test, body: { endpoint: endpoint.id } })).status).toBe(404);
  });

  it('are delivered once per attempt by two workers running at once', async () => {
    const { shop, card } = await shopWithEndpoint();
    for (let i = 0; i < 40; i++) await charge(service, shop.test, { amount: 100 + i, card });
    await Promise.all([deliverAll(), deliverAll(), deliverAll()]);
    const deliveryIds = receivedBy(shop).map((request) => String(request.headers['tolov-delivery-id']));
    expect(deliveryIds).toHaveLength(40);
    expect(new Set(deliveryIds).size).toBe(40);
  });
});

describe('the first attempt', () => {
  it('waits the schedule\'s first delay', async () => {
    const delayed = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true', TOLOV_WEBHOOK_RETRY_SCHEDULE: '120,60' });
    try {
      const shop = await delayed.createMerchant();
      await delayed.call({ method: 'POST', url: '/v1/webhook_endpoints', key: shop.test, body: { url: `${receiver.url}/delayed` } });
      const card = await bindCard(delayed, shop.test, '8600000000000007');
      await charge(delayed, shop.test, { amount: 100, card });
      expect(await delayed.webhooks.deliverDue(100)).toBe(0);
      await delayed.db.query("UPDATE webhook_deliveries SET next_attempt_at = now() - interval '121 seconds'");
      expect(await delayed.webhooks.deliverDue(100)).toBe(1);
      expect(receiver.received.map((request) => request.path)).toEqual(['/delayed']);
    } finally {
      await delayed.stop();
    }
  });
});

describe('the events history', () => {
  it('lists newest first, filters by type, and forgets events after 30 days', async () => {
    const { shop, card } = await shopWithEndpoint();
    await charge(service, shop.test, { amount: 100, card });
    const refusedCard = await bindCard(service, shop.test, '8600000000000015');
    await charge(service, shop.test, { amount: 100, card: refusedCard });
    const all = (await service.call({ method: 'GET', url: '/v1/events', key: shop.test })).body;
    expect(all.data.map((e: { type: string }) => e.type)).toEqual(['payment_intent.failed', 'payment_intent.succeeded']);
    const failed = (await service.call({ method: 'GET', url: '/v1/events?type=payment_intent.failed', key: shop.test })).body;
    expect(failed).toMatchObject({ has_more: false, data: [{ type: 'payment_intent.failed' }] });
    const page = (await service.call({ method: 'GET', url: `/v1/events?limit=1&starting_after=${all.data[0].id}`, key: shop.test })).body;
    expect(page.data.map((e: { id: string }) => e.id)).toEqual([all.data[1].id]);
    expect((await service.call({ method: 'GET', url: '/v1/events', key: shop.live })).body.data).toEqual([]);

    await service.db.query("UPDATE events SET created_at = now() - interval '31 days' WHERE id = $1", [all.data[1].id]);
    expect(await service.webhooks.deleteOldEvents(100)).toBeGreaterThanOrEqual(1);
    const after = (await service.call({ method: 'GET', url: '/v1/events', key: shop.test })).body;
    expect(after.data.map((e: { id: string }) => e.id)).toEqual([all.data[0].id]);
  });
});

describe('the SSRF guard at delivery', () => {
  it('refuses a host name that resolves to a private address, checked when connecting', async () => {
    // A public-looking name that resolves to loopback, as DNS rebinding would make it.
    const rebinding: Lookup = ((hostname: string, _options: unknown, callback: (error: null, addresses: LookupAddress[]) => void) => {
      callback(null, [{ address: '127.0.0.1', family: 4 }]);
      void hostname;
    }) as unknown as Lookup;
    const guarded = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'false' }, { lookup: rebinding });
    try {
      const shop = await guarded.createMerchant();
      const endpoint = (
        await guarded.call({ method: 'POST', url: '/v1/webhook_endpoints', key: shop.test, body: { url: 'https://hooks.example.com/tolov' } })
      ).body;
      const card = await bindCard(guarded, shop.test, '8600000000000007');
      await guarded.call({ method: 'POST', url: '/subscribe/v1/charges', key: shop.test, idempotencyKey: `ssrf-${Date.now()}`, body: { amount: 100, card } });
      await guarded.webhooks.deliverDue(100);
      const [delivery] = (await guarded.call({ method: 'GET', url: `/v1/webhook_endpoints/${endpoint.id}/deliveries`, key: shop.test })).body.data;
      expect(delivery.attempts[0]).toMatchObject({ statusCode: null, error: 'refused: the host resolves to a private address' });
    } finally {
      await guarded.stop();
    }
  });
});
