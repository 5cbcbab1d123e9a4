import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Merchant, type TestService } from '../support/harness.js';

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
    expect(statuses.slice(0, 20).every((status) => status === 200)).toBe(true);
    expect(statuses.slice(20).every((status) => status === 429)).toBe(true);
    expect(limited!.body).toMatchObject({ code: 'RATE_LIMITED', statusCode: 429 });
    expect(Number(limited!.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited!.headers['retry-after'])).toBeLessThanOrEqual(60);
    // The same product's other key, and other merchants, are not slowed down.
    expect((await service.call({ method: 'GET', url: '/v1/balance', key: merchant.live })).status).toBe(200);
    const other = await service.createMerchant();
    expect((await service.call({ method: 'GET', url: '/v1/balance', key: other.test })).status).toBe(200);
  });

  it('are counted after authentication: unknown keys are refused, not counted against anyone', async () => {
    for (let i = 0; i < 30; i++) {
      expect((await service.call({ method: 'GET', url: '/v1/balance', key: 'sk_test_0123456789abcdefghijABCDEFGHIJ' })).status).toBe(401);
    }
  });
});
