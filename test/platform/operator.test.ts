import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService } from '../../src/service.js';
import { ADMIN_TOKEN, idem, startService, type TestService } from '../support/harness.js';

let service: TestService;
beforeAll(async () => {
  service = await startService({ TOLOV_FEE_BPS: '150' });
});
afterAll(() => service.stop());

const balance = (key: string) => service.call({ method: 'GET', url: '/v1/balance', key });

describe('operator API: products', () => {
  it('creates a product with both scopes, the configured fee and a test and a live key', async () => {
    const reply = await service.admin('POST', '/admin/v1/products', { name: 'Chorsu Market' });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      object: 'product',
      name: 'Chorsu Market',
      scopes: ['sale_of_goods', 'subscribe'],
      feeBps: 150,
    });
    expect(reply.body.id).toMatch(/^prod_[0-9A-Za-z]{24}$/);
    expect(reply.body.keys.test).toMatch(/^sk_test_/);
    expect(reply.body.keys.live).toMatch(/^sk_live_/);
    expect((await balance(reply.body.keys.test)).body.livemode).toBe(false);
    expect((await balance(reply.body.keys.live)).body.livemode).toBe(true);
  });

  it('takes explicit scopes and fee', async () => {
    const reply = await service.admin('POST', '/admin/v1/products', { name: 'Subs', scopes: ['subscribe'], feeBps: 0 });
    expect(reply.body).toMatchObject({ scopes: ['subscribe'], feeBps: 0 });
  });

  it.each([
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 'x'.repeat(201) }, 'name'],
    [{ name: 'A', scopes: [] }, 'scopes'],
    [{ name: 'A', scopes: ['refunds'] }, 'scopes.0'],
    [{ name: 'A', scopes: ['subscribe', 'subscribe'] }, 'scopes'],
    [{ name: 'A', feeBps: 10_001 }, 'feeBps'],
    [{ name: 'A', feeBps: 1.5 }, 'feeBps'],
    [{ name: 'A', color: 'red' }, 'color'],
  ])('refuses %j with 400 naming %s', async (body, param) => {
    const before = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM products');
    const reply = await service.admin('POST', '/admin/v1/products', body);
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('VALIDATION_ERROR');
    expect(reply.body.param).toBe(param);
    const after = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM products');
    expect(after[0]!.n).toBe(before[0]!.n);
  });
});

describe('operator API: a product\'s keys', () => {
  it('names the first keys by id, lists every key without its secret, and revokes any of them', async () => {
    const created = await service.admin('POST', '/admin/v1/products', { name: 'Keys shop' });
    const { keys, keyIds, id: productId } = created.body;
    expect(keyIds).toEqual({ test: expect.stringMatching(/^key_/), live: expect.stringMatching(/^key_/) });
    expect((await balance(keys.test)).status).toBe(200);
    const extra = await service.admin('POST', `/admin/v1/products/${productId}/keys`, { mode: 'test', scopes: ['subscribe'] });

    const list = () => service.admin('GET', `/admin/v1/products/${productId}/keys`);
    // The first use is written beside the request, not before its answer.
    await expect.poll(async () => (await list()).body.data.find((key: { id: string }) => key.id === keyIds.test).lastUsed).not.toBeNull();
    const listed = await list();
    expect(listed.status).toBe(200);
    expect(listed.text).not.toMatch(/sk_(test|live)_[0-9A-Za-z]{8}/);
    expect(listed.body).toMatchObject({ object: 'list', has_more: false });
    const byId = new Map(listed.body.data.map((key: { id: string }) => [key.id, key]));
    expect([...byId.keys()].sort()).toEqual([keyIds.test, keyIds.live, extra.body.id].sort());
    expect(byId.get(keyIds.test)).toEqual({
      id: keyIds.test,
      object: 'api_key',
      mode: 'test',
      scopes: ['sale_of_goods', 'subscribe'],
      prefix: 'sk_test_',
      last4: keys.test.slice(-4),
      created: created.body.created,
      lastUsed: expect.any(String),
      revoked: false,
      revokedAt: null,
    });
    expect(byId.get(keyIds.live)).toMatchObject({ mode: 'live', prefix: 'sk_live_', last4: keys.live.slice(-4), lastUsed: null });

    const revoked = await service.admin('POST', `/admin/v1/keys/${keyIds.test}/revoke`);
    expect(revoked.body).toMatchObject({ id: keyIds.test, revoked: true, revokedAt: expect.any(String) });
    expect((await balance(keys.test)).status).toBe(401);
    expect((await balance(keys.live)).status).toBe(200);
    const after = await service.admin('GET', `/admin/v1/products/${productId}/keys`);
    expect(after.body.data.find((key: { id: string }) => key.id === keyIds.test)).toMatchObject({ revoked: true });
    expect((await service.admin('GET', '/admin/v1/products/prod_000000000000000000000000/keys')).status).toBe(404);
  });
});

