// Payment links through the merchant API, and the orders buyers open through them (`service.paymentLinks.open`, which
// the link's page calls when the buyer presses Pay): fixed and chosen amounts, every refusal, test and live apart, the
// places `quantityMax` allows, and the races a link's row lock decides.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedLink } from '../../src/modules/payment-links/service.js';
import { engine, explain, idem, startService, type Merchant, type Reply, type TestService } from '../support/harness.js';

const CHECKOUT_URL = 'https://pay.example.uz';
/** Fiscal lines of 15,000.00 so'm: two kilograms at 6,500.00 and the delivery at 2,000.00. */
const LINES = {
  items: [{ title: 'Dried apricots, 1 kg', price: 650_000, count: 2, code: '10813001001000000', packageCode: '1505709', vatPercent: 12 }],
  shipping: { title: 'Delivery in Samarkand', price: 200_000, code: '10112006002000000', packageCode: '1209779', vatPercent: 12 },
};
const LINK_FIELDS = ['active', 'amount', 'amountMax', 'amountMin', 'created', 'description', 'id', 'livemode', 'object', 'qrSvgUrl', 'quantityMax', 'receipt', 'url'];

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService({ TOLOV_CHECKOUT_URL: CHECKOUT_URL });
  merchant = await service.createMerchant({ name: 'Samarkand Dried Fruit' });
});
afterAll(async () => service.stop());

const create = (body: unknown, key = merchant.test, idempotencyKey?: string) =>
  service.call({ method: 'POST', url: '/v1/payment_links', key, body, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) });
const update = (id: string, body: unknown, key = merchant.test) => service.call({ method: 'POST', url: `/v1/payment_links/${id}`, key, body });
const get = (url: string, key = merchant.test) => service.call({ method: 'GET', url, key });

/** A link made as the merchant makes it; fails the test unless it is made. */
async function link(body: Record<string, unknown>, key = merchant.test): Promise<{ id: string; slug: string; body: Record<string, unknown> }> {
  const reply = await create({ description: 'Dried apricots, 1 kg', ...body }, key);
  expect(reply.status, reply.text).toBe(201);
  return { id: reply.body.id, slug: slugOf(reply.body.url), body: reply.body };
}

