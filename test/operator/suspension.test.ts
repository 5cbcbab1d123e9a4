// Suspension: the operator suspends a product that must not take payments. Its calls that move money, bind a card or
// create an order answer 403 PRODUCT_SUSPENDED and write nothing; its hosted pages say the shop cannot take payments;
// its payouts wait; reads, refunds of past payments and the dashboard go on, with a banner; resuming restores all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/db.js';
import { createService } from '../../src/service.js';
import { loadConfig } from '../../src/config.js';
import { ADMIN_TOKEN, createPostgresDatabase, engine, idem, SECRETS_KEY, startService, type Merchant, type TestService } from '../support/harness.js';
import { bindCard, createBinding, submitCard } from '../support/binding.js';
import { balance, chargeCard } from '../support/payments.js';
import { makeAvailable, setPayoutAccount } from '../support/payouts.js';
import { DashboardClient, uniqueEmail } from '../dashboard/client.js';
import { waitFor } from '../support/wait.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.stop());

const REASON = 'Sells goods that may not be sold online';
const suspend = (productId: string, reason = REASON) => service.admin('POST', `/admin/v1/products/${productId}/suspend`, { reason });
const resume = (productId: string) => service.admin('POST', `/admin/v1/products/${productId}/resume`);

/** Every call that moves money, binds a card or makes an order, as a merchant's server makes it. */
function moneyCalls(shop: Merchant, card: string, intent: string) {
  const post = (url: string, body: unknown) => service.call({ method: 'POST', url, key: shop.test, idempotencyKey: idem(), body });
  return {
    charge: () => post('/subscribe/v1/charges', { amount: 100_000, card }),
    order: () => post('/merchant/v1/orders', { amount: 100_000 }),
    binding: () => post('/subscribe/v1/card_bindings', {}),
    intent: () => post('/v1/payment_intents', { amount: 100_000, card }),
    confirm: () => post(`/v1/payment_intents/${intent}/confirm`, undefined),
    payout: () => post('/v1/payouts', { amount: 100 }),
  };
}

