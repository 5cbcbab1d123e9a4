import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { balance, charge, chargeCard, eventsOf, railOperations, reconcileNow } from '../support/payments.js';
import { receiptFor } from '../support/receipts.js';

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant({ feeBps: 100 });
});
afterAll(() => service.stop());

describe('charging a saved card: every test card', () => {
  it('8600 0000 0000 0007 succeeds: fee, ledger, event', async () => {
    const shop = await service.createMerchant({ feeBps: 100 });
    const card = await bindCard(service, shop.test, '8600000000000007');
    const reply = await charge(service, shop.test, { amount: 1_500_050, card, description: 'Monthly plan', metadata: { orderId: 'A-17' } });
    expect(reply.status).toBe(201);
    const intent = reply.body;
    expect(Object.keys(intent).sort()).toEqual(
      ['amount', 'amountCapturable', 'amountRefunded', 'captureMethod', 'card', 'created', 'currency', 'description', 'failureCode', 'fee', 'id', 'livemode', 'maskedPan', 'metadata', 'object', 'order', 'rail', 'receipt', 'status'].sort(),
    );
    expect(intent).toMatchObject({
      object: 'payment_intent',
      amount: 1_500_050,
      fee: 15_001, // 15,000.5 rounds half up
      currency: 'UZS',
      status: 'SUCCEEDED',
      failureCode: null,
      rail: 'uzcard',
      card,
      order: null,
      description: 'Monthly plan',
      metadata: { orderId: 'A-17' },
      amountRefunded: 0,
      captureMethod: 'automatic',
      amountCapturable: 0,
      livemode: false,
    });
    expect(intent.id).toMatch(/^pi_/);
    expect(await balance(service, shop.test)).toMatchObject({ pending: 1_500_050 - 15_001, available: 0 });
    const events = await eventsOf(service, intent.id);
    expect(events.map((event) => event.type)).toEqual(['payment_intent.succeeded']);
    expect(events[0]!.data).toEqual({ ...intent, status: 'succeeded' });
    expect((await service.call({ method: 'GET', url: `/subscribe/v1/charges/${intent.id}`, key: shop.test })).body).toEqual(intent);
  });

  it('9860 0000 0000 0000 succeeds on the humo rail', async () => {
    expect(await chargeCard(service, merchant.test, '9860000000000000')).toMatchObject({ status: 'SUCCEEDED', rail: 'humo' });
  });

  it('8600 0000 0000 0015 fails with INSUFFICIENT_FUNDS and moves no money', async () => {
    const shop = await service.createMerchant();
    const intent = await chargeCard(service, shop.test, '8600000000000015');
    expect(intent).toMatchObject({ status: 'FAILED', failureCode: 'INSUFFICIENT_FUNDS' });
    expect(await balance(service, shop.test)).toMatchObject({ pending: 0, available: 0 });
    const events = await eventsOf(service, intent.id);
    expect(events.map((event) => event.type)).toEqual(['payment_intent.failed']);
    expect(events[0]!.data).toMatchObject({ status: 'failed', failureCode: 'INSUFFICIENT_FUNDS' });
  });

  it('8600 0000 0000 0031 is PROCESSING, then reconciles to SUCCEEDED exactly once', async () => {
    const shop = await service.createMerchant({ feeBps: 0 });
    const intent = await chargeCard(service, shop.test, '8600000000000031', 70_000);
    expect(intent).toMatchObject({ status: 'PROCESSING', failureCode: null });
    expect(await balance(service, shop.test)).toMatchObject({ pending: 0 });
    expect(await eventsOf(service, intent.id)).toEqual([]);
    // Not before its in-flight window has passed.
    await service.payments.reconcileDebits(100);
    expect((await service.call({ method: 'GET', url: `/subscribe/v1/charges/${intent.id}`, key: shop.test })).body.status).toBe('PROCESSING');
    await reconcileNow(service);
    await reconcileNow(service);
    expect((await service.call({ method: 'GET', url: `/subscribe/v1/charges/${intent.id}`, key: shop.test })).body.status).toBe('SUCCEEDED');
    expect(await balance(service, shop.test)).toMatchObject({ pending: 70_000 });
    expect((await eventsOf(service, intent.id)).map((event) => event.type)).toEqual(['payment_intent.succeeded']);
    expect(await railOperations(service, intent.id)).toBe(1);
  });

  it('8600 0000 0000 0049 is PROCESSING, then reconciles to FAILED PROCESSING_ERROR with no money moved', async () => {
    const shop = await service.createMerchant();
    const intent = await chargeCard(service, shop.test, '8600000000000049');
    expect(intent.status).toBe('PROCESSING');
    await reconcileNow(service);
    const read = await service.call({ method: 'GET', url: `/subscribe/v1/charges/${intent.id}`, key: shop.test });
    expect(read.body).toMatchObject({ status: 'FAILED', failureCode: 'PROCESSING_ERROR' });
    expect(await balance(service, shop.test)).toMatchObject({ pending: 0, available: 0 });
    expect((await eventsOf(service, intent.id)).map((event) => event.type)).toEqual(['payment_intent.failed']);
  });

  it('8600 0000 0000 0056 fails with CARD_BLOCKED and blocks the card', async () => {
    const card = await bindCard(service, merchant.test, '8600000000000056');
    const first = await charge(service, merchant.test, { amount: 500, card });
    expect(first.body).toMatchObject({ status: 'FAILED', failureCode: 'CARD_BLOCKED' });
    expect((await service.call({ method: 'GET', url: `/subscribe/v1/cards/${card}`, key: merchant.test })).body.status).toBe('BLOCKED');
    const second = await charge(service, merchant.test, { amount: 500, card });
    expect(second.status).toBe(400);
    expect(second.body).toMatchObject({ code: 'CARD_INACTIVE', param: 'card', message: 'The card is BLOCKED: it cannot be charged' });
  });

  it('8600 0000 0000 0064 and any other valid card succeed', async () => {
    expect((await chargeCard(service, merchant.test, '8600000000000064')).status).toBe('SUCCEEDED');
    expect((await chargeCard(service, merchant.test, '8600123456789012')).status).toBe('SUCCEEDED');
  });
});