const slugOf = (url: string) => url.split('/l/')[1]!;
const linksOf = async (productId: string) =>
  (await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payment_links WHERE product_id = $1', [productId]))[0]!.n;
const ordersOf = async (linkId: string) =>
  (await service.db.query<{ id: string }>('SELECT id FROM orders WHERE payment_link_id = $1 ORDER BY created_at, seq', [linkId])).map((row) => row.id);

function opened(result: OpenedLink): { paymentUrl: string; orderId: string } {
  if (result.outcome !== 'opened') throw new Error(`the link did not open an order: ${JSON.stringify(result)}`);
  return result;
}

function expectRefused(reply: Reply, param: string, code = 'VALIDATION_ERROR'): void {
  expect(reply.status, `${param}: ${reply.text}`).toBe(400);
  expect(reply.body, param).toEqual({ statusCode: 400, error: 'Bad Request', code, message: expect.any(String), param, requestId: expect.stringMatching(/^req_/) });
}

describe('creating a payment link', () => {
  it('at a fixed amount with fiscal lines: the whole object, its page and QR code under the checkout URL, read back the same', async () => {
    const reply = await create({ amount: 1_500_000, description: 'Dried apricots, 2 kg, delivered', receipt: LINES, quantityMax: 20 });
    expect(reply.status, reply.text).toBe(201);
    const made = reply.body;
    expect(Object.keys(made).sort()).toEqual(LINK_FIELDS);
    expect(made).toMatchObject({
      object: 'payment_link',
      amount: 1_500_000,
      amountMin: null,
      amountMax: null,
      description: 'Dried apricots, 2 kg, delivered',
      // The lines as sent, each optional field of a line given its value.
      receipt: { items: [{ ...LINES.items[0], discount: 0 }], shipping: LINES.shipping },
      active: true,
      quantityMax: 20,
      livemode: false,
    });
    expect(made.id).toMatch(/^plink_[0-9A-Za-z]{24}$/);
    expect(made.url).toMatch(new RegExp(`^${CHECKOUT_URL}/l/[0-9A-Za-z]{10}$`));
    expect(made.qrSvgUrl).toBe(`${made.url}/qr.svg`);
    expect(Math.abs(Date.parse(made.created) - Date.now())).toBeLessThan(60_000);
    expect((await get(`/v1/payment_links/${made.id}`)).body).toEqual(made);
  });

  it('for an amount the buyer chooses: within 1,000..100,000,000 tiyin by default, or the bounds given', async () => {
    const open = (await link({})).body;
    expect(open).toMatchObject({ amount: null, amountMin: 1_000, amountMax: 100_000_000, receipt: null, quantityMax: null, active: true });
    const bounded = (await link({ amountMin: 500_000, amountMax: 500_000, active: false })).body;
    expect(bounded).toMatchObject({ amount: null, amountMin: 500_000, amountMax: 500_000, active: false });
    expect((await link({ amountMax: 1_000 })).body).toMatchObject({ amountMin: 1_000, amountMax: 1_000 });
    expect((await link({ amountMin: 100_000_000 })).body).toMatchObject({ amountMin: 100_000_000, amountMax: 100_000_000 });
    // Two links never share a slug.
    expect(slugOf(open.url as string)).not.toBe(slugOf(bounded.url as string));
  });

  it('refuses every invalid body with a 400 in the error format, and creates nothing', async () => {
    const shop = await service.createMerchant();
    const description = 'Dried apricots, 1 kg';
    const cases: Array<[Record<string, unknown>, string, string?]> = [
      [{ amount: 0, description }, 'amount'],
      [{ amount: -5, description }, 'amount'],
      [{ amount: 1.5, description }, 'amount'],
      [{ amount: '150000', description }, 'amount'],
      [{ amount: null, description }, 'amount'],
      [{ amount: 1_000_000_000_001, description }, 'amount'],
      [{ amountMin: 999, description }, 'amountMin'],
      [{ amountMin: 100_000_001, description }, 'amountMin'],
      [{ amountMax: 999, description }, 'amountMax'],
      [{ amountMax: 100_000_001, description }, 'amountMax'],
      [{ amountMin: 5_000, amountMax: 4_999, description }, 'amountMin'],
      [{ amountMin: 2_000_000, description, amountMax: 1_500_000 }, 'amountMin'],
      [{ amount: 150_000, amountMin: 1_000, description }, 'amountMin'],
      [{ amount: 150_000, amountMax: 200_000, description }, 'amountMax'],
      [{ receipt: LINES, description }, 'receipt'],
      [{ amount: 1_400_000, receipt: LINES, description }, 'receipt.shipping.price', 'RECEIPT_MISMATCH'],
      [{ amount: 1_600_000, receipt: LINES, description }, 'amount', 'RECEIPT_MISMATCH'],
      [{ amount: 1_500_000, receipt: { items: [] }, description }, 'receipt.items'],
      [{ amount: 1_500_000, receipt: { ...LINES, items: [{ ...LINES.items[0], vatPercent: 15 }] }, description }, 'receipt.items.0.vatPercent'],
      [{ amount: 150_000 }, 'description'],
      [{ amount: 150_000, description: '' }, 'description'],
      [{ amount: 150_000, description: 'x'.repeat(501) }, 'description'],
      [{ amount: 150_000, description: 42 }, 'description'],
      [{ amount: 150_000, description, quantityMax: 0 }, 'quantityMax'],
      [{ amount: 150_000, description, quantityMax: 1_000_001 }, 'quantityMax'],
      [{ amount: 150_000, description, quantityMax: 2.5 }, 'quantityMax'],
      [{ amount: 150_000, description, active: 'yes' }, 'active'],
      [{ amount: 150_000, description, slug: 'my-apricots' }, 'slug'],
      [{ amount: 150_000, description, currency: 'UZS' }, 'currency'],
    ];
    for (const [body, param, code] of cases) expectRefused(await create(body, shop.test), param, code);
    const notJson = await service.call({ method: 'POST', url: '/v1/payment_links', key: shop.test, payload: '{"amount": 150000,' });
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await linksOf(shop.productId)).toBe(0);
    // The limits themselves are taken.
    expect((await create({ amount: 1_500_000, description: 'x'.repeat(500), receipt: LINES, quantityMax: 1_000_000 }, shop.test)).status).toBe(201);
    expect((await create({ description, quantityMax: 1 }, shop.test)).status).toBe(201);
    expect(await linksOf(shop.productId)).toBe(2);
  });

  it('answers a retry under the same Idempotency-Key with the first answer, and makes one link', async () => {
    const shop = await service.createMerchant();
    const key = idem();
    const body = { amount: 990_000, description: 'Almonds, 1 kg' };
    const first = await create(body, shop.test, key);
    const again = await create(body, shop.test, key);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect((await create({ ...body, amount: 1_000_000 }, shop.test, key)).body).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await linksOf(shop.productId)).toBe(1);
  });

  it('is refused to a suspended product, which may still read and deactivate its links; its links open no order', async () => {
    const shop = await service.createMerchant();
    const made = await link({ amount: 200_000 }, shop.test);
    expect((await service.admin('POST', `/admin/v1/products/${shop.productId}/suspend`, { reason: 'Chargebacks under review' })).status).toBe(200);
    const refused = await create({ amount: 200_000, description: 'Raisins' }, shop.test);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'PRODUCT_SUSPENDED' });
    expect(await linksOf(shop.productId)).toBe(1);
    expect((await service.paymentLinks.bySlug(made.slug))?.shop.suspended).toBe(true);
    await expect(service.paymentLinks.open(made.slug, null)).rejects.toMatchObject({ code: 'PRODUCT_SUSPENDED' });
    expect(await ordersOf(made.id)).toEqual([]);
    expect((await get(`/v1/payment_links/${made.id}`, shop.test)).status).toBe(200);
    expect((await update(made.id, { active: false }, shop.test)).body.active).toBe(false);

    await service.admin('POST', `/admin/v1/products/${shop.productId}/resume`);
    expect((await update(made.id, { active: true }, shop.test)).status).toBe(200);
    opened(await service.paymentLinks.open(made.slug, null));
  });
});

