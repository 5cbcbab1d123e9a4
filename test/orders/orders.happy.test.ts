import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { receiptFor } from '../support/receipts.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService({ TOLOV_ORDER_TTL_SECONDS: '600', TOLOV_CHECKOUT_URL: 'https://pay.example.uz' });
  merchant = await service.createMerchant();
});
afterAll(() => service.stop());

const createOrder = (body: unknown, key = merchant.test) =>
  service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body });

describe('creating an order', () => {
  it('returns the full order with every field of the interface', async () => {
    const reply = await createOrder({
      amount: 1_250_000,
      description: 'Two kilos of apricots',
      customerRef: 'cust-42',
      returnUrl: 'https://shop.example.uz/orders/42?ok=1',
    });
    expect(reply.status).toBe(201);
    const order = reply.body;
    expect(Object.keys(order).sort()).toEqual(
      [
        'amount', 'captureMethod', 'created', 'currency', 'customerRef', 'description', 'expiresAt', 'failureCode', 'id', 'livemode', 'object', 'paidAt',
        'paymentIntent', 'paymentLink', 'paymentUrl', 'receipt', 'returnUrl', 'saveCard', 'savedCard', 'status',
      ].sort(),
    );
    expect(order).toMatchObject({
      object: 'order',
      amount: 1_250_000,
      currency: 'UZS',
      status: 'PENDING',
      description: 'Two kilos of apricots',
      customerRef: 'cust-42',
      returnUrl: 'https://shop.example.uz/orders/42?ok=1',
      saveCard: false,
      paymentIntent: null,
      savedCard: null,
      paidAt: null,
      receipt: null,
      paymentLink: null,
      captureMethod: 'automatic',
      livemode: false,
    });
    expect(order.id).toMatch(/^ord_[0-9A-Za-z]{24}$/);
    expect(order.paymentUrl).toMatch(/^https:\/\/pay\.example\.uz\/pay\/cs_[0-9A-Za-z]{40}$/);
    expect(order.created).toMatch(ISO_MS);
    expect(order.expiresAt).toMatch(ISO_MS);
    expect(Date.parse(order.expiresAt) - Date.parse(order.created)).toBe(600_000);
    expect(Math.abs(Date.parse(order.created) - Date.now())).toBeLessThan(60_000);
  });

  it('needs only an amount; absent optional fields read as null', async () => {
    const reply = await createOrder({ amount: 1 });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ amount: 1, description: null, customerRef: null, returnUrl: null });
  });

  it('accepts the largest amount, 10^12 tiyin', async () => {
    expect((await createOrder({ amount: 1_000_000_000_000 })).body.amount).toBe(1_000_000_000_000);
  });

  it('accepts fields at their length limits', async () => {
    const returnUrl = `https://shop.uz/${'p'.repeat(2048 - 'https://shop.uz/'.length)}`;
    const reply = await createOrder({ amount: 5, description: 'd'.repeat(500), customerRef: 'c'.repeat(255), returnUrl });
    expect(reply.status).toBe(201);
    expect(reply.body.returnUrl).toBe(returnUrl);
  });

  it('gives every order its own payment token and opens its checkout session', async () => {
    const first = (await createOrder({ amount: 10 })).body;
    const second = (await createOrder({ amount: 10 })).body;
    expect(first.paymentUrl).not.toBe(second.paymentUrl);
    const token = first.paymentUrl.split('/pay/')[1];
    const [session] = await service.db.query<{ order_id: string; status: string; expires_at: Date; product_id: string; livemode: boolean }>(
      'SELECT order_id, status, expires_at, product_id, livemode FROM checkout_sessions WHERE token = $1',
      [token],
    );
    expect(session).toMatchObject({ order_id: first.id, status: 'PENDING', product_id: merchant.productId, livemode: false });
    expect(session!.expires_at.toISOString()).toBe(first.expiresAt);
  });

  it('creates live orders with a live key', async () => {
    expect((await createOrder({ amount: 10, receipt: receiptFor(10) }, merchant.live)).body.livemode).toBe(true);
  });
});