describe('fees', () => {
  it.each([
    [100, 50, 1],
    [100, 49, 0],
    [100, 150, 2],
    [150, 33, 0],
    [150, 34, 1],
    [0, 1_000_000, 0],
    [10_000, 1_000_000_000_000, 1_000_000_000_000],
    [9_999, 1_000_000_000_000, 999_900_000_000],
  ])('are round_half_up(amount × %i / 10000): amount %i → fee %i', async (feeBps, amount, fee) => {
    const shop = await service.createMerchant({ feeBps });
    const intent = await chargeCard(service, shop.test, '8600000000000007', amount);
    expect(intent.fee).toBe(fee);
    expect(await balance(service, shop.test)).toMatchObject({ pending: amount - fee });
  });
});

describe('idempotency of charges', () => {
  it('replays the same intent for a repeated key, with one debit at the rail', async () => {
    const card = await bindCard(service, merchant.test, '8600000000000007');
    const key = idem();
    const first = await charge(service, merchant.test, { amount: 12_300, card }, key);
    const second = await charge(service, merchant.test, { amount: 12_300, card }, key);
    expect(second.text).toBe(first.text);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(await railOperations(service, first.body.id)).toBe(1);
  });

  it('creates one intent and one debit for 8 concurrent duplicates', async () => {
    const shop = await service.createMerchant();
    const card = await bindCard(service, shop.test, '8600000000000007');
    const key = idem();
    const replies = await Promise.all(Array.from({ length: 8 }, () => charge(service, shop.test, { amount: 9_900, card }, key)));
    const ok = replies.filter((reply) => reply.status === 201);
    expect(replies.filter((reply) => reply.status !== 201 && reply.body.code !== 'IDEMPOTENCY_KEY_IN_USE').map((reply) => reply.text)).toEqual([]);
    expect(new Set(ok.map((reply) => reply.body.id)).size).toBe(1);
    const intents = await service.db.query<{ id: string }>('SELECT id FROM payment_intents WHERE product_id = $1', [shop.productId]);
    expect(intents).toHaveLength(1);
    expect(await railOperations(service, intents[0]!.id)).toBe(1);
    expect(await balance(service, shop.test)).toMatchObject({ pending: 9_900 - 99 });
  });

  it('requires the key', async () => {
    const card = await bindCard(service, merchant.test, '8600000000000007');
    const reply = await service.call({ method: 'POST', url: '/subscribe/v1/charges', key: merchant.test, body: { amount: 1, card } });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('IDEMPOTENCY_KEY_REQUIRED');
  });
});

