import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Merchant, type TestService } from '../support/harness.js';

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
});
afterAll(() => service.stop());

const create = (body: Record<string, unknown>, key = merchant.test) => service.call({ method: 'POST', url: '/v1/webhook_endpoints', key, body });

describe('webhook endpoints', () => {
  it('are created with a secret shown once, in the mode of the key', async () => {
    const reply = await create({ url: 'https://hooks.example.com/tolov', enabledEvents: ['order.paid'], description: 'Orders' });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      object: 'webhook_endpoint',
      url: 'https://hooks.example.com/tolov',
      enabledEvents: ['order.paid'],
      description: 'Orders',
      status: 'enabled',
      livemode: false,
    });
    expect(reply.body.id).toMatch(/^we_/);
    expect(reply.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(reply.body.secret.slice(6), 'base64')).toHaveLength(32);
    const read = await service.call({ method: 'GET', url: `/v1/webhook_endpoints/${reply.body.id}`, key: merchant.test });
    expect(read.body.secret).toBeUndefined();
    expect(read.body).toEqual({ ...reply.body, secret: undefined });
    expect((await create({ url: 'https://hooks.example.com/live' }, merchant.live)).body.livemode).toBe(true);
  });

  it('are created once for a repeated Idempotency-Key, secret included', async () => {
    const key = `endpoint-${Date.now()}`;
    const body = { url: 'https://hooks.example.com/once' };
    const first = await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: merchant.test, idempotencyKey: key, body });
    const second = await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: merchant.test, idempotencyKey: key, body });
    expect(second.text).toBe(first.text);
    expect(second.headers['idempotent-replayed']).toBe('true');
    const rows = await service.db.query("SELECT id FROM webhook_endpoints WHERE url = 'https://hooks.example.com/once'");
    expect(rows).toHaveLength(1);
  });

  it('default to every event type', async () => {
    expect((await create({ url: 'https://hooks.example.com/all' })).body.enabledEvents).toEqual([]);
  });

  it('accept a host name that does not resolve yet', async () => {
    expect((await create({ url: 'https://not-yet-live.invalid.example/hook' })).status).toBe(201);
  });

  it.each([
    [{ url: 'http://hooks.example.com/tolov' }, 'url'],
    [{ url: 'https://127.0.0.1/tolov' }, 'url'],
    [{ url: 'https://localhost/tolov' }, 'url'],
    [{ url: 'https://169.254.169.254/latest' }, 'url'],
    [{ url: 'https://[::1]/x' }, 'url'],
    [{ url: 'https://hooks.example.com/x', enabledEvents: ['order.shipped'] }, 'enabledEvents.0'],
    [{ url: 'https://hooks.example.com/x', enabledEvents: ['order.paid', 'order.paid'] }, 'enabledEvents'],
    [{ url: 'https://hooks.example.com/x', secret: 'mine' }, 'secret'],
    [{}, 'url'],
  ])('refuse %j', async (body, param) => {
    const reply = await create(body);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'VALIDATION_ERROR', param });
  });

  it('say how to aim them at a development machine when refusing a local or plain-http URL', async () => {
    for (const url of ['http://hooks.example.com/tolov', 'http://localhost:3000/webhooks', 'https://127.0.0.1/tolov']) {
      const message = (await create({ url })).body.message;
      expect(message).toContain('tolov listen --forward-to');
      expect(message).toContain('TOLOV_WEBHOOK_ALLOW_PRIVATE=true');
    }
    expect((await create({ url: 'not a url' })).body.message).not.toContain('TOLOV_WEBHOOK_ALLOW_PRIVATE');
  });

  it('take the subscribable but never sent types', async () => {
    const reply = await create({ url: 'https://hooks.example.com/x', enabledEvents: ['refund.succeeded', 'payment_intent.canceled'] });
    expect(reply.status).toBe(201);
  });

  it('are listed, updated, disabled, enabled and deleted', async () => {
    const shop = await service.createMerchant();
    const first = (await create({ url: 'https://hooks.example.com/1' }, shop.test)).body;
    const second = (await create({ url: 'https://hooks.example.com/2' }, shop.test)).body;
    const list = await service.call({ method: 'GET', url: '/v1/webhook_endpoints', key: shop.test });
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([second.id, first.id]);

    const updated = await service.call({
      method: 'POST',
      url: `/v1/webhook_endpoints/${first.id}`,
      key: shop.test,
      body: { url: 'https://hooks.example.com/one', enabledEvents: ['payment_intent.failed'], description: 'Failures', status: 'disabled' },
    });
    expect(updated.body).toMatchObject({ url: 'https://hooks.example.com/one', enabledEvents: ['payment_intent.failed'], description: 'Failures', status: 'disabled' });
    const enabled = await service.call({ method: 'POST', url: `/v1/webhook_endpoints/${first.id}`, key: shop.test, body: { status: 'enabled' } });
    expect(enabled.body).toMatchObject({ status: 'enabled', url: 'https://hooks.example.com/one' });
    const badUrl = await service.call({ method: 'POST', url: `/v1/webhook_endpoints/${first.id}`, key: shop.test, body: { url: 'http://10.0.0.1/' } });
    expect(badUrl.status).toBe(400);

    const deleted = await service.call({ method: 'DELETE', url: `/v1/webhook_endpoints/${first.id}`, key: shop.test });
    expect(deleted.body).toEqual({ id: first.id, object: 'webhook_endpoint', deleted: true });
    expect((await service.call({ method: 'GET', url: `/v1/webhook_endpoints/${first.id}`, key: shop.test })).status).toBe(404);
    expect((await service.call({ method: 'DELETE', url: `/v1/webhook_endpoints/${first.id}`, key: shop.test })).status).toBe(404);
    const after = await service.call({ method: 'GET', url: '/v1/webhook_endpoints', key: shop.test });
    expect(after.body.data.map((e: { id: string }) => e.id)).toEqual([second.id]);
  });

  it('roll their secret, which is shown once', async () => {
    const endpoint = (await create({ url: 'https://hooks.example.com/roll' })).body;
    const rolled = await service.call({ method: 'POST', url: `/v1/webhook_endpoints/${endpoint.id}/roll_secret`, key: merchant.test, body: { overlapSeconds: 600 } });
    expect(rolled.status).toBe(200);
    expect(rolled.body.secret).toMatch(/^whsec_/);
    expect(rolled.body.secret).not.toBe(endpoint.secret);
    const tooLong = await service.call({ method: 'POST', url: `/v1/webhook_endpoints/${endpoint.id}/roll_secret`, key: merchant.test, body: { overlapSeconds: 8 * 86_400 } });
    expect(tooLong.body.param).toBe('overlapSeconds');
  });

  it("answer another product's or mode's endpoint with 404 on every call", async () => {
    const endpoint = (await create({ url: 'https://hooks.example.com/mine' })).body;
    const other = await service.createMerchant();
    for (const key of [other.test, merchant.live]) {
      for (const [method, url, body] of [
        ['GET', `/v1/webhook_endpoints/${endpoint.id}`, undefined],
        ['POST', `/v1/webhook_endpoints/${endpoint.id}`, { description: 'x' }],
        ['DELETE', `/v1/webhook_endpoints/${endpoint.id}`, undefined],
        ['POST', `/v1/webhook_endpoints/${endpoint.id}/roll_secret`, {}],
        ['GET', `/v1/webhook_endpoints/${endpoint.id}/deliveries`, undefined],
      ] as const) {
        expect((await service.call({ method, url, key, body })).status).toBe(404);
      }
    }
    expect((await service.call({ method: 'GET', url: `/v1/webhook_endpoints/${endpoint.id}`, key: merchant.test })).body.description).toBeNull();
  });
});

