// Text the database cannot store as sent (U+0000, a lone surrogate) is refused where it enters, naming the field,
// for every string the API takes; nothing is written and the idempotency key stays free.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { ADMIN_TOKEN, idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { chargeCard } from '../support/payments.js';

let service: TestService;
let merchant: Merchant;
let card: string;
let intent: string;
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
  merchant = await service.createMerchant({ name: 'Text shop' });
  card = await bindCard(service, merchant.test, '8600000000000007');
  intent = (await chargeCard(service, merchant.test, '8600000000000007')).id;
});
afterAll(() => service.stop());

// JSON escapes as a client would send them: the parsed strings hold the bad code units.
const BAD = { nul: 'a\\u0000b', loneHigh: 'a\\ud800b', loneLow: '\\udc00' };

const rowCounts = async () =>
  (
    await service.db.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM orders) || '/' || (SELECT count(*) FROM payment_intents) || '/' || (SELECT count(*) FROM refunds) || '/' ||
              (SELECT count(*) FROM card_bindings) || '/' || (SELECT count(*) FROM webhook_endpoints) || '/' || (SELECT count(*) FROM products) || '/' ||
              (SELECT count(*) FROM idempotency_keys) AS n`,
    )
  )[0]!.n;

interface Case {
  url: string;
  /** The body as JSON text with `$` where the bad string goes (already quoted). */
  body: () => string;
  param: string;
  admin?: boolean;
}
const cases: Record<string, Case> = {
  'charge description': { url: '/subscribe/v1/charges', body: () => `{"amount": 100, "card": "${card}", "description": $}`, param: 'description' },
  'charge metadata value': { url: '/subscribe/v1/charges', body: () => `{"amount": 100, "card": "${card}", "metadata": {"sku": $}}`, param: 'metadata.sku' },
  'charge metadata key': { url: '/subscribe/v1/charges', body: () => `{"amount": 100, "card": "${card}", "metadata": {$: "x"}}`, param: 'metadata' },
  'order description': { url: '/merchant/v1/orders', body: () => '{"amount": 100, "description": $}', param: 'description' },
  'order customerRef': { url: '/merchant/v1/orders', body: () => '{"amount": 100, "customerRef": $}', param: 'customerRef' },
  'card binding customerRef': { url: '/subscribe/v1/card_bindings', body: () => '{"customerRef": $}', param: 'customerRef' },
  'legacy intent description': { url: '/v1/payment_intents', body: () => `{"amount": 100, "card": "${card}", "description": $}`, param: 'description' },
  'refund reason': { url: '/v1/refunds', body: () => `{"paymentIntent": "${intent}", "reason": $}`, param: 'reason' },
  'webhook endpoint description': { url: '/v1/webhook_endpoints', body: () => '{"url": "http://127.0.0.1:9/hook", "description": $}', param: 'description' },
  'product name': { url: '/admin/v1/products', body: () => '{"name": $}', param: 'name', admin: true },
};

describe('text that is not storable', () => {
  for (const [name, { url, body, param, admin }] of Object.entries(cases)) {
    it(`${name}: 400 VALIDATION_ERROR naming ${param}, nothing written`, async () => {
      for (const bad of Object.values(BAD)) {
        const before = await rowCounts();
        const reply = await service.call({
          method: 'POST',
          url,
          payload: body().replace('$', `"${bad}"`),
          idempotencyKey: idem(),
          headers: { authorization: `Bearer ${admin ? ADMIN_TOKEN : merchant.test}` },
        });
        expect({ status: reply.status, code: reply.body?.code, param: reply.body?.param }).toEqual({ status: 400, code: 'VALIDATION_ERROR', param });
        expect(await rowCounts()).toBe(before);
      }
    });
  }

  it('in a query string or a path: 400 naming the parameter, not a 500', async () => {
    const query = await service.call({ method: 'GET', url: '/merchant/v1/orders?starting_after=ord_%00', key: merchant.test });
    expect({ status: query.status, param: query.body.param }).toEqual({ status: 400, param: 'starting_after' });
    const path = await service.call({ method: 'GET', url: '/merchant/v1/orders/ord_%00', key: merchant.test });
    expect({ status: path.status, param: path.body.param }).toEqual({ status: 400, param: 'id' });
    const session = await service.call({ method: 'GET', url: '/checkout/v1/sessions/cs_%00' });
    expect({ status: session.status, param: session.body.param }).toEqual({ status: 400, param: 'token' });
  });

  it('a retry with the same key after the refusal runs as new', async () => {
    const key = idem();
    const refused = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: key, payload: `{"amount": 100, "description": "${BAD.nul}"}` });
    expect(refused.status).toBe(400);
    const created = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: key, body: { amount: 100, description: 'ok' } });
    expect(created.status).toBe(201);
  });

  it('well-formed text outside the Basic Multilingual Plane is kept as sent', async () => {
    const description = "O'zbekiston 🇺🇿 to‘lov \u{1F4B3}";
    const created = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: idem(), body: { amount: 100, description } });
    expect(created.status).toBe(201);
    expect((await service.call({ method: 'GET', url: `/merchant/v1/orders/${created.body.id}`, key: merchant.test })).body.description).toBe(description);
  });
});
