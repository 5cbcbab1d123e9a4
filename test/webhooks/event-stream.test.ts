// GET /v1/events/stream: the key's events live as Server-Sent Events, resumable with Last-Event-ID without missing
// one, even when transactions commit out of order; filtered by type; limited per product and mode.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/modules/webhooks/events.js';
import { NEW_PRODUCTS_STREAMS_MAX, STREAMS_PER_NEW_PRODUCT_MAX, STREAMS_PER_PRODUCT_MAX } from '../../src/modules/webhooks/stream.js';
import { engine, idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { bindLiveCard, liveCharge, startLive, type Live } from '../support/live.js';
import { openStream, type OpenedStream } from '../support/sse.js';

let service: TestService;
let merchant: Merchant;
let base: string;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
  base = await service.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => service.stop());

async function newOrder(key = merchant.test): Promise<string> {
  const reply = await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 1_500_000, description: 'Stream test' } });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.id;
}

async function helper(order: string, action: 'pay' | 'expire', key = merchant.test): Promise<string> {
  const reply = await service.call({ method: 'POST', url: `/v1/test_helpers/orders/${order}/${action}`, key, body: {} });
  expect(reply.status, reply.text).toBe(200);
  return order;
}

const payOrder = async () => helper(await newOrder(), 'pay');
const expireOrder = async () => helper(await newOrder(), 'expire');

/** Opens a stream and waits until it is registered (its first bytes arrived). */
async function streamOf(key = merchant.test, options: { types?: string; lastEventId?: string } = {}): Promise<OpenedStream> {
  const stream = await openStream(base, key, options);
  expect(stream.response.status).toBe(200);
  return stream;
}

describe('GET /v1/events/stream', () => {
  it('sends each event as it happens, exactly as the API shows it', async () => {
    const stream = await streamOf();
    expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.response.headers.get('cache-control')).toBe('no-store');
    expect(stream.response.headers.get('request-id')).toMatch(/^req_/);
    const order = await payOrder();
    // Paying an order also makes its payment: its event may come first.
    let frame = await stream.next();
    if (frame.event === 'payment_intent.succeeded') frame = await stream.next();
    stream.close();
    expect(frame.event).toBe('order.paid');
    expect(frame.data.data.id).toBe(order);
    expect(frame.id).toBe(frame.data.id);
    const event = await service.call({ method: 'GET', url: `/v1/events/${frame.id}`, key: merchant.test });
    expect(frame.data).toEqual(event.body);
  });

  it('sends only the types asked for, and refuses a type it never sends', async () => {
    const stream = await streamOf(merchant.test, { types: 'order.expired' });
    await payOrder();
    const expired = await expireOrder();
    const frame = await stream.next();
    stream.close();
    expect(frame.event).toBe('order.expired');
    expect(frame.data.data.id).toBe(expired);

    for (const types of ['order.shipped', 'order.paid,,order.failed', 'webhook_endpoint.test']) {
      const refused = await openStream(base, merchant.test, { types });
      expect(refused.response.status).toBe(400);
      expect(await refused.response.json()).toMatchObject({ code: 'VALIDATION_ERROR', param: 'types' });
    }
  });

  it('resumes after Last-Event-ID with every event since, in order, and nothing before', async () => {
    const types = 'order.paid,order.expired';
    const first = await streamOf(merchant.test, { types });
    await payOrder();
    const seen = await first.next();
    first.close();
    const missed = [await payOrder(), await expireOrder(), await payOrder()];

    const resumed = await streamOf(merchant.test, { types, lastEventId: seen.id! });
    const frames = [await resumed.next(), await resumed.next(), await resumed.next()];
    expect(frames.map((frame) => frame.data.data.id)).toEqual(missed);
    expect(frames.map((frame) => frame.event)).toEqual(['order.paid', 'order.expired', 'order.paid']);
    const later = await payOrder();
    expect((await resumed.next()).data.data.id).toBe(later);
    resumed.close();
  });

  it("refuses a Last-Event-ID that is not an event of the key's product and mode", async () => {
    const stream = await streamOf();
    await payOrder();
    const testEvent = (await stream.next()).id!;
    stream.close();
    const other = await service.createMerchant();
    for (const [key, lastEventId] of [
      [merchant.test, 'evt_doesnotexist'],
      [merchant.live, testEvent],
      [other.test, testEvent],
    ] as const) {
      const refused = await openStream(base, key, { lastEventId });
      expect(refused.response.status).toBe(400);
      expect(await refused.response.json()).toMatchObject({ code: 'VALIDATION_ERROR', param: 'Last-Event-ID' });
    }
    const unauthenticated = await fetch(`${base}/v1/events/stream`);
    expect(unauthenticated.status).toBe(401);
  });

  it(`lets a product without a live payment keep ${STREAMS_PER_NEW_PRODUCT_MAX} streams open in each mode, and no more`, async () => {
    const shop = await service.createMerchant();
    const open = await Promise.all(Array.from({ length: STREAMS_PER_NEW_PRODUCT_MAX }, () => streamOf(shop.test)));
    const refused = await openStream(base, shop.test);
    expect(refused.response.status).toBe(429);
    expect(refused.response.headers.get('retry-after')).toBe('5');
    expect(await refused.response.json()).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('until its first live payment') });
    // Another mode, another product: unaffected.
    const live = await streamOf(shop.live);
    const other = await streamOf((await service.createMerchant()).test);
    // A closed stream makes room (once the server has seen it go).
    open[0]!.close();
    let reopened = await openStream(base, shop.test);
    for (let attempt = 0; reopened.response.status === 429 && attempt < 100; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      reopened = await openStream(base, shop.test);
    }
    expect(reopened.response.status).toBe(200);
    for (const stream of [...open, live, other, reopened]) stream.close();
  });

  it('wakes streams in any process: committing events notifies their product and mode', async () => {
    const payloads: string[] = [];
    const stop = await service.db.listen('tolov_events', { notified: (payload) => payloads.push(payload), listening: () => {} });
    await payOrder();
    for (let attempt = 0; payloads.length === 0 && attempt < 200; attempt++) await new Promise((resolve) => setTimeout(resolve, 10));
    await stop();
    expect(payloads).toContain(`${merchant.productId}/test`);
    expect(payloads.every((payload) => /^\w+\/(test|live)$/.test(payload)), payloads.join()).toBe(true);
  });

  it.runIf(engine === 'postgres')('never skips an event whose transaction commits after a later one', async () => {
    const stream = await streamOf();
    let release!: () => void;
    let written!: () => void;
    const wroteFirst = new Promise<void>((resolve) => (written = resolve));
    const slow = service.db.transaction(async (tx) => {
      recordEvent(tx, { productId: merchant.productId, livemode: false, type: 'order.paid', data: { id: 'ord_slowtransaction', object: 'order' } });
      // A write goes to the server with the transaction's next statement: the event is written now.
      await tx.query('SELECT 1 AS sent');
      written();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await wroteFirst;
    // Written after, committed before: its seq is higher, and it is visible while the first is not.
    const quick = await payOrder();
    release();
    await slow;
    const frames = [await stream.next(), await stream.next()];
    stream.close();
    expect(frames.map((frame) => frame.data.data.id)).toEqual(['ord_slowtransaction', quick]);
  });

  it('keeps a quiet stream open past the server\'s idle-connection timeout (10 s)', async () => {
    const shop = await service.createMerchant();
    const stream = await streamOf(shop.test);
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    const order = await helper(await newOrder(shop.test), 'pay', shop.test);
    let frame = await stream.next();
    if (frame.event === 'payment_intent.succeeded') frame = await stream.next();
    stream.close();
    expect(frame.data.data.id).toBe(order);
  }, 20_000);

  it('ends open streams when the service stops', async () => {
    const own = await startService();
    const shop = await own.createMerchant();
    const ownBase = await own.app.listen({ port: 0, host: '127.0.0.1' });
    const stream = await openStream(ownBase, shop.test);
    expect(stream.response.status).toBe(200);
    await own.stop();
    expect(await stream.ended()).toBe(true);
  });
});

