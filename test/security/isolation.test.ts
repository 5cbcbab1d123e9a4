import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard, createBinding } from '../support/binding.js';
import { idem, startService, type Call, type Merchant, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';
import { receiptFor } from '../support/receipts.js';

let service: TestService;
let owner: Merchant;
let other: Merchant;
const ids: Record<string, string> = {};
beforeAll(async () => {
  service = await startService();
  owner = await service.createMerchant();
  other = await service.createMerchant();
  ids.order = (await service.call({ method: 'POST', url: '/merchant/v1/orders', key: owner.test, idempotencyKey: idem(), body: { amount: 100 } })).body.id;
  ids.binding = (await createBinding(service, owner.test)).id;
  ids.card = await bindCard(service, owner.test, '8600000000000007');
  ids.intent = (await charge(service, owner.test, { amount: 5_000, card: ids.card })).body.id;
  ids.legacy = (await service.call({ method: 'POST', url: '/v1/payment_intents', key: owner.test, body: { amount: 700, card: ids.card } })).body.id;
  ids.refund = (await service.call({ method: 'POST', url: '/v1/refunds', key: owner.test, idempotencyKey: idem(), body: { paymentIntent: ids.intent } })).body.id;
  expect(ids.refund).toMatch(/^re_/);
  ids.endpoint = (await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: owner.test, body: { url: 'https://hooks.example.com/owner' } })).body.id;
  ids.event = (await service.call({ method: 'GET', url: '/v1/events', key: owner.test })).body.data[0].id;
});
afterAll(() => service.stop());