describe('reading, listing and changing links', () => {
  it('lists newest first, paged, and by `active`', async () => {
    const shop = await service.createMerchant();
    const ids = [];
    for (const amount of [100_000, 200_000, 300_000, 400_000]) ids.push((await link({ amount }, shop.test)).id);
    await update(ids[1]!, { active: false }, shop.test);
    const page = async (query: string) => (await get(`/v1/payment_links${query}`, shop.test)).body;

    const first = await page('?limit=3');
    expect(first.object).toBe('list');
    expect(first.data.map((item: { id: string }) => item.id)).toEqual([ids[3], ids[2], ids[1]]);
    expect(first.has_more).toBe(true);
    const second = await page(`?limit=3&starting_after=${ids[1]}`);
    expect(second.data.map((item: { id: string }) => item.id)).toEqual([ids[0]]);
    expect(second.has_more).toBe(false);
    expect((await page('')).data).toHaveLength(4);
    expect((await page('?active=true')).data.map((item: { id: string }) => item.id)).toEqual([ids[3], ids[2], ids[0]]);
    expect((await page('?active=false')).data.map((item: { id: string }) => item.id)).toEqual([ids[1]]);
    expect((await page('?active=true&limit=1&starting_after=' + ids[2])).data.map((item: { id: string }) => item.id)).toEqual([ids[0]]);

    expectRefused(await get('/v1/payment_links?active=maybe', shop.test), 'active');
    expectRefused(await get('/v1/payment_links?limit=0', shop.test), 'limit');
    expectRefused(await get('/v1/payment_links?limit=101', shop.test), 'limit');
    expectRefused(await get('/v1/payment_links?amount=100000', shop.test), 'amount');
    // A cursor of another product's link, or of a link the filter leaves out, is no cursor of this list.
    const other = await link({ amount: 100_000 });
    expectRefused(await get(`/v1/payment_links?starting_after=${other.id}`, shop.test), 'starting_after');
    expectRefused(await get(`/v1/payment_links?active=true&starting_after=${ids[1]}`, shop.test), 'starting_after');
  });

  it('changes the description and `active`, nothing else; another product’s link is not found', async () => {
    const made = await link({ amount: 500_000, description: 'Walnuts, 1 kg' });
    const changed = await update(made.id, { description: 'Walnuts, 1 kg, shelled' });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ ...made.body, description: 'Walnuts, 1 kg, shelled' });
    const deactivated = await update(made.id, { active: false });
    expect(deactivated.body).toEqual({ ...made.body, description: 'Walnuts, 1 kg, shelled', active: false });
    expect((await get(`/v1/payment_links/${made.id}`)).body).toEqual(deactivated.body);
    expect((await update(made.id, {})).body).toEqual(deactivated.body);

    for (const [body, param] of [
      [{ amount: 600_000 }, 'amount'],
      [{ quantityMax: 5 }, 'quantityMax'],
      [{ description: '' }, 'description'],
      [{ description: 'x'.repeat(501) }, 'description'],
      [{ active: 'no' }, 'active'],
      [{ active: null }, 'active'],
    ] as const) {
      expectRefused(await update(made.id, body), param);
    }
    expect((await get(`/v1/payment_links/${made.id}`)).body).toEqual(deactivated.body);

    const stranger = await service.createMerchant();
    expect((await get(`/v1/payment_links/${made.id}`, stranger.test)).status).toBe(404);
    expect((await update(made.id, { active: true }, stranger.test)).body).toMatchObject({ code: 'NOT_FOUND' });
    expect((await get('/v1/payment_links/plink_0000000000000000000000000')).body).toMatchObject({ code: 'NOT_FOUND' });
    expect((await get(`/v1/payment_links/${made.id}`)).body.active).toBe(false);
  });

  it('keeps test and live apart: a key sees the links of its own mode only', async () => {
    const shop = await service.createMerchant();
    const testLink = await link({ amount: 1_500_000 }, shop.test);
    // Live links of a product that must give fiscal lines carry them, so a live link fixes its amount.
    expect((await create({ description: 'Donation' }, shop.live)).body).toMatchObject({ code: 'RECEIPT_REQUIRED' });
    expect((await create({ amount: 1_500_000, description: 'Apricots' }, shop.live)).body).toMatchObject({ code: 'RECEIPT_REQUIRED', param: 'receipt' });
    const liveLink = await link({ amount: 1_500_000, receipt: LINES }, shop.live);
    expect(liveLink.body.livemode).toBe(true);

    expect((await get(`/v1/payment_links/${liveLink.id}`, shop.test)).status).toBe(404);
    expect((await get(`/v1/payment_links/${testLink.id}`, shop.live)).status).toBe(404);
    expect((await update(liveLink.id, { active: false }, shop.test)).status).toBe(404);
    expect((await get('/v1/payment_links', shop.test)).body.data.map((item: { id: string }) => item.id)).toEqual([testLink.id]);
    expect((await get('/v1/payment_links', shop.live)).body.data.map((item: { id: string }) => item.id)).toEqual([liveLink.id]);

    const order = opened(await service.paymentLinks.open(liveLink.slug, null));
    expect((await get(`/merchant/v1/orders/${order.orderId}`, shop.live)).body).toMatchObject({ livemode: true, paymentLink: liveLink.id });
    expect((await get(`/merchant/v1/orders/${order.orderId}`, shop.test)).status).toBe(404);
    expect((await get(`/merchant/v1/orders?paymentLink=${liveLink.id}`, shop.test)).body.data).toEqual([]);
    expect((await get(`/merchant/v1/orders?paymentLink=${liveLink.id}`, shop.live)).body.data.map((item: { id: string }) => item.id)).toEqual([order.orderId]);
  });

  it('opens no live order once the product may not take it: fiscal lines required since, or live mode off', async () => {
    const shop = await service.createMerchant({ receiptRequired: false });
    const chosen = await link({}, shop.live);
    const fixed = await link({ amount: 1_500_000, receipt: LINES }, shop.live);
    opened(await service.paymentLinks.open(chosen.slug, 50_000));
    expect((await service.admin('POST', `/admin/v1/products/${shop.productId}`, { receiptRequired: true })).status).toBe(200);
    expect(await service.paymentLinks.open(chosen.slug, 50_000)).toEqual({ outcome: 'inactive' });
    opened(await service.paymentLinks.open(fixed.slug, null));
    await service.db.query('UPDATE products SET live_enabled = false WHERE id = $1', [shop.productId]);
    expect(await service.paymentLinks.open(fixed.slug, null)).toEqual({ outcome: 'inactive' });
    expect((await ordersOf(chosen.id)).length + (await ordersOf(fixed.id)).length).toBe(2);
  });
});

