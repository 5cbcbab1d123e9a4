// The Node SDK against a running service: every resource it wraps, lists walked with `for await`, its own retries
// under one Idempotency-Key, typed errors, timeouts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Tolov, { TolovConnectionError, TolovError } from '../../packages/node/src/index.js';
import { createBinding, submitCard, submitCode, TEST_CODE } from '../support/binding.js';
import { startService, type Merchant, type TestService } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

let service: TestService;
let merchant: Merchant;
let base: string;
let receiver: Receiver;
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
  merchant = await service.createMerchant({ name: 'SDK Shop' });
  base = await service.app.listen({ port: 0, host: '127.0.0.1' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await service.stop();
});

async function savedCard(tolov: Tolov): Promise<string> {
  const binding = await tolov.cardBindings.create({ customerRef: 'customer-1' });
  await submitCard(service, binding.clientToken, { pan: '8600000000000007' });
  await submitCode(service, binding.clientToken, TEST_CODE);
  return (await tolov.cardBindings.retrieve(binding.id)).card!;
}

describe('the Node SDK', () => {
  it('creates, reads, lists and refunds with typed answers', async () => {
    const tolov = new Tolov(merchant.test, { baseUrl: base });
    const order = await tolov.orders.create({ amount: 1_500_000, description: 'Apricots', returnUrl: 'https://shop.example.uz/back' });
    expect(order).toMatchObject({ object: 'order', status: 'PENDING', amount: 1_500_000 });
    expect((await tolov.orders.retrieve(order.id)).id).toBe(order.id);
    expect((await tolov.orders.cancel(order.id)).status).toBe('CANCELED');

    const card = await savedCard(tolov);
    const intent = await tolov.charges.create({ amount: 25_000, card, description: 'Subscription', metadata: { plan: 'gold' } });
    expect(intent).toMatchObject({ status: 'SUCCEEDED', metadata: { plan: 'gold' } });
    const refund = await tolov.refunds.create({ paymentIntent: intent.id });
    expect(refund.status).toBe('SUCCEEDED');
    expect((await tolov.charges.retrieve(intent.id)).amountRefunded).toBe(25_000);
    expect((await tolov.balance.retrieve()).currency).toBe('UZS');
    expect((await tolov.cards.list()).data.map((c) => c.id)).toContain(card);

    const endpoint = await tolov.webhookEndpoints.create({ url: `${receiver.url}/sdk`, enabledEvents: ['payment_intent.succeeded'] });
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect((await tolov.webhookEndpoints.update(endpoint.id, { status: 'disabled' })).status).toBe('disabled');
    expect((await tolov.webhookEndpoints.delete(endpoint.id)).deleted).toBe(true);
    const events = await tolov.events.list({ type: 'payment_intent.succeeded' });
    expect(events.data[0]!.data.id).toBe(intent.id);
  });

  it('walks every page of a list with for await', async () => {
    const shop = await service.createMerchant();
    const tolov = new Tolov(shop.test, { baseUrl: base });
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await tolov.orders.create({ amount: 100 + i })).id);
    const seen: string[] = [];
    for await (const order of tolov.orders.list({ limit: 3 })) seen.push(order.id);
    expect(seen).toEqual([...made].reverse());
    // With the API's filters, across pages too.
    await tolov.orders.cancel(made[1]!);
    await tolov.orders.cancel(made[4]!);
    const canceled: string[] = [];
    for await (const order of tolov.orders.list({ status: 'CANCELED', limit: 1 })) canceled.push(order.id);
    expect(canceled).toEqual([made[4], made[1]]);
    const since = await tolov.orders.list({ 'created[gte]': new Date(Date.now() + 60_000).toISOString().replace(/\.\d+Z$/, 'Z') });
    expect(since.data).toEqual([]);
  });

  it('sends one Idempotency-Key for a POST and its own retries, so a retried charge is made once', async () => {
    const tolov0 = new Tolov(merchant.test, { baseUrl: base });
    const card = await savedCard(tolov0);
    const keys: string[] = [];
    let calls = 0;
    // The first answer is lost on its way back: the SDK sees a network error, retries, and gets the same charge.
    const flaky: typeof fetch = async (input, init) => {
      keys.push(new Headers(init?.headers).get('idempotency-key')!);
      const response = await fetch(input, init);
      if (++calls === 1) throw new TypeError('fetch failed');
      return response;
    };
    const tolov = new Tolov(merchant.test, { baseUrl: base, fetch: flaky, maxNetworkRetries: 2 });
    const intent = await tolov.charges.create({ amount: 7_777, card });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^tolov-node-/);
    expect(keys[1]).toBe(keys[0]);
    const charges = await tolov0.charges.list({ limit: 100 });
    expect(charges.data.filter((c) => c.amount === 7_777).map((c) => c.id)).toEqual([intent.id]);
  });

  it('throws typed errors, retries 429 and 5xx but not 4xx, and gives up after its retries', async () => {
    const tolov = new Tolov(merchant.test, { baseUrl: base, maxNetworkRetries: 0 });
    const missing = await tolov.orders.retrieve('ord_missing').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(TolovError);
    expect(missing).toMatchObject({ statusCode: 404, code: 'NOT_FOUND', requestId: expect.stringMatching(/^req_/) });
    const invalid = await tolov.orders.create({ amount: 0 }).catch((error: unknown) => error);
    expect(invalid).toMatchObject({ code: 'VALIDATION_ERROR', param: 'amount' });

    let attempts = 0;
    const busy: typeof fetch = async () => {
      attempts += 1;
      return new Response(JSON.stringify({ statusCode: 503, error: 'Service Unavailable', code: 'SERVICE_UNAVAILABLE', message: 'briefly', requestId: 'req_x' }), {
        status: 503,
        headers: { 'retry-after': '0' },
      });
    };
    const retrying = new Tolov(merchant.test, { baseUrl: base, fetch: busy, maxNetworkRetries: 3 });
    await expect(retrying.balance.retrieve()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(attempts).toBe(4);

    attempts = 0;
    const refusing: typeof fetch = async () => {
      attempts += 1;
      return new Response(JSON.stringify({ statusCode: 400, error: 'Bad Request', code: 'VALIDATION_ERROR', message: 'no', requestId: 'req_y' }), { status: 400 });
    };
    await expect(new Tolov(merchant.test, { baseUrl: base, fetch: refusing, maxNetworkRetries: 3 }).balance.retrieve()).rejects.toBeInstanceOf(TolovError);
    expect(attempts).toBe(1);

    const unreachable = new Tolov(merchant.test, { baseUrl: 'http://127.0.0.1:9', maxNetworkRetries: 1, timeoutMs: 1_000 });
    await expect(unreachable.balance.retrieve()).rejects.toBeInstanceOf(TolovConnectionError);
    expect(() => new Tolov('pk_nope')).toThrow(/secret key/);
  });

  it('verifies webhooks with errors that name the cause', async () => {
    const tolov = new Tolov(merchant.test, { baseUrl: base });
    const binding = await createBinding(service, merchant.test);
    expect(binding.id).toMatch(/^cb_/);
    expect(() => tolov.webhooks.constructEvent({ id: 'evt_1' } as never, 't=1,v1=00', 'whsec_x')).toThrow(/parsed before its signature was checked/);
    const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'order.paid', livemode: true, created: new Date().toISOString(), data: {} });
    const t = Math.floor(Date.now() / 1000);
    expect(() => tolov.webhooks.constructEvent(body, { 'Tolov-Signature': `t=${t},v1=${'0'.repeat(64)}` }, 'whsec_abc')).toThrow(/this is a live event: use the secret of the live endpoint/);
  });
});
