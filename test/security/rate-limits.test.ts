import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/types.js';
import { ADMIN_TOKEN, openTestDb, startService, type Merchant, type TestService } from '../support/harness.js';

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService({ TOLOV_RATE_LIMIT_KEY_PER_MINUTE: '20' });
  merchant = await service.createMerchant();
});
afterAll(() => service.stop());

describe('rate limits per API key', () => {
  it('answer 429 RATE_LIMITED with Retry-After past the limit, for that key only', async () => {
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<TestService['call']>> | undefined;
    for (let i = 0; i < 25; i++) {
      const reply = await service.call({ method: 'GET', url: '/v1/balance', key: merchant.test });
      statuses.push(reply.status);
      if (reply.status === 429) limited ??= reply;
    }
    expect(statuses).toEqual([...Array<number>(20).fill(200), ...Array<number>(5).fill(429)]);
    expect(limited!.body).toMatchObject({ code: 'RATE_LIMITED', statusCode: 429 });
    expect(Number(limited!.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited!.headers['retry-after'])).toBeLessThanOrEqual(60);
    // The same product's other key, and other merchants, are not slowed down.
    expect((await service.call({ method: 'GET', url: '/v1/balance', key: merchant.live })).status).toBe(200);
    const other = await service.createMerchant();
    expect((await service.call({ method: 'GET', url: '/v1/balance', key: other.test })).status).toBe(200);
  });

  it('are counted after authentication: unknown keys are refused, not counted against any key', async () => {
    // Below the client address's limit of failed authentications (20 a minute): each is a plain 401.
    for (let i = 0; i < 15; i++) {
      expect((await service.call({ method: 'GET', url: '/v1/balance', key: 'sk_test_0123456789abcdefghijABCDEFGHIJ' })).status).toBe(401);
    }
    const other = await service.createMerchant();
    expect((await service.call({ method: 'GET', url: '/v1/balance', key: other.test })).status).toBe(200);
  });
});

