// The lists' filters (status, dates, customer, type): each narrows its list, combines with the others and with cursor
// paging, and a bad value is a 400 naming its parameter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
});
afterAll(async () => service.stop());

const list = async (path: string): Promise<{ ids: string[]; has_more: boolean; status: number; body: Record<string, unknown> }> => {
  const reply = await service.call({ method: 'GET', url: path, key: merchant.test });
  return { ids: (reply.body.data ?? []).map((item: { id: string }) => item.id), has_more: reply.body.has_more, status: reply.status, body: reply.body };
};

/** Every id of a list, paged `limit` at a time. */
async function all(path: string, limit = 2): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 0; page < 50; page++) {
    const separator = path.includes('?') ? '&' : '?';
    const found = await list(`${path}${separator}limit=${limit}${ids.length ? `&starting_after=${ids.at(-1)}` : ''}`);
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    ids.push(...found.ids);
    if (!found.has_more) return ids;
  }
  throw new Error('more than 50 pages');
}

const order = async (body: Record<string, unknown>) =>
  (await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: idem(), body: { amount: 10_000, ...body } })).body.id as string;
const helper = (id: string, action: 'pay' | 'expire', card?: string) =>
  service.call({ method: 'POST', url: `/v1/test_helpers/orders/${id}/${action}`, key: merchant.test, body: card ? { card } : {} });