/** Everything the owner has, as the owner reads it. */
const ownerView = async () =>
  Promise.all(
    [
      `/merchant/v1/orders/${ids.order}`,
      `/subscribe/v1/card_bindings/${ids.binding}`,
      `/subscribe/v1/cards/${ids.card}`,
      `/subscribe/v1/charges/${ids.intent}`,
      `/v1/payment_intents/${ids.legacy}`,
      `/v1/refunds/${ids.refund}`,
      `/v1/webhook_endpoints/${ids.endpoint}`,
      `/v1/webhook_endpoints/${ids.endpoint}/deliveries`,
      `/v1/events/${ids.event}`,
      '/v1/balance',
    ].map(async (url) => (await service.call({ method: 'GET', url, key: owner.test })).text.replace(/"requestId":"[^"]+"/, '')),
  );

describe('isolation between products and between modes', () => {
  it("answers every call on another product's or the other mode's objects with 404, and changes nothing", async () => {
    const before = await ownerView();
    const calls: Array<Omit<Call, 'key'>> = [
      { method: 'GET', url: `/merchant/v1/orders/${ids.order}` },
      { method: 'POST', url: `/merchant/v1/orders/${ids.order}/cancel` },
      { method: 'GET', url: `/subscribe/v1/card_bindings/${ids.binding}` },
      { method: 'GET', url: `/subscribe/v1/cards/${ids.card}` },
      { method: 'DELETE', url: `/subscribe/v1/cards/${ids.card}` },
      { method: 'GET', url: `/subscribe/v1/charges/${ids.intent}` },
      { method: 'GET', url: `/v1/payment_intents/${ids.intent}` },
      { method: 'POST', url: `/v1/payment_intents/${ids.legacy}/confirm` },
      { method: 'POST', url: `/v1/payment_intents/${ids.legacy}/cancel` },
      { method: 'POST', url: '/v1/refunds', body: { paymentIntent: ids.intent } },
      { method: 'GET', url: `/v1/refunds/${ids.refund}` },
      { method: 'GET', url: `/v1/webhook_endpoints/${ids.endpoint}` },
      { method: 'POST', url: `/v1/webhook_endpoints/${ids.endpoint}`, body: { url: 'https://evil.example.com/steal' } },
      { method: 'POST', url: `/v1/webhook_endpoints/${ids.endpoint}/roll_secret`, body: {} },
      { method: 'GET', url: `/v1/webhook_endpoints/${ids.endpoint}/deliveries` },
      { method: 'DELETE', url: `/v1/webhook_endpoints/${ids.endpoint}` },
      { method: 'GET', url: `/v1/events/${ids.event}` },
      { method: 'POST', url: `/v1/events/${ids.event}/resend`, body: { endpoint: ids.endpoint } },
    ];
    // An id of the same shape that names nothing: a foreign object must be indistinguishable from it.
    const missing = (text: string) => text.replace(/(ord|cb|card|pi|re|we|evt)_[0-9A-Za-z]{24}/g, '$1_000000000000000000000000');
    for (const key of [other.test, owner.live]) {
      for (const call of calls) {
        const reply = await service.call({ ...call, key, idempotencyKey: idem() });
        const absent = await service.call({
          ...call,
          idempotencyKey: idem(),
          url: missing(call.url),
          ...(call.body ? { body: JSON.parse(missing(JSON.stringify(call.body))) } : {}),
          key,
        });
        const what = `${call.method} ${call.url} with ${key.slice(0, 8)}`;
        // 404, or for the live key a refusal that does not depend on the object (no live rail is configured here).
        expect([404, 503], what).toContain(reply.status);
        expect({ status: reply.status, code: reply.body.code }, what).toEqual({ status: absent.status, code: absent.body.code });
      }
      // A card of another product cannot be charged or attached to an intent.
      const chargeReply = await charge(service, key, { amount: 100, card: ids.card, receipt: receiptFor(100) });
      expect(['NOT_FOUND', 'RAIL_UNAVAILABLE'], `charge with ${key.slice(0, 8)}`).toContain(chargeReply.body.code);
      const intentReply = await service.call({ method: 'POST', url: '/v1/payment_intents', key, body: { amount: 100, card: ids.card, receipt: receiptFor(100) } });
      expect(['NOT_FOUND', 'RAIL_UNAVAILABLE'], `intent with ${key.slice(0, 8)}`).toContain(intentReply.body.code);
    }
    expect(await ownerView()).toEqual(before);
  });

  it("never lists another product's or the other mode's objects, nor pages from them", async () => {
    const lists: Array<[string, string]> = [
      ['/merchant/v1/orders', ids.order!],
      ['/subscribe/v1/cards', ids.card!],
      ['/subscribe/v1/charges', ids.intent!],
      ['/v1/refunds', ids.refund!],
      ['/v1/webhook_endpoints', ids.endpoint!],
      ['/v1/events', ids.event!],
    ];
    for (const key of [other.test, owner.live]) {
      for (const [url, id] of lists) {
        const list = await service.call({ method: 'GET', url: `${url}?limit=100`, key });
        expect(list.status).toBe(200);
        expect(list.text).not.toContain(id);
        const paged = await service.call({ method: 'GET', url: `${url}?starting_after=${id}`, key });
        expect(paged.status, `${url} from a foreign cursor`).toBe(400);
        expect(paged.body.param).toBe('starting_after');
      }
    }
  });

  it('keeps the public session calls to their own session', async () => {
    const mine = await createBinding(service, owner.test);
    const theirs = await createBinding(service, other.test);
    await service.call({ method: 'POST', url: `/checkout/v1/sessions/${theirs.clientToken}/card`, body: { pan: '9860000000000000', expiry: '12/30', phone: '998901234567' } });
    const state = await service.call({ method: 'GET', url: `/checkout/v1/sessions/${mine.clientToken}` });
    expect(state.text).not.toContain(theirs.id);
    expect(state.text).not.toContain('986000');
    expect(state.body.maskedPan).toBeNull();
    // A token differs from a binding's id: the id does not open the session.
    expect((await service.call({ method: 'GET', url: `/checkout/v1/sessions/${theirs.id}` })).status).toBe(404);
  });

  it('never echoes a secret: keys, webhook secrets and tokens appear only where they are issued', async () => {
    const reads = await ownerView();
    for (const text of reads) {
      expect(text).not.toMatch(/sk_(test|live)_|whsec_|tr_[0-9A-Za-z]{32}|rail_token|secret_hash/);
    }
    const admin = await service.admin('POST', `/admin/v1/keys/${'key_unknown'}/revoke`);
    expect(admin.text).not.toMatch(/sk_/);
  });
});