describe('orders opened through a link', () => {
  it('are orders like any other, with `paymentLink`, the link’s description, lines and the orders’ time to pay; the orders list filters by link', async () => {
    const made = await link({ amount: 1_500_000, description: 'Dried apricots, 2 kg, delivered', receipt: LINES });
    const first = opened(await service.paymentLinks.open(made.slug, 777));
    const second = opened(await service.paymentLinks.open(made.slug, null));
    const order = (await get(`/merchant/v1/orders/${first.orderId}`)).body;
    expect(order).toMatchObject({
      status: 'PENDING',
      amount: 1_500_000,
      description: 'Dried apricots, 2 kg, delivered',
      customerRef: null,
      returnUrl: null,
      paymentUrl: first.paymentUrl,
      paymentLink: made.id,
      livemode: false,
    });
    expect(Date.parse(order.expiresAt) - Date.parse(order.created)).toBe(service.config.orderTtlSeconds * 1000);
    // Its payment carries the link's fiscal lines: the sale receipt is made.
    const paid = await service.call({ method: 'POST', url: `/v1/test_helpers/orders/${first.orderId}/pay`, key: merchant.test, body: {} });
    expect(paid.body).toMatchObject({ status: 'PAID', paymentLink: made.id, receipt: expect.stringMatching(/^rcpt_/) });

    const api = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: idem(), body: { amount: 10_000 } });
    expect(api.body.paymentLink).toBeNull();
    const listed = await get(`/merchant/v1/orders?paymentLink=${made.id}`);
    expect(listed.body.data.map((item: { id: string }) => item.id)).toEqual([second.orderId, first.orderId]);
    expect((await get(`/merchant/v1/orders?paymentLink=${made.id}&status=PAID`)).body.data.map((item: { id: string }) => item.id)).toEqual([first.orderId]);
    expect((await get(`/merchant/v1/orders?paymentLink=${made.id}&limit=1`)).body).toMatchObject({ has_more: true });
    expect((await get('/merchant/v1/orders?paymentLink=plink_0000000000000000000000000')).body.data).toEqual([]);
    for (const bad of ['plink_', 'plink_%21%21', 'ord_0000000000000000000000000', `plink_${'0'.repeat(59)}`, 'PLINK_abc']) {
      expectRefused(await get(`/merchant/v1/orders?paymentLink=${bad}`), 'paymentLink');
    }
  });

  it('take the amount the buyer chose within the link’s bounds, and refuse any other', async () => {
    const made = await link({ amountMin: 10_000, amountMax: 2_000_000, description: 'Donation to the school library' });
    for (const chosen of [null, 9_999, 2_000_001, 10_000.5, Number.NaN, -10_000, Number.MAX_SAFE_INTEGER + 2]) {
      expect(await service.paymentLinks.open(made.slug, chosen), String(chosen)).toEqual({ outcome: 'amount', min: 10_000, max: 2_000_000 });
    }
    expect(await ordersOf(made.id)).toEqual([]);
    for (const chosen of [10_000, 2_000_000, 123_456]) {
      const order = opened(await service.paymentLinks.open(made.slug, chosen));
      expect((await get(`/merchant/v1/orders/${order.orderId}`)).body).toMatchObject({ amount: chosen, description: 'Donation to the school library' });
    }
  });

  it('none on a deactivated link, nor on a slug no link has; the page reads the link and its shop', async () => {
    const made = await link({ amount: 300_000 });
    await update(made.id, { active: false });
    expect(await service.paymentLinks.open(made.slug, null)).toEqual({ outcome: 'inactive' });
    expect(await ordersOf(made.id)).toEqual([]);
    expect(await service.paymentLinks.open('NoSuchLnk0', null)).toEqual({ outcome: 'not_found' });
    expect(await service.paymentLinks.open('../../etc', null)).toEqual({ outcome: 'not_found' });
    await update(made.id, { active: true });
    opened(await service.paymentLinks.open(made.slug, null));

    const page = await service.paymentLinks.bySlug(made.slug);
    expect(page).toEqual({
      ...made.body,
      slug: made.slug,
      productId: merchant.productId,
      shop: { name: 'Samarkand Dried Fruit', logoDigest: null, brandColor: null, suspended: false },
    });
    expect(await service.paymentLinks.bySlug('NoSuchLnk0')).toBeNull();
    expect(await service.paymentLinks.bySlug('')).toBeNull();
  });

  it('at most `quantityMax` PENDING or PAID at once: an expired, canceled or failed order frees its place', async () => {
    const made = await link({ amount: 100_000, quantityMax: 3 });
    const open = () => service.paymentLinks.open(made.slug, null);
    const [a, b, c] = [opened(await open()), opened(await open()), opened(await open())];
    expect(await open()).toEqual({ outcome: 'sold_out' });
    const helper = (id: string, action: string, body: unknown = {}) =>
      service.call({ method: 'POST', url: `/v1/test_helpers/orders/${id}/${action}`, key: merchant.test, body });

    expect((await helper(a.orderId, 'pay')).body.status).toBe('PAID');
    expect(await open()).toEqual({ outcome: 'sold_out' });
    expect((await service.call({ method: 'POST', url: `/merchant/v1/orders/${b.orderId}/cancel`, key: merchant.test })).body.status).toBe('CANCELED');
    const d = opened(await open());
    expect(await open()).toEqual({ outcome: 'sold_out' });
    expect((await helper(c.orderId, 'expire')).body.status).toBe('EXPIRED');
    opened(await open());
    expect((await helper(d.orderId, 'pay', { card: '8600000000000015' })).body.status).toBe('FAILED');
    const f = opened(await open());
    expect(await open()).toEqual({ outcome: 'sold_out' });
    // Past its time, an order no debit holds frees its place before the expiry worker comes to it.
    await service.db.query(`UPDATE orders SET expires_at = now() - interval '1 second' WHERE id = $1`, [f.orderId]);
    await service.db.query(`UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE order_id = $1`, [f.orderId]);
    opened(await open());
    expect(await open()).toEqual({ outcome: 'sold_out' });
    expect(await ordersOf(made.id)).toHaveLength(7);
  });
});

