// GET /v1/request_logs: the product's latest 1,000 API calls in the key's mode, newest first; no bodies, no query
// strings, no secrets; paged both ways.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_LOG_KEPT } from '../../src/modules/request-log/service.js';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => service.stop());

const logOf = (key: string, query = '') => service.call({ method: 'GET', url: `/v1/request_logs${query}`, key });

describe('the request log', () => {
  let merchant: Merchant;
  beforeAll(async () => {
    merchant = await service.createMerchant();
  });

  it('lists each call with its method, path, status, duration, request id and Idempotency-Key, newest first', async () => {
    const started = performance.now();
    const created = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: 'order-log-1', body: { amount: 1_500_000, description: 'secret-looking text' } });
    const read = await service.call({ method: 'GET', url: `/merchant/v1/orders/${created.body.id}?expand=nothing`, key: merchant.test });
    const missing = await service.call({ method: 'GET', url: '/merchant/v1/orders/ord_missing', key: merchant.test });
    const elapsedMs = performance.now() - started;
    const log = await logOf(merchant.test, '?limit=3');
    expect(log.status).toBe(200);
    expect(log.body.data).toEqual([
      expect.objectContaining({ id: missing.headers['request-id'], object: 'request_log', method: 'GET', path: '/merchant/v1/orders/ord_missing', status: 404, idempotencyKey: null, livemode: false }),
      expect.objectContaining({ id: read.headers['request-id'], method: 'GET', path: `/merchant/v1/orders/${created.body.id}`, status: 200 }),
      expect.objectContaining({ id: created.headers['request-id'], method: 'POST', path: '/merchant/v1/orders', status: 201, idempotencyKey: 'order-log-1' }),
    ]);
    // Each call's own time, in whole milliseconds, within the time the three calls took together.
    for (const entry of log.body.data) {
      expect(Number.isInteger(entry.durationMs)).toBe(true);
      expect(entry.durationMs).toBeLessThanOrEqual(Math.ceil(elapsedMs));
    }
    expect(log.text).not.toContain('secret-looking text');
    expect(log.text).not.toContain('sk_test_');
    // Reading the log is not in it.
    expect((await logOf(merchant.test, '?limit=1')).body.data[0].id).toBe(missing.headers['request-id']);
  });

  it('masks any run of 13 or more digits in a path or an Idempotency-Key, as a card number is masked', async () => {
    const shop = await service.createMerchant();
    const calls = [
      { method: 'GET' as const, url: '/merchant/v1/orders/8600000000000007', key: shop.test },
      { method: 'POST' as const, url: '/merchant/v1/orders/ord-9860-1234-5678-9015/cancel', key: shop.test },
      { method: 'GET' as const, url: '/merchant/v1/orders/8600%200000%200000%200015?card=8600000000000007', key: shop.test },
      { method: 'POST' as const, url: '/merchant/v1/orders', key: shop.test, idempotencyKey: 'order 8600 0000 0000 0007', body: { amount: 100 } },
      { method: 'POST' as const, url: '/merchant/v1/orders', key: shop.test, idempotencyKey: `${'4'.repeat(250)}-8600000000000007`, body: { amount: 100 } },
      { method: 'POST' as const, url: '/merchant/v1/orders', key: shop.test, idempotencyKey: 'order-1700000000000', body: { amount: 100 } },
    ];
    for (const call of calls) await service.call(call);
    const log = await logOf(shop.test, '?limit=10');
    expect(log.body.data.map((entry: { path: string; idempotencyKey: string | null }) => [entry.path, entry.idempotencyKey]).reverse()).toEqual([
      ['/merchant/v1/orders/860000******0007', null],
      ['/merchant/v1/orders/ord-986012******9015/cancel', null],
      ['/merchant/v1/orders/860000******0015', null],
      ['/merchant/v1/orders', 'order 860000******0007'],
      ['/merchant/v1/orders', `444444${'*'.repeat(249)}`],
      ['/merchant/v1/orders', 'order-170000***0000'],
    ]);
    for (const digits of ['8600000000000007', '1234-5678', '0000%200000', '0000 0000', '1700000000000']) expect(log.text).not.toContain(digits);
  });

  it("shows a key only its own product's calls in its own mode", async () => {
    const other = await service.createMerchant();
    await service.call({ method: 'GET', url: '/v1/balance', key: other.test });
    await service.call({ method: 'GET', url: '/v1/balance', key: merchant.live });
    const live = await logOf(merchant.live, '?limit=100');
    expect(live.body.data.map((entry: { livemode: boolean }) => entry.livemode)).toEqual([true]);
    const ours = await logOf(merchant.test, '?limit=100');
    expect(ours.body.data.every((entry: { livemode: boolean }) => !entry.livemode)).toBe(true);
    expect((await logOf(other.test, '?limit=100')).body.data).toHaveLength(1);
  });

  it('pages back with starting_after and forward with ending_before', async () => {
    const shop = await service.createMerchant();
    const ids: string[] = [];
    for (let call = 0; call < 5; call++) ids.push((await service.call({ method: 'GET', url: '/v1/balance', key: shop.test })).headers['request-id'] as string);
    const older = await logOf(shop.test, `?limit=2&starting_after=${ids[3]}`);
    expect(older.body.data.map((entry: { id: string }) => entry.id)).toEqual([ids[2], ids[1]]);
    expect(older.body.has_more).toBe(true);
    const newer = await logOf(shop.test, `?limit=2&ending_before=${ids[1]}`);
    expect(newer.body.data.map((entry: { id: string }) => entry.id)).toEqual([ids[3], ids[2]]);
    expect(newer.body.has_more).toBe(true);
    const newest = await logOf(shop.test, `?limit=10&ending_before=${ids[3]}`);
    expect(newest.body).toMatchObject({ data: [expect.objectContaining({ id: ids[4] })], has_more: false });

    for (const query of ['?ending_before=req_unknown', `?starting_after=${ids[1]}&ending_before=${ids[3]}`]) {
      expect((await logOf(shop.test, query)).body).toMatchObject({ code: 'VALIDATION_ERROR', param: 'ending_before' });
    }
    // Another mode's request is not in this log.
    expect((await logOf(shop.live, `?ending_before=${ids[1]}`)).status).toBe(400);
  });

  it(`keeps the latest ${REQUEST_LOG_KEPT} calls of a product and mode`, async () => {
    const busy = await service.createMerchant();
    const first = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: busy.test, idempotencyKey: idem(), body: { amount: 100 } });
    for (let call = 0; call < REQUEST_LOG_KEPT; call++) await service.call({ method: 'GET', url: '/v1/balance', key: busy.test });
    let seen = 0;
    let cursor = '';
    for (let page = 0; page < 20; page++) {
      const log = await logOf(busy.test, `?limit=100${cursor}`);
      seen += log.body.data.length;
      expect(log.body.data.every((entry: { path: string }) => entry.path === '/v1/balance')).toBe(true);
      if (!log.body.has_more) break;
      cursor = `&starting_after=${log.body.data.at(-1).id}`;
    }
    expect(seen).toBe(REQUEST_LOG_KEPT);
    expect((await logOf(busy.test, `?ending_before=${first.headers['request-id']}`)).status).toBe(400);
  }, 120_000);
});