describe('concurrent charges', () => {
  it('are each all or nothing and answered as if alone: successes, failures, refusals, a blocked card and repeated keys', async () => {
    const shop = await service.createMerchant({ feeBps: 100 });
    const good = await bindCard(service, shop.test, '8600000000000007');
    const poor = await bindCard(service, shop.test, '8600000000000015');
    const blocked = await bindCard(service, shop.test, '8600000000000056');
    const gone = await bindCard(service, shop.test, '8600000000000007');
    expect((await service.call({ method: 'DELETE', url: `/subscribe/v1/cards/${gone}`, key: shop.test })).status).toBe(200);
    const repeated = idem();
    const reused = idem();
    const requests = [
      ...Array.from({ length: 12 }, (_, n) => ({ body: { amount: 10_000 + n, card: good, metadata: { n: String(n) } }, key: idem() })),
      ...Array.from({ length: 4 }, () => ({ body: { amount: 20_000, card: poor }, key: idem() })),
      { body: { amount: 30_000, card: blocked }, key: idem() },
      ...Array.from({ length: 2 }, () => ({ body: { amount: 40_000, card: gone }, key: idem() })),
      ...Array.from({ length: 3 }, () => ({ body: { amount: 50_000, card: good }, key: repeated })),
      { body: { amount: 60_000, card: good }, key: reused },
      { body: { amount: 60_001, card: good }, key: reused },
    ];
    const replies = await Promise.all(requests.map(({ body, key }) => charge(service, shop.test, body, key)));

    const statuses = replies.map((reply) => `${reply.status} ${reply.body.status ?? reply.body.code}`);
    expect(statuses.slice(0, 12)).toEqual(Array(12).fill('201 SUCCEEDED'));
    expect(replies.slice(0, 12).map((reply) => [reply.body.amount, reply.body.metadata])).toEqual(
      Array.from({ length: 12 }, (_, n) => [10_000 + n, { n: String(n) }]),
    );
    expect(replies.slice(12, 16).map((reply) => [reply.status, reply.body.failureCode])).toEqual(Array(4).fill([201, 'INSUFFICIENT_FUNDS']));
    expect(replies[16]!.body).toMatchObject({ status: 'FAILED', failureCode: 'CARD_BLOCKED' });
    expect(statuses.slice(17, 19)).toEqual(['400 CARD_INACTIVE', '400 CARD_INACTIVE']);
    // One key sent three times at once: one intent, each answer it or "in progress".
    const sameKey = replies.slice(19, 22);
    expect(sameKey.filter((reply) => reply.status !== 201 && reply.body.code !== 'IDEMPOTENCY_KEY_IN_USE').map((reply) => reply.text)).toEqual([]);
    expect(new Set(sameKey.filter((reply) => reply.status === 201).map((reply) => reply.body.id)).size).toBe(1);
    // One key sent with two different bodies at once: one is charged, the other refused.
    expect(replies.slice(22).map((reply) => reply.status).sort()).toEqual([201, 422]);

    const intents = await service.db.query<{ id: string; status: string; amount: number; fee: number }>(
      'SELECT id, status, amount, fee FROM payment_intents WHERE product_id = $1',
      [shop.productId],
    );
    expect(intents).toHaveLength(12 + 4 + 1 + 1 + 1);
    const answered = new Set(replies.filter((reply) => reply.status === 201).map((reply) => reply.body.id));
    expect(new Set(intents.map((intent) => intent.id))).toEqual(answered);
    for (const intent of intents) {
      expect(await railOperations(service, intent.id)).toBe(1);
      expect((await eventsOf(service, intent.id)).map((event) => event.type)).toEqual([
        intent.status === 'SUCCEEDED' ? 'payment_intent.succeeded' : 'payment_intent.failed',
      ]);
    }
    const net = intents.filter((intent) => intent.status === 'SUCCEEDED').reduce((sum, intent) => sum + intent.amount - intent.fee, 0);
    expect(await balance(service, shop.test)).toMatchObject({ pending: net, available: 0 });
    const card = await service.call({ method: 'GET', url: `/subscribe/v1/cards/${blocked}`, key: shop.test });
    expect(card.body.status).toBe('BLOCKED');
  });
});