describe('failed authentication, throttled per client address and for the operator API as a whole', () => {
  const FAILURES = 5;
  let guarded: TestService;
  beforeAll(async () => {
    guarded = await startService({ TOLOV_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: String(FAILURES) });
  });
  afterAll(() => guarded.stop());

  const from = (remoteAddress: string, url: string, authorization: string, method: 'GET' | 'POST' = 'GET', payload?: unknown) =>
    guarded.app.inject({
      method,
      url,
      remoteAddress,
      headers: { authorization, ...(payload ? { 'content-type': 'application/json' } : {}) },
      ...(payload ? { payload: JSON.stringify(payload) } : {}),
    });
  const wrongKey = (n: number) => `Bearer sk_test_${String(n).padStart(32, 'x')}`;

  it('refuses guesses from an address past its failures with 429 and Retry-After; others go on, and a right key always passes', async () => {
    const shop = await guarded.createMerchant();
    for (let i = 0; i < FAILURES; i++) expect((await from('10.0.0.1', '/v1/balance', wrongKey(i))).statusCode).toBe(401);
    const limited = await from('10.0.0.1', '/v1/balance', wrongKey(99));
    expect({ status: limited.statusCode, code: limited.json().code }).toEqual({ status: 429, code: 'RATE_LIMITED' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Another address still gets its answer; a right key from the guessing address (everyone behind one proxy) passes,
    // though this process has never seen it used.
    expect((await from('10.0.0.2', '/v1/balance', wrongKey(100))).statusCode).toBe(401);
    expect((await from('10.0.0.1', '/v1/balance', `Bearer ${shop.test}`)).statusCode).toBe(200);
    expect((await from('10.0.0.1', '/v1/balance', wrongKey(101))).statusCode).toBe(429);
  });

  it('counts the client address the trusted proxy reports, and only a trusted proxy’s', async () => {
    const proxied = await startService({ TOLOV_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '2', TOLOV_TRUST_PROXY: '10.9.9.9' });
    try {
      const via = (remoteAddress: string, client: string) =>
        proxied.app.inject({ method: 'GET', url: '/v1/balance', remoteAddress, headers: { authorization: wrongKey(1), 'x-forwarded-for': client } });
      expect([(await via('10.9.9.9', '198.51.100.1')).statusCode, (await via('10.9.9.9', '198.51.100.1')).statusCode]).toEqual([401, 401]);
      expect((await via('10.9.9.9', '198.51.100.1')).statusCode).toBe(429);
      // Another client behind the same proxy has its own count.
      expect((await via('10.9.9.9', '198.51.100.2')).statusCode).toBe(401);
      // A header from an untrusted peer is ignored: its own address is counted.
      for (const client of ['1.1.1.1', '2.2.2.2']) expect((await via('10.9.9.8', client)).statusCode).toBe(401);
      expect((await via('10.9.9.8', '3.3.3.3')).statusCode).toBe(429);
    } finally {
      await proxied.stop();
    }
  });

  it('throttles wrong operator tokens per address, and from every address past 100 a minute; the right token always passes', async () => {
    const token = `Bearer ${ADMIN_TOKEN}`;
    const wrong = 'Bearer wrong-token-0000000000';
    const shop = await guarded.createMerchant();
    for (let i = 0; i < FAILURES; i++) expect((await from('10.1.0.1', '/admin/v1/products', wrong, 'POST', { name: 'x' })).statusCode).toBe(401);
    expect((await from('10.1.0.1', '/admin/v1/products', wrong, 'POST', { name: 'x' })).statusCode).toBe(429);
    expect((await from('10.1.0.1', '/admin/v1/products', token, 'POST', { name: 'Fine' })).statusCode).toBe(201);
    // Failures from many addresses add up for the operator API.
    for (let address = 2; address <= 21; address++) {
      for (let i = 0; i < FAILURES; i++) await from(`10.2.0.${address}`, '/admin/v1/products', 'Bearer wrong-token-0000000000', 'POST', { name: 'x' });
    }
    const closed = await from('10.3.0.1', '/admin/v1/products', wrong, 'POST', { name: 'x' });
    expect({ status: closed.statusCode, code: closed.json().code }).toEqual({ status: 429, code: 'RATE_LIMITED' });
    expect((await from('10.3.0.1', '/admin/v1/products', token, 'POST', { name: 'Fine' })).statusCode).toBe(201);
    // Merchants are not affected by the operator API's throttle.
    expect((await from('10.3.0.1', '/v1/balance', `Bearer ${shop.test}`)).statusCode).toBe(200);
  });
});

describe('looking API keys up', () => {
  const FAILURES = 5;
  let counted: TestService;
  // The service's lookups of keys by secret: how many, and how many at once at most.
  const lookups = { total: 0, running: 0, most: 0 };
  beforeAll(async () => {
    const db = await openTestDb();
    const query = async (sql: string, params?: readonly unknown[]) => {
      if (!sql.includes('FROM api_keys k JOIN products')) return db.query(sql, params);
      lookups.total += 1;
      lookups.running += 1;
      lookups.most = Math.max(lookups.most, lookups.running);
      try {
        return await db.query(sql, params);
      } finally {
        lookups.running -= 1;
      }
    };
    counted = await startService({ TOLOV_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: String(FAILURES) }, { db: { ...db, query: query as Db['query'] } });
  });
  afterAll(() => counted.stop());

  const from = (remoteAddress: string, secret: string) =>
    counted.app.inject({ method: 'GET', url: '/v1/balance', remoteAddress, headers: { authorization: `Bearer ${secret}` } });
  const wrongKey = (n: number) => `sk_test_${String(n).padStart(32, 'y')}`;
  const lookedUp = async (send: () => Promise<unknown>) => {
    const before = lookups.total;
    await send();
    return lookups.total - before;
  };

  it('refuse a wrong or revoked key again without a lookup, until a key changes', async () => {
    const shop = await counted.createMerchant();
    const status = async (address: string, secret: string) => (await from(address, secret)).statusCode;
    expect(await lookedUp(async () => expect([await status('10.5.0.1', wrongKey(1)), await status('10.5.0.2', wrongKey(1))]).toEqual([401, 401]))).toBe(1);
    // The same wrong key sent many times at once is looked up once.
    const together = await lookedUp(async () => {
      const statuses = await Promise.all(Array.from({ length: 4 }, (_, i) => status(`10.5.1.${i}`, wrongKey(2))));
      expect(statuses).toEqual([401, 401, 401, 401]);
    });
    expect(together).toBe(1);
    const issued = await counted.admin('POST', `/admin/v1/products/${shop.productId}/keys`, { mode: 'test' });
    expect((await counted.admin('POST', `/admin/v1/keys/${issued.body.id}/revoke`)).status).toBe(200);
    // The revocation cleared what the process knew: the wrong key is looked up again.
    expect(await lookedUp(async () => expect(await status('10.5.0.3', wrongKey(1))).toBe(401))).toBe(1);
    // The revoked key is refused, and soon without a lookup. (On PostgreSQL the revocation's notice arrives a moment
    // after its answer and clears the cache once more, so the lookups are counted until it settles.)
    await expect.poll(async () => lookedUp(async () => expect(await status('10.5.0.5', issued.body.secret)).toBe(401))).toBe(0);
    expect(await status('10.5.0.7', shop.test)).toBe(200);
  });

  it('look keys up from an address past its failures a few at a time, refuse the rest at once, and still pass the right key', async () => {
    const shop = await counted.createMerchant();
    for (let i = 0; i < FAILURES; i++) expect((await from('10.6.0.1', wrongKey(1_000 + i))).statusCode).toBe(401);
    lookups.most = 0;
    const guesses = 300;
    const looked = await lookedUp(async () => {
      const replies = await Promise.all(Array.from({ length: guesses }, (_, i) => from('10.6.0.1', wrongKey(2_000 + i))));
      expect(new Set(replies.map((reply) => reply.statusCode))).toEqual(new Set([429]));
      expect(Number(replies[guesses - 1]!.headers['retry-after'])).toBeGreaterThan(0);
    });
    // Two at a time, a hundred waiting: the others were refused without a lookup.
    expect(lookups.most).toBeLessThanOrEqual(2);
    expect(looked).toBeLessThanOrEqual(102);
    expect((await from('10.6.0.1', shop.test)).statusCode).toBe(200);
    // Another address is not held up by them.
    expect((await from('10.6.0.2', wrongKey(3_000))).statusCode).toBe(401);
  });
});