describe('reading an order', () => {
  it('returns the same order as creation did', async () => {
    const created = await createOrder({ amount: 77_700, description: 'Somsa', customerRef: 'c1', returnUrl: 'http://localhost:3000/back' });
    const read = await service.call({ method: 'GET', url: `/merchant/v1/orders/${created.body.id}`, key: merchant.test });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it('answers an unknown id with 404 NOT_FOUND', async () => {
    const reply = await service.call({ method: 'GET', url: '/merchant/v1/orders/ord_0000000000000000nothing0', key: merchant.test });
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ code: 'NOT_FOUND', message: 'No such order' });
  });
});

describe('listing orders', () => {
  it('pages newest first in a strict order, with an exact has_more', async () => {
    const shop = await service.createMerchant();
    const ids: string[] = [];
    // Created concurrently, so many share a millisecond: the order must still be strict and stable.
    for (let batch = 0; batch < 5; batch++) {
      const replies = await Promise.all(Array.from({ length: 5 }, (_, i) => createOrder({ amount: batch * 5 + i + 1 }, shop.test)));
      for (const reply of replies) ids.push(reply.body.id);
    }
    const pages: { data: { id: string }[]; has_more: boolean }[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 4; page++) {
      const url = `/merchant/v1/orders?limit=10${cursor ? `&starting_after=${cursor}` : ''}`;
      const reply = await service.call({ method: 'GET', url, key: shop.test });
      expect(reply.status).toBe(200);
      expect(reply.body.object).toBe('list');
      pages.push(reply.body);
      if (!reply.body.has_more) break;
      cursor = reply.body.data.at(-1).id;
    }
    expect(pages.map((page) => page.data.length)).toEqual([10, 10, 5]);
    expect(pages.map((page) => page.has_more)).toEqual([true, true, false]);
    const listed = pages.flatMap((page) => page.data.map((order) => order.id));
    expect(new Set(listed).size).toBe(25);
    expect(listed.sort()).toEqual([...ids].sort());
    // Newest first: by creation time, and for orders created in the same instant by their insertion in the table.
    const seqs = await service.db.query<{ id: string }>('SELECT id FROM orders WHERE product_id = $1 ORDER BY created_at DESC, seq DESC', [shop.productId]);
    expect(pages.flatMap((page) => page.data.map((order) => order.id))).toEqual(seqs.map((row) => row.id));
  });

  it('defaults to 10 and allows 100', async () => {
    const shop = await service.createMerchant();
    for (let i = 0; i < 12; i++) await createOrder({ amount: 100 + i }, shop.test);
    const byDefault = await service.call({ method: 'GET', url: '/merchant/v1/orders', key: shop.test });
    expect(byDefault.body.data).toHaveLength(10);
    expect(byDefault.body.has_more).toBe(true);
    expect(byDefault.body.data[0].amount).toBe(111);
    const all = await service.call({ method: 'GET', url: '/merchant/v1/orders?limit=100', key: shop.test });
    expect(all.body.data).toHaveLength(12);
    expect(all.body.has_more).toBe(false);
  });

  it('has_more is false when the page ends exactly at the last order', async () => {
    const shop = await service.createMerchant();
    for (let i = 0; i < 3; i++) await createOrder({ amount: 1 }, shop.test);
    const reply = await service.call({ method: 'GET', url: '/merchant/v1/orders?limit=3', key: shop.test });
    expect(reply.body.data).toHaveLength(3);
    expect(reply.body.has_more).toBe(false);
  });

  it('lists an order exactly as GET returns it', async () => {
    const shop = await service.createMerchant();
    const created = await createOrder({ amount: 9, customerRef: 'x' }, shop.test);
    const list = await service.call({ method: 'GET', url: '/merchant/v1/orders', key: shop.test });
    expect(list.body.data).toEqual([created.body]);
  });

  it('returns an empty list for a merchant without orders', async () => {
    const shop = await service.createMerchant();
    const reply = await service.call({ method: 'GET', url: '/merchant/v1/orders', key: shop.test });
    expect(reply.body).toEqual({ object: 'list', data: [], has_more: false });
  });
});