describe('bad charges: a clear error, nothing written', () => {
  it.each([
    [{ amount: 1.5 }, 'amount', 'VALIDATION_ERROR'],
    [{ amount: '100' }, 'amount', 'VALIDATION_ERROR'],
    [{ amount: 0 }, 'amount', 'VALIDATION_ERROR'],
    [{ amount: 1_000_000_000_001 }, 'amount', 'VALIDATION_ERROR'],
    [{ card: undefined }, 'card', 'VALIDATION_ERROR'],
    [{ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata', 'VALIDATION_ERROR'],
    [{ metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata', 'VALIDATION_ERROR'],
    [{ metadata: { k: 5 } }, 'metadata.k', 'VALIDATION_ERROR'],
    [{ metadata: { k: 'v'.repeat(501) } }, 'metadata.k', 'VALIDATION_ERROR'],
    [{ description: 'd'.repeat(501) }, 'description', 'VALIDATION_ERROR'],
    [{ phone: '998901234567' }, 'phone', 'VALIDATION_ERROR'],
  ])('refuses %j', async (change, param, code) => {
    const shop = await service.createMerchant();
    const card = await bindCard(service, shop.test, '8600000000000007');
    const body = Object.fromEntries(Object.entries({ amount: 100, card, ...change }).filter(([, value]) => value !== undefined));
    const reply = await charge(service, shop.test, body);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code, param });
    expect(await service.db.query('SELECT id FROM payment_intents WHERE product_id = $1', [shop.productId])).toHaveLength(0);
  });

  it('answers an unknown card, a deleted card, and cards of another product or mode', async () => {
    const card = await bindCard(service, merchant.test, '8600000000000007');
    const other = await service.createMerchant();
    for (const [key, cardId, status, code] of [
      [merchant.test, 'card_unknown', 404, 'NOT_FOUND'],
      [other.test, card, 404, 'NOT_FOUND'],
      // No live rail is configured: every live charge is refused before anything else.
      [merchant.live, card, 503, 'RAIL_UNAVAILABLE'],
    ] as const) {
      const reply = await charge(service, key, { amount: 100, card: cardId, receipt: receiptFor(100) });
      expect(reply.status).toBe(status);
      expect(reply.body.code).toBe(code);
    }
    await service.call({ method: 'DELETE', url: `/subscribe/v1/cards/${card}`, key: merchant.test });
    const deleted = await charge(service, merchant.test, { amount: 100, card });
    expect(deleted.body).toMatchObject({ code: 'CARD_INACTIVE' });
  });

  it('needs the subscribe scope', async () => {
    const sales = await service.createMerchant({ scopes: ['sale_of_goods'] });
    const reply = await charge(service, sales.test, { amount: 100, card: 'card_x' });
    expect(reply.status).toBe(403);
  });
});

describe('field order as sent', () => {
  it("keeps the merchant's metadata keys in their order, in the answer, a read, the event and its delivery body", async () => {
    const card = await bindCard(service, merchant.test, '8600000000000007');
    const metadata = '{"zeta":"1","alpha":"2","mid":"3","Beta":"4"}';
    const sent = await service.call({
      method: 'POST',
      url: '/subscribe/v1/charges',
      key: merchant.test,
      idempotencyKey: idem(),
      payload: `{"amount": 1000, "card": "${card}", "metadata": ${metadata}}`,
    });
    expect(sent.status).toBe(201);
    const read = await service.call({ method: 'GET', url: `/subscribe/v1/charges/${sent.body.id}`, key: merchant.test });
    const events = await service.call({ method: 'GET', url: '/v1/events?limit=100', key: merchant.test });
    const event = events.body.data.find((candidate: { data: { id: string } }) => candidate.data.id === sent.body.id);
    const eventRead = await service.call({ method: 'GET', url: `/v1/events/${event.id}`, key: merchant.test });
    for (const text of [sent.text, read.text, eventRead.text]) expect(text).toContain(`"metadata":${metadata}`);
    // The snapshot's fields in the API's own order, as the answer has them.
    expect(Object.keys(eventRead.body.data)).toEqual(Object.keys(read.body));
  });
});

describe('reading and listing', () => {
  it('lists payment intents newest first and hides them from other products and modes', async () => {
    const shop = await service.createMerchant();
    const card = await bindCard(service, shop.test, '8600000000000007');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await charge(service, shop.test, { amount: 100 + i, card })).body.id);
    const list = await service.call({ method: 'GET', url: '/subscribe/v1/charges?limit=2', key: shop.test });
    expect(list.body.data.map((intent: { id: string }) => intent.id)).toEqual([ids[2], ids[1]]);
    expect(list.body.has_more).toBe(true);
    const next = await service.call({ method: 'GET', url: `/subscribe/v1/charges?limit=2&starting_after=${ids[1]}`, key: shop.test });
    expect(next.body).toMatchObject({ has_more: false, data: [{ id: ids[0] }] });
    for (const key of [merchant.test, shop.live]) {
      expect((await service.call({ method: 'GET', url: `/subscribe/v1/charges/${ids[0]}`, key })).status).toBe(404);
      expect((await service.call({ method: 'GET', url: `/v1/payment_intents/${ids[0]}`, key })).status).toBe(404);
    }
  });
});