describe('operator API: keys', () => {
  it('issues a key with a subset of the product scopes, in the asked mode', async () => {
    const product = await service.createMerchant();
    const reply = await service.admin('POST', `/admin/v1/products/${product.productId}/keys`, { mode: 'live', scopes: ['subscribe'] });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ object: 'api_key', mode: 'live', scopes: ['subscribe'] });
    expect(reply.body.id).toMatch(/^key_/);
    expect(reply.body.secret).toMatch(/^sk_live_[0-9A-Za-z]{24,}$/);
    const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: reply.body.secret, idempotencyKey: idem(), body: { amount: 1 } });
    expect(order.status).toBe(403);
  });

  it('defaults a new key to the product scopes', async () => {
    const product = await service.createMerchant({ scopes: ['sale_of_goods'] });
    const reply = await service.admin('POST', `/admin/v1/products/${product.productId}/keys`, { mode: 'test' });
    expect(reply.body.scopes).toEqual(['sale_of_goods']);
  });

  it('refuses scopes the product lacks, a bad mode, and an unknown product', async () => {
    const product = await service.createMerchant({ scopes: ['sale_of_goods'] });
    const foreignScope = await service.admin('POST', `/admin/v1/products/${product.productId}/keys`, { mode: 'test', scopes: ['subscribe'] });
    expect(foreignScope.status).toBe(400);
    expect(foreignScope.body.param).toBe('scopes');
    const badMode = await service.admin('POST', `/admin/v1/products/${product.productId}/keys`, { mode: 'prod' });
    expect(badMode.status).toBe(400);
    expect(badMode.body.param).toBe('mode');
    const unknown = await service.admin('POST', '/admin/v1/products/prod_missing/keys', { mode: 'test' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
  });

  it('revokes a key: it answers 401 from then on, and the product’s other keys keep working', async () => {
    const product = await service.createMerchant();
    const issued = await service.admin('POST', `/admin/v1/products/${product.productId}/keys`, { mode: 'test' });
    expect((await balance(issued.body.secret)).status).toBe(200);
    const revoked = await service.admin('POST', `/admin/v1/keys/${issued.body.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: issued.body.id, object: 'api_key', revoked: true });
    expect(revoked.body.secret).toBeUndefined();
    const after = await balance(issued.body.secret);
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('UNAUTHENTICATED');
    expect((await balance(product.test)).status).toBe(200);
    expect((await service.admin('POST', `/admin/v1/keys/${issued.body.id}/revoke`)).status).toBe(200);
    expect((await service.admin('POST', '/admin/v1/keys/key_missing/revoke')).status).toBe(404);
  });

  it('reaches every process on the same database: one that cached the key answers 401 once the revocation commits', async () => {
    // A second service on the same database stands for another process: its key cache hears revocations only by NOTIFY.
    const other = await createService(service.config, { db: service.db });
    try {
      const product = await service.createMerchant();
      const elsewhere = () => other.app.inject({ method: 'GET', url: '/v1/balance', headers: { authorization: `Bearer ${product.test}` } });
      expect((await elsewhere()).statusCode).toBe(200);
      const keyId = (await service.db.query<{ id: string }>("SELECT id FROM api_keys WHERE product_id = $1 AND NOT livemode", [product.productId]))[0]!.id;
      expect((await service.admin('POST', `/admin/v1/keys/${keyId}/revoke`)).status).toBe(200);
      const deadline = Date.now() + 2_000;
      let status = (await elsewhere()).statusCode;
      while (status === 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        status = (await elsewhere()).statusCode;
      }
      expect(status).toBe(401);
    } finally {
      // Only the app: the database belongs to the first service.
      await other.app.close();
    }
  });
});

describe('operator authentication', () => {
  it.each([undefined, 'Bearer wrong-token-0123456789', `Bearer ${ADMIN_TOKEN}x`, `Basic ${ADMIN_TOKEN}`])(
    'answers the operator token %s with 401',
    async (authorization) => {
      const reply = await service.call({
        method: 'POST',
        url: '/admin/v1/products',
        body: { name: 'Nope' },
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(reply.status).toBe(401);
      expect(reply.body.code).toBe('UNAUTHENTICATED');
    },
  );

  it('refuses a merchant key on the operator API', async () => {
    const product = await service.createMerchant();
    const reply = await service.call({ method: 'POST', url: '/admin/v1/products', key: product.test, body: { name: 'Nope' } });
    expect(reply.status).toBe(401);
  });

  it('hides the operator API entirely when no token is configured', async () => {
    const closed = await startService({ TOLOV_ADMIN_TOKEN: '' });
    try {
      const reply = await closed.call({
        method: 'POST',
        url: '/admin/v1/products',
        body: { name: 'Nope' },
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(reply.status).toBe(404);
      expect(reply.body.code).toBe('NOT_FOUND');
      const unknownRoute = await closed.call({ method: 'POST', url: '/admin/v1/nothing' });
      expect({ ...reply.body, requestId: '', message: '' }).toEqual({ ...unknownRoute.body, requestId: '', message: '' });
    } finally {
      await closed.stop();
    }
  });
});
