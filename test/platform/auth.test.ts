import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/lib/secrets.js';
import { ADMIN_TOKEN, idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { receiptFor } from '../support/receipts.js';

let service: TestService;
let merchant: Merchant;
let other: Merchant;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
  other = await service.createMerchant({ name: 'Other shop' });
});
afterAll(() => service.stop());

const createOrder = (key: string, body: unknown = { amount: 5_000 }) =>
  service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body });

describe('merchant authentication', () => {
  it.each([
    ['no Authorization header', undefined],
    ['a Basic scheme', 'Basic dXNlcjpwYXNz'],
    ['a bare key without Bearer', 'sk_test_0123456789abcdefghijABCDEFGHIJ'],
    ['a malformed key', 'Bearer sk_test_short'],
    ['an unknown mode prefix', 'Bearer sk_prod_0123456789abcdefghijABCDEFGHIJ'],
    ['a well-formed unknown key', 'Bearer sk_test_0123456789abcdefghijABCDEFGHIJ'],
    ['the admin token', `Bearer ${ADMIN_TOKEN}`],
  ])('answers %s with 401 UNAUTHENTICATED and changes nothing', async (_, authorization) => {
    const before = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    const reply = await service.call({
      method: 'POST',
      url: '/merchant/v1/orders',
      idempotencyKey: idem(),
      body: { amount: 100 },
      headers: authorization === undefined ? {} : { authorization },
    });
    expect(reply.status).toBe(401);
    expect(reply.body.code).toBe('UNAUTHENTICATED');
    expect(reply.headers['www-authenticate']).toMatch(/^Bearer/);
    const after = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    expect(after[0]!.n).toBe(before[0]!.n);
  });

  it('takes the key as the user name of HTTP Basic with no password, as curl -u sk_test_…: sends it', async () => {
    const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;
    const call = (authorization: string) =>
      service.call({ method: 'POST', url: '/merchant/v1/orders', idempotencyKey: idem(), body: { amount: 100 }, headers: { authorization } });
    const created = await call(basic(`${merchant.test}:`));
    expect(created.status).toBe(201);
    expect(created.body.livemode).toBe(false);
    expect((await call(basic(`${merchant.test}:not-empty`))).status).toBe(401);
    expect((await call(basic(':'))).status).toBe(401);
    expect((await call(basic(`${ADMIN_TOKEN}:`))).status).toBe(401);
    // The operator API takes its token as Bearer only.
    expect((await service.call({ method: 'POST', url: '/admin/v1/products', body: { name: 'x' }, headers: { authorization: basic(`${ADMIN_TOKEN}:`) } })).status).toBe(401);
    const missing = await service.call({ method: 'GET', url: '/v1/balance' });
    expect(missing.body.message).toContain('Bearer sk_test_');
    expect(missing.body.message).toContain('curl -u sk_test_…:');
  });

  it('authenticates before reading the body: a bad key with a bad body is a 401', async () => {
    const reply = await service.call({
      method: 'POST',
      url: '/merchant/v1/orders',
      payload: '{not json',
      headers: { authorization: 'Bearer sk_test_0123456789abcdefghijABCDEFGHIJ' },
    });
    expect(reply.status).toBe(401);
  });

  it('takes the mode from the key', async () => {
    expect((await createOrder(merchant.test)).body.livemode).toBe(false);
    expect((await createOrder(merchant.live, { amount: 5_000, receipt: receiptFor(5_000) })).body.livemode).toBe(true);
    expect((await service.call({ method: 'GET', url: '/v1/balance', key: merchant.live })).body.livemode).toBe(true);
  });

  it('answers a key without the needed scope with 403 SCOPE_REQUIRED', async () => {
    const subscribeOnly = await service.createMerchant({ scopes: ['subscribe'] });
    const reply = await createOrder(subscribeOnly.test);
    expect(reply.status).toBe(403);
    expect(reply.body.code).toBe('SCOPE_REQUIRED');
    expect(reply.body.message).toContain('sale_of_goods');
    // A call that needs no scope works with the same key.
    expect((await service.call({ method: 'GET', url: '/v1/balance', key: subscribeOnly.test })).status).toBe(200);
  });
});

describe('isolation between products and modes', () => {
  it("answers another product's order with 404, exactly as a missing one", async () => {
    const order = (await createOrder(merchant.test)).body;
    const foreign = await service.call({ method: 'GET', url: `/merchant/v1/orders/${order.id}`, key: other.test });
    const missing = await service.call({ method: 'GET', url: '/merchant/v1/orders/ord_doesnotexist000000000000', key: other.test });
    expect(foreign.status).toBe(404);
    expect({ ...foreign.body, requestId: '' }).toEqual({ ...missing.body, requestId: '' });
  });

  it("answers the other mode's order with 404", async () => {
    const testOrder = (await createOrder(merchant.test)).body;
    const liveOrder = (await createOrder(merchant.live)).body;
    expect((await service.call({ method: 'GET', url: `/merchant/v1/orders/${testOrder.id}`, key: merchant.live })).status).toBe(404);
    expect((await service.call({ method: 'GET', url: `/merchant/v1/orders/${liveOrder.id}`, key: merchant.test })).status).toBe(404);
  });

  it("never lists another product's or the other mode's orders", async () => {
    const mine = (await createOrder(merchant.test)).body;
    const theirs = (await createOrder(other.test)).body;
    const live = (await createOrder(merchant.live)).body;
    const list = await service.call({ method: 'GET', url: '/merchant/v1/orders?limit=100', key: merchant.test });
    const ids = list.body.data.map((order: { id: string }) => order.id);
    expect(ids).toContain(mine.id);
    expect(ids).not.toContain(theirs.id);
    expect(ids).not.toContain(live.id);
    expect(list.body.data.filter((order: { livemode: boolean }) => order.livemode !== false)).toEqual([]);
  });
});

describe('key storage', () => {
  it('stores only a SHA-256 hash of each secret, found by an index', async () => {
    const rows = await service.db.query<{ secret_hash: Buffer; livemode: boolean }>(
      'SELECT secret_hash, livemode FROM api_keys WHERE product_id = $1',
      [merchant.productId],
    );
    expect(rows).toHaveLength(2);
    const hashes = rows.map((row) => row.secret_hash.toString('hex'));
    expect(hashes).toContain(sha256(merchant.test).toString('hex'));
    expect(hashes).toContain(sha256(merchant.live).toString('hex'));
    const dump = JSON.stringify(await service.db.query('SELECT * FROM api_keys'));
    expect(dump).not.toContain(merchant.test.slice(8));
    const indexes = await service.db.query<{ indexdef: string }>(
      "SELECT indexdef FROM pg_indexes WHERE tablename = 'api_keys' AND indexdef LIKE '%(secret_hash)%'",
    );
    expect(indexes[0]?.indexdef).toMatch(/UNIQUE/);
  });

  it('makes secrets of at least 24 random base62 characters after the prefix', () => {
    expect(merchant.test).toMatch(/^sk_test_[0-9A-Za-z]{24,}$/);
    expect(merchant.live).toMatch(/^sk_live_[0-9A-Za-z]{24,}$/);
    expect(merchant.test.slice(8)).not.toBe(other.test.slice(8));
  });
});