describe('stream slots of products that take live payments', () => {
  let live: Live;
  let liveBase: string;
  beforeAll(async () => {
    live = await startLive();
    liveBase = await live.service.app.listen({ port: 0, host: '127.0.0.1' });
    const charged = await liveCharge(live, await bindLiveCard(live, '8600000000000007'), 100_000);
    expect(charged.body.status).toBe('SUCCEEDED');
  });
  afterAll(async () => live.stop());

  it(`stay free however many products without a live payment open streams: those share ${NEW_PRODUCTS_STREAMS_MAX}`, async () => {
    const signUps = await Promise.all(Array.from({ length: NEW_PRODUCTS_STREAMS_MAX / STREAMS_PER_NEW_PRODUCT_MAX + 1 }, () => live.service.createMerchant()));
    const opened: OpenedStream[] = [];
    for (const shop of signUps) for (let n = 0; n < STREAMS_PER_NEW_PRODUCT_MAX; n++) opened.push(await openStream(liveBase, shop.test));
    const statuses = opened.map((stream) => stream.response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(NEW_PRODUCTS_STREAMS_MAX);
    expect(statuses.slice(NEW_PRODUCTS_STREAMS_MAX)).toEqual(Array(STREAMS_PER_NEW_PRODUCT_MAX).fill(429));
    expect((await opened.at(-1)!.response.json()).message).toContain('without a live payment');

    // The product that took a live payment opens all of its share, in either mode.
    const own = await Promise.all(Array.from({ length: STREAMS_PER_PRODUCT_MAX }, () => openStream(liveBase, live.merchant.test)));
    expect(own.map((stream) => stream.response.status)).toEqual(Array(STREAMS_PER_PRODUCT_MAX).fill(200));
    expect((await openStream(liveBase, live.merchant.test)).response.status).toBe(429);
    const ownLive = await openStream(liveBase, live.merchant.live);
    expect(ownLive.response.status).toBe(200);
    for (const stream of [...opened, ...own, ownLive]) stream.close();
  });
});