describe('limits on endpoints and resends', () => {
  it('caps endpoints per product and mode, with concurrent creations at the limit deciding exactly one winner', async () => {
    const capped = await startService({ TOLOV_WEBHOOK_ENDPOINTS_MAX: '4' });
    try {
      const shop = await capped.createMerchant();
      const make = (n: number, key = shop.test) =>
        capped.call({ method: 'POST', url: '/v1/webhook_endpoints', key, body: { url: `https://hooks.example.com/${n}` } });
      for (let n = 0; n < 3; n++) expect((await make(n)).status).toBe(201);
      const racing = await Promise.all([3, 4, 5].map((n) => make(n)));
      expect(racing.map((reply) => reply.status).sort()).toEqual([201, 409, 409]);
      const refused = racing.find((reply) => reply.status === 409)!;
      expect(refused.body).toMatchObject({ code: 'LIMIT_REACHED', message: expect.stringContaining('at most 4 webhook endpoints in test mode') });
      // The other mode has its own allowance; a deleted endpoint frees its place.
      expect((await make(6, shop.live)).status).toBe(201);
      const listed = (await capped.call({ method: 'GET', url: '/v1/webhook_endpoints?limit=100', key: shop.test })).body.data;
      expect(listed).toHaveLength(4);
      await capped.call({ method: 'DELETE', url: `/v1/webhook_endpoints/${listed[0].id}`, key: shop.test });
      expect((await make(7)).status).toBe(201);
    } finally {
      await capped.stop();
    }
  });

  it('resends only to an endpoint that subscribes to the type, at most 10 deliveries of an event to one endpoint', async () => {
    const shop = await service.createMerchant();
    const orders = (await create({ url: 'https://hooks.example.com/orders', enabledEvents: ['order.paid'] }, shop.test)).body;
    const all = (await create({ url: 'https://hooks.example.com/all' }, shop.test)).body;
    const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: `o-${Date.now()}`, body: { amount: 100 } });
    await service.db.query(`UPDATE orders SET expires_at = now() WHERE id = $1`, [order.body.id]);
    await service.orders.expireDue(100);
    const [event] = (await service.call({ method: 'GET', url: '/v1/events?type=order.expired', key: shop.test })).body.data;
    const resend = (endpoint: string) => service.call({ method: 'POST', url: `/v1/events/${event.id}/resend`, key: shop.test, body: { endpoint } });
    const unsubscribed = await resend(orders.id);
    expect({ status: unsubscribed.status, code: unsubscribed.body.code }).toEqual({ status: 409, code: 'INVALID_STATE' });
    expect(unsubscribed.body.message).toContain('does not subscribe to order.expired');
    // The event's first delivery and nine resends; the tenth resend is refused.
    for (let i = 0; i < 9; i++) expect((await resend(all.id)).status).toBe(201);
    const flooded = await resend(all.id);
    expect({ status: flooded.status, code: flooded.body.code }).toEqual({ status: 409, code: 'LIMIT_REACHED' });
    const [{ n }] = (await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2', [
      event.id,
      all.id,
    ])) as [{ n: number }];
    expect(n).toBe(10);
  });

  /** An order.expired event of a new merchant with seven endpoints (nine resends each stay under the per-event cap). */
  async function eventWithEndpoints() {
    const shop = await service.createMerchant();
    const endpoints = await Promise.all(Array.from({ length: 7 }, (_, n) => create({ url: `https://hooks.example.com/r${n}` }, shop.test)));
    const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: `r-${Date.now()}`, body: { amount: 100 } });
    await service.db.query(`UPDATE orders SET expires_at = now() WHERE id = $1`, [order.body.id]);
    await service.orders.expireDue(100);
    const [event] = (await service.call({ method: 'GET', url: '/v1/events?type=order.expired', key: shop.test })).body.data;
    const resend = (endpoint: { body: { id: string } }, idempotencyKey?: string) =>
      service.call({ method: 'POST', url: `/v1/events/${event.id}/resend`, key: shop.test, idempotencyKey, body: { endpoint: endpoint.body.id } });
    return { endpoints, resend };
  }

  it('limits resends per product to 60 a minute', async () => {
    const { endpoints, resend } = await eventWithEndpoints();
    const statuses: number[] = [];
    for (const endpoint of endpoints) {
      for (let i = 0; i < 9; i++) statuses.push((await resend(endpoint)).status);
    }
    expect(statuses.filter((status) => status === 201)).toHaveLength(60);
    expect(statuses.slice(60)).toEqual([429, 429, 429]);
  });

  it('counts a resend replayed under its idempotency key once against that limit', async () => {
    const { endpoints, resend } = await eventWithEndpoints();
    const first = await resend(endpoints[0]!, 'resend-once');
    expect(first.status).toBe(201);
    for (let i = 0; i < 60; i++) {
      const replay = await resend(endpoints[0]!, 'resend-once');
      expect({ status: replay.status, id: replay.body.id }).toEqual({ status: 201, id: first.body.id });
    }
    // The replays changed nothing, so 59 new resends still fit in the minute, and the next is refused.
    const statuses: number[] = [];
    for (const endpoint of endpoints.slice(1)) {
      for (let i = 0; i < 9; i++) statuses.push((await resend(endpoint)).status);
    }
    for (let i = 0; i < 6; i++) statuses.push((await resend(endpoints[0]!)).status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(59);
    expect(statuses.slice(59)).toEqual([429]);
  });

});