describe('list filters', () => {
  it('orders by status, customer and creation time, paged', async () => {
    const before = new Date().toISOString();
    const alice = [await order({ customerRef: 'alice' }), await order({ customerRef: 'alice' }), await order({ customerRef: 'alice' })];
    const bob = await order({ customerRef: 'bob' });
    await helper(alice[0]!, 'pay');
    await helper(alice[1]!, 'expire');
    const middle = new Date().toISOString();
    const late = await order({ customerRef: 'alice' });

    expect(await all('/merchant/v1/orders?customerRef=alice')).toEqual([late, alice[2], alice[1], alice[0]]);
    expect(await all('/merchant/v1/orders?customerRef=alice&status=PENDING', 1)).toEqual([late, alice[2]]);
    expect(await all('/merchant/v1/orders?status=PAID')).toContain(alice[0]);
    expect(await all('/merchant/v1/orders?status=EXPIRED')).toEqual([alice[1]]);
    expect(await all(`/merchant/v1/orders?created[gte]=${before}&created[lt]=${middle}`)).toEqual([bob, alice[2], alice[1], alice[0]]);
    expect(await all(`/merchant/v1/orders?created[gte]=${middle}`)).toEqual([late]);
    expect(await all('/merchant/v1/orders?customerRef=nobody')).toEqual([]);
    // A cursor outside the filtered list is refused, as one of another list is.
    expect((await list(`/merchant/v1/orders?customerRef=bob&starting_after=${alice[0]}`)).body).toMatchObject({ param: 'starting_after' });
  });

  it('charges by status, card, customer, order and creation time', async () => {
    const aliceCard = await bindCard(service, merchant.test, '8600000000000007', { customerRef: 'alice-charges' });
    const declined = await bindCard(service, merchant.test, '8600000000000015', { customerRef: 'alice-charges' });
    const bobCard = await bindCard(service, merchant.test, '8600000000000007', { customerRef: 'bob-charges' });
    const made = [];
    for (const card of [aliceCard, declined, bobCard, aliceCard]) made.push((await charge(service, merchant.test, { amount: 5_000, card })).body.id as string);
    const paidOrder = await order({});
    const paid = await helper(paidOrder, 'pay');

    expect(await all(`/subscribe/v1/charges?card=${aliceCard}`)).toEqual([made[3], made[0]]);
    expect(await all('/subscribe/v1/charges?customerRef=alice-charges')).toEqual([made[3], made[1], made[0]]);
    expect(await all('/subscribe/v1/charges?customerRef=alice-charges&status=FAILED')).toEqual([made[1]]);
    expect(await all(`/subscribe/v1/charges?status=SUCCEEDED&card=${bobCard}`)).toEqual([made[2]]);
    expect(await all(`/subscribe/v1/charges?order=${paidOrder}`)).toEqual([paid.body.paymentIntent]);
    expect(await all('/subscribe/v1/charges?card=card_unknown')).toEqual([]);
  });

  it('cards by customer and status; refunds by payment and status', async () => {
    const card = await bindCard(service, merchant.test, '8600000000000007', { customerRef: 'carol' });
    const other = await bindCard(service, merchant.test, '8600000000000007', { customerRef: 'carol' });
    await service.call({ method: 'DELETE', url: `/subscribe/v1/cards/${other}`, key: merchant.test });
    expect(await all('/subscribe/v1/cards?customerRef=carol')).toEqual([other, card]);
    expect(await all('/subscribe/v1/cards?customerRef=carol&status=ACTIVE')).toEqual([card]);
    expect(await all('/subscribe/v1/cards?customerRef=carol&status=DELETED')).toEqual([other]);

    const first = (await charge(service, merchant.test, { amount: 7_000, card })).body.id;
    const second = (await charge(service, merchant.test, { amount: 7_000, card })).body.id;
    const refund = await service.call({ method: 'POST', url: '/v1/refunds', key: merchant.test, idempotencyKey: idem(), body: { paymentIntent: first } });
    await service.call({ method: 'POST', url: '/v1/refunds', key: merchant.test, idempotencyKey: idem(), body: { paymentIntent: second } });
    expect(await all(`/v1/refunds?paymentIntent=${first}`)).toEqual([refund.body.id]);
    expect((await all('/v1/refunds?status=SUCCEEDED')).length).toBeGreaterThanOrEqual(2);
    expect(await all('/v1/refunds?status=FAILED')).toEqual([]);
  });

  it('events by type, object and creation time', async () => {
    const paidOrder = await order({});
    const before = new Date().toISOString();
    await helper(paidOrder, 'pay');
    const about = await list(`/v1/events?objectId=${paidOrder}`);
    expect(about.body.data).toEqual([expect.objectContaining({ type: 'order.paid', data: expect.objectContaining({ id: paidOrder }) })]);
    const since = await all(`/v1/events?created[gte]=${before}`);
    expect(since).toHaveLength(2); // order.paid and its payment's payment_intent.succeeded
    expect(await all(`/v1/events?created[gte]=${before}&type=payment_intent.succeeded`)).toHaveLength(1);
  });

  it('refuses a bad value with a 400 naming the parameter, and changes nothing', async () => {
    const cases: Array<[string, string]> = [
      ['/merchant/v1/orders?status=paid', 'status'],
      ['/merchant/v1/orders?created[gte]=yesterday', 'created[gte]'],
      ['/merchant/v1/orders?created[lt]=2026-13-01T00:00:00Z', 'created[lt]'],
      ['/merchant/v1/orders?created[lt]=2026-02-29T00:00:00Z', 'created[lt]'],
      ['/v1/events?created[gte]=2026-11-24', 'created[gte]'],
      ['/v1/events?created[gte]=0000-01-01T00:00:00Z', 'created[gte]'],
      ['/subscribe/v1/charges?status=DONE', 'status'],
      ['/subscribe/v1/cards?status=LOST', 'status'],
      ['/v1/refunds?status=OK', 'status'],
      ['/v1/events?type=order.shipped', 'type'],
      ['/merchant/v1/orders?colour=red', 'colour'],
      [`/merchant/v1/orders?customerRef=${'x'.repeat(256)}`, 'customerRef'],
    ];
    for (const [path, param] of cases) {
      const reply = await list(path);
      expect(reply.status, path).toBe(400);
      expect(reply.body, path).toMatchObject({ code: 'VALIDATION_ERROR', param });
    }
  });
});