const countRows = async (productId: string) =>
  (
    await service.db.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM payment_intents WHERE product_id = $1) + (SELECT count(*) FROM orders WHERE product_id = $1)
            + (SELECT count(*) FROM card_bindings WHERE product_id = $1) + (SELECT count(*) FROM payouts WHERE product_id = $1) AS n`,
      [productId],
    )
  )[0]!.n;

describe('a suspended product', () => {
  it('is refused every call that moves money, binds a card or makes an order, writing nothing; resumed, all work again', async () => {
    const shop = await service.createMerchant();
    const card = await bindCard(service, shop.test, '8600000000000007');
    const paid = await makeAvailable(service, shop.test, 2_000_000);
    const refunded = await makeAvailable(service, shop.test, 1_000_000);
    await setPayoutAccount(service, shop.productId);
    const waiting = (await service.call({ method: 'POST', url: '/v1/payment_intents', key: shop.test, idempotencyKey: idem(), body: { amount: 5_000, card } })).body;
    const suspended = await suspend(shop.productId);
    expect(suspended.status).toBe(200);
    expect(suspended.body.suspension).toEqual({ since: expect.any(String), reason: REASON });
    expect((await service.admin('GET', `/admin/v1/products/${shop.productId}`)).body.suspension).toEqual(suspended.body.suspension);

    const before = await countRows(shop.productId);
    const calls = moneyCalls(shop, card, waiting.id);
    for (const [name, call] of Object.entries(calls)) {
      const refused = await call();
      expect(refused.status, name).toBe(403);
      expect(refused.body.code, name).toBe('PRODUCT_SUSPENDED');
    }
    expect(await countRows(shop.productId)).toBe(before);
    expect((await service.call({ method: 'POST', url: '/v1/test_helpers/payouts/run', key: shop.test })).body.code).toBe('PRODUCT_SUSPENDED');

    // Reads and refunds of past payments go on.
    expect((await balance(service, shop.test)).available).toBe(2_970_000);
    expect((await service.call({ method: 'GET', url: `/subscribe/v1/charges/${paid.id}`, key: shop.test })).status).toBe(200);
    const refund = await service.call({ method: 'POST', url: '/v1/refunds', key: shop.test, idempotencyKey: idem(), body: { paymentIntent: refunded.id } });
    expect(refund.status).toBe(201);
    expect(refund.body.status).toBe('SUCCEEDED');

    expect((await resume(shop.productId)).body.suspension).toBeNull();
    for (const [name, call] of Object.entries(calls)) expect((await call()).status, name).toBeLessThan(300);
  });

  it("says on its hosted pages that the shop cannot take payments, and refuses the buyer's card", async () => {
    const shop = await service.createMerchant();
    const order = (await service.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: idem(), body: { amount: 150_000 } })).body;
    const binding = await createBinding(service, shop.test);
    await suspend(shop.productId);
    const page = await service.call({ method: 'GET', url: new URL(order.paymentUrl).pathname, headers: { 'accept-language': 'en' } });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1 id="title">This shop cannot take payments now</h1>');
    expect(page.text).toContain('Nothing was charged. Go back to the shop, or try again later.');
    const ru = await service.call({ method: 'GET', url: new URL(binding.url).pathname, headers: { 'accept-language': 'ru' } });
    expect(ru.text).toContain('Этот магазин сейчас не принимает платежи');
    const token = new URL(order.paymentUrl).pathname.split('/').pop()!;
    const state = await service.call({ method: 'GET', url: `/checkout/v1/sessions/${token}` });
    expect(state.body).toMatchObject({ status: 'PENDING', shopSuspended: true });
    const refused = await submitCard(service, token, { pan: '8600000000000007' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('PRODUCT_SUSPENDED');
    expect((await submitCard(service, binding.clientToken, { pan: '8600000000000007' })).body.code).toBe('PRODUCT_SUSPENDED');
    // The refusal spent no attempt: resumed, the buyer pays as if nothing happened.
    await resume(shop.productId);
    expect((await service.call({ method: 'GET', url: `/checkout/v1/sessions/${token}` })).body).toMatchObject({ shopSuspended: false, cardAttemptsLeft: 3 });
    expect((await submitCard(service, token, { pan: '8600000000000007' })).status).toBe(200);
  });

  it('has its payouts wait, automatic and PENDING alike, until it is resumed', async () => {
    const shop = await service.createMerchant();
    await setPayoutAccount(service, shop.productId);
    await makeAvailable(service, shop.test, 3_000_000);
    const pending = (await service.call({ method: 'POST', url: '/v1/payouts', key: shop.test, idempotencyKey: idem(), body: { amount: 1_000_000 } })).body;
    await suspend(shop.productId);
    const noon = new Date(Date.parse(`${new Date(Date.now() + 5 * 3_600_000).toISOString().slice(0, 10)}T12:00:00.000+05:00`));
    await service.payouts.runDaily(100, noon);
    await service.payouts.sendDue(100);
    const listed = (await service.call({ method: 'GET', url: '/v1/payouts', key: shop.test })).body.data;
    expect(listed.map((payout: { id: string; status: string }) => [payout.id, payout.status])).toEqual([[pending.id, 'PENDING']]);
    await resume(shop.productId);
    await service.payouts.runDaily(100, noon);
    await service.payouts.sendDue(100);
    const after = (await service.call({ method: 'GET', url: '/v1/payouts', key: shop.test })).body.data;
    expect(after.map((payout: { automatic: boolean; status: string }) => [payout.automatic, payout.status])).toEqual([
      [true, 'PAID'],
      [false, 'PAID'],
    ]);
  });

  it('shows its dashboard with the reason on every page', async () => {
    const client = new DashboardClient(service);
    const email = uniqueEmail('suspended');
    await client.signUp(email);
    const [product] = await service.db.query<{ id: string }>(
      'SELECT p.id FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1',
      [email.toLowerCase()],
    );
    await suspend(product!.id, 'Under review: documents requested');
    for (const path of ['/dashboard/overview', '/dashboard/payments', '/dashboard/payouts']) {
      const shown = await client.get(path);
      expect(shown.status, path).toBe(200);
      expect(shown.html, path).toContain('<strong>Tolov has suspended this product.</strong>');
      expect(shown.html, path).toContain('because: Under review: documents requested.');
    }
    await resume(product!.id);
    expect((await client.get('/dashboard/overview')).html).not.toContain('Tolov has suspended this product.');
  });

  it('answers 400 without a reason and 404 for an unknown product', async () => {
    const shop = await service.createMerchant();
    expect((await service.admin('POST', `/admin/v1/products/${shop.productId}/suspend`, {})).status).toBe(400);
    expect((await service.admin('POST', `/admin/v1/products/${shop.productId}/suspend`, { reason: '' })).status).toBe(400);
    expect((await service.admin('POST', '/admin/v1/products/prod_missing/suspend', { reason: REASON })).status).toBe(404);
    expect((await service.call({ method: 'POST', url: `/admin/v1/products/${shop.productId}/suspend`, key: shop.test, body: { reason: REASON } })).status).toBe(401);
    expect((await chargeCard(service, shop.test, '8600000000000007', 100_000)).status).toBe('SUCCEEDED');
  });
});

describe.skipIf(engine !== 'postgres')('suspension on every process', () => {
  it('is enforced by a second process sharing the database as soon as the change commits', async () => {
    const database = await createPostgresDatabase();
    const config = loadConfig({ TOLOV_ADMIN_TOKEN: ADMIN_TOKEN, TOLOV_SECRETS_KEY: SECRETS_KEY, LOG_LEVEL: 'silent', DATABASE_URL: database.url });
    const first = await createService(config, { db: await openPostgres(database.url) });
    const second = await createService(config, { db: await openPostgres(database.url) });
    try {
      const created = await first.app.inject({ method: 'POST', url: '/admin/v1/products', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'Two processes' } });
      const { id, keys } = created.json() as { id: string; keys: { test: string } };
      const order = (process: typeof first) =>
        process.app.inject({
          method: 'POST',
          url: '/merchant/v1/orders',
          headers: { authorization: `Bearer ${keys.test}`, 'idempotency-key': idem(), 'content-type': 'application/json' },
          payload: { amount: 10_000 },
        });
      // The second process has the key cached, with the product as it was.
      expect((await order(second)).statusCode).toBe(201);
      await first.app.inject({ method: 'POST', url: `/admin/v1/products/${id}/suspend`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { reason: REASON } });
      await waitFor(async () => ((await order(second)).statusCode === 403 ? true : null), 5_000, 'the second process to refuse');
      await first.app.inject({ method: 'POST', url: `/admin/v1/products/${id}/resume`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      await waitFor(async () => ((await order(second)).statusCode === 201 ? true : null), 5_000, 'the second process to accept again');
    } finally {
      await second.stop();
      await first.stop();
      await database.drop();
    }
  });
});
