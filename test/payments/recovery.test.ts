import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { balance, charge, eventsOf, injectedCrashes, railOperations, reconcileNow } from '../support/payments.js';

const { hooks, crash, heal } = injectedCrashes();
let service: TestService;
beforeAll(async () => {
  service = await startService({}, { hooks });
});
afterAll(() => service.stop());

async function setup(pan: string): Promise<{ shop: Merchant; card: string }> {
  const shop = await service.createMerchant({ feeBps: 0 });
  return { shop, card: await bindCard(service, shop.test, pan) };
}

describe('the reconciler', () => {
  it('reconciles the rest of its batch when one operation cannot be: a live one left without a live bank gateway', async () => {
    const { shop, card } = await setup('8600000000000007');
    crash('afterCommit', 'debit');
    expect((await charge(service, shop.test, { amount: 4_000, card }, idem())).status).toBe(500);
    expect((await charge(service, shop.test, { amount: 5_000, card }, idem())).status).toBe(500);
    heal();
    const [stranded, due] = await service.db.query<{ id: string }>('SELECT id FROM payment_intents WHERE product_id = $1 ORDER BY amount', [shop.productId]);
    // As if live mode's gateway was configured when it was made, and is not any more.
    await service.db.query('UPDATE payment_intents SET livemode = true WHERE id = $1', [stranded!.id]);

    await reconcileNow(service);
    const statusOf = async (id: string) => (await service.db.query<{ status: string }>('SELECT status FROM payment_intents WHERE id = $1', [id]))[0]!.status;
    expect(await statusOf(due!.id)).toBe('FAILED');
    expect(await statusOf(stranded!.id)).toBe('PROCESSING');
    // Leased, it is asked about again once the lease ends.
    const [lease] = await service.db.query<{ later: boolean }>(`SELECT reconcile_after > now() + interval '30 seconds' AS later FROM payment_intents WHERE id = $1`, [stranded!.id]);
    expect(lease!.later).toBe(true);
  });
});

describe('a crash between the phases of a charge', () => {
  it('before the rail call: the retry returns the same PROCESSING intent without calling the rail, and the reconciler fails it', async () => {
    const { shop, card } = await setup('8600000000000007');
    const key = idem();
    crash('afterCommit', 'debit');
    const crashed = await charge(service, shop.test, { amount: 4_000, card }, key);
    expect(crashed.status).toBe(500);
    heal();
    const [intent] = await service.db.query<{ id: string; status: string }>('SELECT id, status FROM payment_intents WHERE product_id = $1', [shop.productId]);
    expect(intent!.status).toBe('PROCESSING');

    const retry = await charge(service, shop.test, { amount: 4_000, card }, key);
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ id: intent!.id, status: 'PROCESSING' });
    expect(await railOperations(service, intent!.id)).toBe(0);

    await reconcileNow(service);
    const read = await service.call({ method: 'GET', url: `/subscribe/v1/charges/${intent!.id}`, key: shop.test });
    expect(read.body).toMatchObject({ status: 'FAILED', failureCode: 'PROCESSING_ERROR' });
    expect(await railOperations(service, intent!.id)).toBe(0);
    expect(await balance(service, shop.test)).toMatchObject({ pending: 0 });
    expect((await eventsOf(service, intent!.id)).map((event) => event.type)).toEqual(['payment_intent.failed']);
    // The stored answer stays the one the retry got; reading the intent tells the outcome.
    expect((await charge(service, shop.test, { amount: 4_000, card }, key)).text).toBe(retry.text);
  });

  it('after the rail debited but before the outcome was recorded: never a second debit; the reconciler records the success once', async () => {
    const { shop, card } = await setup('8600000000000007');
    const key = idem();
    crash('afterCall', 'debit');
    expect((await charge(service, shop.test, { amount: 6_000, card }, key)).status).toBe(500);
    heal();
    const [intent] = await service.db.query<{ id: string }>('SELECT id FROM payment_intents WHERE product_id = $1', [shop.productId]);
    expect(await railOperations(service, intent!.id)).toBe(1);

    const retry = await charge(service, shop.test, { amount: 6_000, card }, key);
    expect(retry.body).toMatchObject({ id: intent!.id, status: 'PROCESSING' });
    expect(await railOperations(service, intent!.id)).toBe(1);

    await reconcileNow(service);
    await reconcileNow(service);
    expect((await service.call({ method: 'GET', url: `/subscribe/v1/charges/${intent!.id}`, key: shop.test })).body.status).toBe('SUCCEEDED');
    expect(await railOperations(service, intent!.id)).toBe(1);
    expect(await balance(service, shop.test)).toMatchObject({ pending: 6_000 });
    expect((await eventsOf(service, intent!.id)).map((event) => event.type)).toEqual(['payment_intent.succeeded']);
  });

  it('after the outcome was recorded, before the answer was sent: the retry replays it', async () => {
    const { shop, card } = await setup('8600000000000007');
    const key = idem();
    crash('afterCommit', 'finished');
    const first = await charge(service, shop.test, { amount: 1_000, card }, key);
    heal();
    expect(first.status).toBe(500);
    const retry = await charge(service, shop.test, { amount: 1_000, card }, key);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.status).toBe('SUCCEEDED');
    expect(await railOperations(service, retry.body.id)).toBe(1);
    expect(await service.db.query('SELECT id FROM payment_intents WHERE product_id = $1', [shop.productId])).toHaveLength(1);
  });

  it('of a killed process (the key still locked): a retry within the lock timeout is 409, after it resumes without a debit', async () => {
    const { shop, card } = await setup('8600000000000007');
    const key = idem();
    crash('afterCommit', 'debit');
    await charge(service, shop.test, { amount: 2_000, card }, key);
    heal();
    // As if the process had died holding the key: the lock is still there.
    await service.db.query('UPDATE idempotency_keys SET locked_at = now() WHERE product_id = $1 AND key = $2', [shop.productId, key]);
    expect((await charge(service, shop.test, { amount: 2_000, card }, key)).body.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    await service.db.query("UPDATE idempotency_keys SET locked_at = now() - interval '5 minutes' WHERE product_id = $1 AND key = $2", [
      shop.productId,
      key,
    ]);
    const resumed = await charge(service, shop.test, { amount: 2_000, card }, key);
    expect(resumed.body.status).toBe('PROCESSING');
    expect(await railOperations(service, resumed.body.id)).toBe(0);
  });
});

describe('a crash between the phases of a refund', () => {
  it('after the rail refunded: the reconciler records it once, and the balance moves once', async () => {
    const { shop, card } = await setup('8600000000000007');
    const paid = await charge(service, shop.test, { amount: 3_000, card });
    crash('afterCall', 'refund');
    const crashed = await service.call({ method: 'POST', idempotencyKey: idem(), url: '/v1/refunds', key: shop.test, body: { paymentIntent: paid.body.id } });
    expect(crashed.status).toBe(500);
    heal();
    const [refund] = await service.db.query<{ id: string; status: string }>('SELECT id, status FROM refunds WHERE payment_intent_id = $1', [
      paid.body.id,
    ]);
    expect(refund!.status).toBe('PENDING');
    await reconcileNow(service);
    expect((await service.call({ method: 'GET', url: `/v1/refunds/${refund!.id}`, key: shop.test })).body.status).toBe('SUCCEEDED');
    expect(await balance(service, shop.test)).toMatchObject({ available: -3_000, pending: 3_000 });
    expect(await railOperations(service, refund!.id)).toBe(1);
  });
});
