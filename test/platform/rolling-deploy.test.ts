// Several processes share one PostgreSQL database, and a newer version migrates it at its start while older ones
// still serve. An added column changes what `SELECT *` returns, and the server then refuses every such statement an
// older process prepared before; this proves such a process keeps serving every kind of call, with the same answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard, sessionState, submitCard, submitCode, TEST_CODE } from '../support/binding.js';
import { engine, idem, startService, type Reply, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.stop());

/** The calls of a merchant's day, each answer kept by name; every statement they use is prepared by the first run. */
async function merchantsDay(): Promise<Map<string, Reply>> {
  const replies = new Map<string, Reply>();
  const keep = (name: string, reply: Reply) => {
    replies.set(name, reply);
    return reply.body;
  };
  const shop = await service.createMerchant({ name: 'Chorsu Market', feeBps: 100 });
  const key = shop.test;
  const card = await bindCard(service, key, '8600000000000007');
  keep('card', await service.call({ method: 'GET', url: `/subscribe/v1/cards/${card}`, key }));
  const intent = keep('charge', await charge(service, key, { amount: 200_000, card, metadata: { plan: 'pro' } }));
  keep('charge read', await service.call({ method: 'GET', url: `/subscribe/v1/charges/${intent.id}`, key }));
  keep('charges', await service.call({ method: 'GET', url: '/subscribe/v1/charges', key }));
  const post = (url: string, body: unknown) => service.call({ method: 'POST', url, key, idempotencyKey: idem(), body });
  const refund = keep('refund', await post('/v1/refunds', { paymentIntent: intent.id }));
  keep('refund read', await service.call({ method: 'GET', url: `/v1/refunds/${refund.id}`, key }));
  const order = keep('order', await post('/merchant/v1/orders', { amount: 1_500_000, description: 'Apricots' }));
  const token = order.paymentUrl.split('/pay/')[1] as string;
  keep('session', await sessionState(service, token));
  keep('card submitted', await submitCard(service, token, { pan: '8600000000000007' }));
  keep('code submitted', await submitCode(service, token, TEST_CODE));
  keep('order read', await service.call({ method: 'GET', url: `/merchant/v1/orders/${order.id}`, key }));
  keep('orders', await service.call({ method: 'GET', url: '/merchant/v1/orders', key }));
  keep('endpoint', await post('/v1/webhook_endpoints', { url: 'https://shop.example.uz/hooks' }));
  keep('endpoints', await service.call({ method: 'GET', url: '/v1/webhook_endpoints', key }));
  keep('balance', await service.call({ method: 'GET', url: '/v1/balance', key }));
  return replies;
}

/** Ids, times, tokens and secrets differ between two runs; the rest of every answer must not. */
const shape = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(shape)
    : value !== null && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).map(([field, inner]) => [field, typeof inner === 'string' ? typeof inner : shape(inner)]))
      : value;

describe.runIf(engine === 'postgres')('a running process, after a newer one added columns to every table', () => {
  it('answers every call as before, and shows none of the new columns', async () => {
    const before = await merchantsDay();
    for (const [name, reply] of before) expect(reply.status, `${name}: ${reply.text}`).toBeLessThan(300);

    const tables = await service.db.query<{ name: string }>(
      `SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'`,
    );
    expect(tables.length).toBeGreaterThan(10);
    await service.db.exec(tables.map((table) => `ALTER TABLE ${table.name} ADD COLUMN rollout_probe integer;`).join('\n'));

    const after = await merchantsDay();
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [name, reply] of after) {
      expect(reply.status, `${name}: ${reply.text}`).toBe(before.get(name)!.status);
      expect(shape(reply.body), name).toEqual(shape(before.get(name)!.body));
      expect(reply.text, name).not.toContain('rollout_probe');
    }
  });
});