describe('the legacy pair', () => {
  it('creates REQUIRES_PAYMENT, confirms on the charge path, and refuses a second confirmation', async () => {
    const shop = await service.createMerchant();
    const card = await bindCard(service, shop.test, '8600000000000007');
    const created = await service.call({ method: 'POST', url: '/v1/payment_intents', key: shop.test, body: { amount: 40_000, card } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'REQUIRES_PAYMENT', amount: 40_000, fee: 400 });
    expect(await railOperations(service, created.body.id)).toBe(0);
    const confirmed = await service.call({ method: 'POST', idempotencyKey: idem(), url: `/v1/payment_intents/${created.body.id}/confirm`, key: shop.test });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ id: created.body.id, status: 'SUCCEEDED' });
    expect(await balance(service, shop.test)).toMatchObject({ pending: 39_600 });
    const again = await service.call({ method: 'POST', idempotencyKey: idem(), url: `/v1/payment_intents/${created.body.id}/confirm`, key: shop.test });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('INVALID_STATE');
    expect(await railOperations(service, created.body.id)).toBe(1);
    expect((await service.call({ method: 'POST', url: `/v1/payment_intents/${created.body.id}/cancel`, key: shop.test })).status).toBe(409);
    const read = await service.call({ method: 'GET', url: `/v1/payment_intents/${created.body.id}`, key: shop.test });
    expect(read.body).toEqual(confirmed.body);
  });

  it('confirms twice at once with one debit', async () => {
    const card = await bindCard(service, merchant.test, '8600000000000007');
    const created = await service.call({ method: 'POST', url: '/v1/payment_intents', key: merchant.test, body: { amount: 700, card } });
    const replies = await Promise.all(
      [0, 1].map(() => service.call({ method: 'POST', idempotencyKey: idem(), url: `/v1/payment_intents/${created.body.id}/confirm`, key: merchant.test })),
    );
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409]);
    expect(await railOperations(service, created.body.id)).toBe(1);
  });

  it('cancels an intent before confirmation, after which it cannot be confirmed', async () => {
    const card = await bindCard(service, merchant.test, '8600000000000007');
    const created = await service.call({ method: 'POST', url: '/v1/payment_intents', key: merchant.test, body: { amount: 700, card } });
    const canceled = await service.call({ method: 'POST', url: `/v1/payment_intents/${created.body.id}/cancel`, key: merchant.test });
    expect(canceled.body).toMatchObject({ status: 'CANCELED' });
    const confirm = await service.call({ method: 'POST', idempotencyKey: idem(), url: `/v1/payment_intents/${created.body.id}/confirm`, key: merchant.test });
    expect(confirm.status).toBe(409);
    expect(await railOperations(service, created.body.id)).toBe(0);
  });

  it('checks the card at confirmation', async () => {
    const card = await bindCard(service, merchant.test, '8600000000000007');
    const created = await service.call({ method: 'POST', url: '/v1/payment_intents', key: merchant.test, body: { amount: 700, card } });
    await service.call({ method: 'DELETE', url: `/subscribe/v1/cards/${card}`, key: merchant.test });
    const key = idem();
    const confirm = await service.call({ method: 'POST', idempotencyKey: key, url: `/v1/payment_intents/${created.body.id}/confirm`, key: merchant.test });
    expect(confirm.status).toBe(400);
    expect(confirm.body).toMatchObject({ code: 'CARD_INACTIVE', param: 'card', message: 'The card is DELETED: it cannot be charged' });
    // The refusal is the key's answer, replayed as it was.
    const replayed = await service.call({ method: 'POST', idempotencyKey: key, url: `/v1/payment_intents/${created.body.id}/confirm`, key: merchant.test });
    expect(replayed.status).toBe(400);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toEqual(confirm.body);
    expect((await service.call({ method: 'GET', url: `/v1/payment_intents/${created.body.id}`, key: merchant.test })).body.status).toBe('REQUIRES_PAYMENT');
  });
});