describe(`races a link's lock decides (${engine})`, () => {
  it('gives the last place to exactly one of two buyers pressing Pay at once', async () => {
    for (let round = 0; round < 8; round++) {
      const made = await link({ amount: 100_000, quantityMax: 1 });
      const outcomes = await Promise.all([service.paymentLinks.open(made.slug, null), service.paymentLinks.open(made.slug, null)]);
      expect(outcomes.map((outcome) => outcome.outcome).sort(), `round ${round}`).toEqual(['opened', 'sold_out']);
      expect(await ordersOf(made.id)).toHaveLength(1);
    }
    const crowded = await link({ amount: 100_000, quantityMax: 3 });
    const outcomes = await Promise.all(Array.from({ length: 12 }, () => service.paymentLinks.open(crowded.slug, null)));
    expect(outcomes.filter((outcome) => outcome.outcome === 'opened')).toHaveLength(3);
    expect(await ordersOf(crowded.id)).toHaveLength(3);
  });

  it('never opens an order on a link once its deactivation has committed: the order came first, or open answers inactive', async () => {
    for (let round = 0; round < 12; round++) {
      const made = await link({ amount: 100_000 });
      const deactivation = update(made.id, { active: false }).then(async (reply) => ({ reply, ordersWhenCommitted: await ordersOf(made.id) }));
      const [result, { reply, ordersWhenCommitted }] = await Promise.all([service.paymentLinks.open(made.slug, null), deactivation]);
      expect(reply.body.active).toBe(false);
      const orders = await ordersOf(made.id);
      if (result.outcome === 'opened') {
        // Its order committed before the deactivation did: it was there when the deactivation's answer came.
        expect(orders).toEqual([result.orderId]);
        expect(ordersWhenCommitted, `round ${round}`).toEqual(orders);
      } else {
        expect(result, `round ${round}`).toEqual({ outcome: 'inactive' });
        expect(orders).toEqual([]);
      }
      expect(await service.paymentLinks.open(made.slug, null)).toEqual({ outcome: 'inactive' });
    }
  });
});

describe('the indexes of links and their orders', () => {
  it('find a link’s orders by its id, not by scanning the product’s orders', async () => {
    const shop = await service.createMerchant();
    const made = await link({ amount: 100_000 }, shop.test);
    await service.db.query(
      `INSERT INTO orders (id, product_id, livemode, amount, currency, status, checkout_token, expires_at, payment_link_id)
       SELECT 'ord_ix' || g, $1, false, 100, 'UZS', 'EXPIRED', 'cs_ix' || g, now(), CASE WHEN g % 500 = 0 THEN $2 END FROM generate_series(1, 5000) g`,
      [shop.productId, made.id],
    );
    await service.db.exec('ANALYZE orders');
    const listed = await explain(
      service.db,
      `SELECT id FROM orders WHERE product_id = $1 AND livemode = $2 AND payment_link_id = $3 ORDER BY created_at DESC, seq DESC LIMIT 11`,
      [shop.productId, false, made.id],
    );
    expect(listed).toContain('orders_by_payment_link');
    const page = await get(`/merchant/v1/orders?paymentLink=${made.id}&limit=100`, shop.test);
    expect(page.body.data).toHaveLength(10);
  });
});
