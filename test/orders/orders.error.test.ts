import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';

let service: TestService;
let merchant: Merchant;
let other: Merchant;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
  other = await service.createMerchant();
});
afterAll(() => service.stop());

const countOrders = async () =>
  (await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE product_id = $1', [merchant.productId]))[0]!.n;

describe('bad order input: a clear 400 naming the field, nothing written', () => {
  it.each([
    ['a float amount', { amount: 100.5 }, 'amount'],
    ['a string amount', { amount: '100' }, 'amount'],
    ['a zero amount', { amount: 0 }, 'amount'],
    ['a negative amount', { amount: -100 }, 'amount'],
    ['an amount over 10^12', { amount: 1_000_000_000_001 }, 'amount'],
    ['an amount beyond safe integers', { amount: 1e20 }, 'amount'],
    ['a null amount', { amount: null }, 'amount'],
    ['a boolean amount', { amount: true }, 'amount'],
    ['no amount', { description: 'x' }, 'amount'],
    ['an unknown field', { amount: 1, currency: 'USD' }, 'currency'],
    ['a description over 500 characters', { amount: 1, description: 'x'.repeat(501) }, 'description'],
    ['a non-string description', { amount: 1, description: 5 }, 'description'],
    ['a customerRef over 255 characters', { amount: 1, customerRef: 'c'.repeat(256) }, 'customerRef'],
    ['an empty customerRef', { amount: 1, customerRef: '' }, 'customerRef'],
    ['an ftp returnUrl', { amount: 1, returnUrl: 'ftp://shop.uz/back' }, 'returnUrl'],
    ['a javascript: returnUrl', { amount: 1, returnUrl: 'javascript:alert(1)' }, 'returnUrl'],
    ['a returnUrl without a host', { amount: 1, returnUrl: 'https:///path' }, 'returnUrl'],
    ['a returnUrl with spaces', { amount: 1, returnUrl: 'https://shop.uz/a b' }, 'returnUrl'],
    ['a returnUrl over 2048 characters', { amount: 1, returnUrl: `https://shop.uz/${'p'.repeat(2040)}` }, 'returnUrl'],
  ])('refuses %s', async (_, body, param) => {
    const before = await countOrders();
    const reply = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: idem(), body });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('VALIDATION_ERROR');
    expect(reply.body.param).toBe(param);
    expect(reply.body.message).toContain(param);
    expect(await countOrders()).toBe(before);
  });

  it('explains amount bounds in the message', async () => {
    const reply = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: idem(), body: { amount: 0 } });
    expect(reply.body.message).toBe('amount must be an integer from 1 to 1000000000000');
  });
});

describe('bad list input', () => {
  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=1.5', 'limit'],
    ['starting_after=ord_unknown', 'starting_after'],
    ['color=red', 'color'],
  ])('refuses ?%s with 400 naming %s', async (query, param) => {
    const reply = await service.call({ method: 'GET', url: `/merchant/v1/orders?${query}`, key: merchant.test });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('VALIDATION_ERROR');
    expect(reply.body.param).toBe(param);
  });

  it("refuses another product's order or the other mode's order as starting_after", async () => {
    const foreign = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: other.test, idempotencyKey: idem(), body: { amount: 1 } });
    const live = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.live, idempotencyKey: idem(), body: { amount: 1 } });
    for (const id of [foreign.body.id, live.body.id]) {
      const reply = await service.call({ method: 'GET', url: `/merchant/v1/orders?starting_after=${id}`, key: merchant.test });
      expect(reply.status).toBe(400);
      expect(reply.body.param).toBe('starting_after');
    }
  });
});
