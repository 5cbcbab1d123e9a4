import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard, createBinding } from '../support/binding.js';
import { ADMIN_TOKEN, startService, type Merchant, type TestService } from '../support/harness.js';
import { SEED, seeded } from '../support/random.js';
import { charge } from '../support/payments.js';

const REQUESTS = Number(process.env.TOLOV_FUZZ_REQUESTS ?? 3_000);


let service: TestService;
let merchant: Merchant;
const ids: Record<string, string> = {};
beforeAll(async () => {
  service = await startService({
    TOLOV_RATE_LIMIT_SESSION_PER_MINUTE: '1000000',
    TOLOV_RATE_LIMIT_ADDRESS_PER_MINUTE: '1000000',
    TOLOV_RATE_LIMIT_KEY_PER_MINUTE: '1000000',
  });
  merchant = await service.createMerchant();
  ids.card = await bindCard(service, merchant.test, '8600000000000007');
  ids.intent = (await charge(service, merchant.test, { amount: 1_000, card: ids.card })).body.id;
  ids.order = (await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: 'fuzz-order', body: { amount: 100 } })).body.id;
  ids.token = (await createBinding(service, merchant.test)).clientToken;
  ids.endpoint = (await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: merchant.test, body: { url: 'https://hooks.example.com/x' } })).body.id;
  ids.event = (await service.call({ method: 'GET', url: '/v1/events', key: merchant.test })).body.data[0].id;
  ids.product = merchant.productId;
});
afterAll(() => service.stop());

const FIELDS = ['amount', 'card', 'description', 'metadata', 'customerRef', 'returnUrl', 'paymentIntent', 'reason', 'url', 'enabledEvents',
  'status', 'overlapSeconds', 'endpoint', 'pan', 'expiry', 'phone', 'code', 'saveCard', 'name', 'scopes', 'feeBps', 'mode', '__proto__', 'constructor'];

const ROUTES: Array<{ path: () => string; admin?: boolean; public?: boolean }> = [
  { path: () => '/admin/v1/products', admin: true },
  { path: () => `/admin/v1/products/${ids.product}/keys`, admin: true },
  { path: () => '/merchant/v1/orders' },
  { path: () => `/merchant/v1/orders/${ids.order}/cancel` },
  { path: () => '/subscribe/v1/card_bindings' },
  { path: () => '/subscribe/v1/charges' },
  { path: () => '/v1/payment_intents' },
  { path: () => `/v1/payment_intents/${ids.intent}/confirm` },
  { path: () => `/v1/payment_intents/${ids.intent}/cancel` },
  { path: () => '/v1/refunds' },
  { path: () => '/v1/webhook_endpoints' },
  { path: () => `/v1/webhook_endpoints/${ids.endpoint}` },
  { path: () => `/v1/webhook_endpoints/${ids.endpoint}/roll_secret` },
  { path: () => `/v1/events/${ids.event}/resend` },
  { path: () => `/checkout/v1/sessions/${ids.token}/card`, public: true },
  { path: () => `/checkout/v1/sessions/${ids.token}/code`, public: true },
  { path: () => `/checkout/v1/sessions/${ids.token}/code/resend`, public: true },
];

/** Stored answers of idempotency keys: a refusal once understood is stored under its key, as that key's answer. */
const storedAnswers = async () =>
  (
    await service.db.query<{ key: string; response_status: number | null; response_body: string | null }>(
      'SELECT key, response_status, response_body FROM idempotency_keys ORDER BY key',
    )
  ).map((row) => JSON.stringify(row));

/** Rows of every table a request could write but the idempotency keys; a refused request must leave the sum unchanged. */
const rowCount = async () =>
  (
    await service.db.query<{ n: number }>(
      `SELECT ((SELECT count(*) FROM products) + (SELECT count(*) FROM api_keys) + (SELECT count(*) FROM orders)
             + (SELECT count(*) FROM checkout_sessions) + (SELECT count(*) FROM card_bindings) + (SELECT count(*) FROM cards)
             + (SELECT count(*) FROM payment_intents) + (SELECT count(*) FROM refunds) + (SELECT count(*) FROM ledger_entries)
             + (SELECT count(*) FROM events) + (SELECT count(*) FROM webhook_endpoints) + (SELECT count(*) FROM webhook_deliveries))::int AS n`,
    )
  )[0]!.n;

describe('request fuzzing', () => {
  it(`answers ${REQUESTS} random and malformed POSTs without a 5xx or a partial write`, async () => {
    process.stdout.write(`request fuzzing: TOLOV_TEST_SEED=${SEED}\n`);
    const next = seeded(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const value = (depth = 0): unknown => {
      switch (Math.floor(next() * (depth > 2 ? 8 : 11))) {
        case 0: return Math.floor(next() * 2e12) - 1e12;
        case 1: return next() * 1e6;
        case 2: return pick([0, -1, 1, 1e12, 1e12 + 1, Number.MAX_SAFE_INTEGER, 1e308, -0]);
        case 3: return pick(['', ' ', '100', 'https://a.example/x', 'javascript:alert(1)', 'ключ', '\u0000', 'x'.repeat(600), '8600000000000007', '12/30', '111111', 'card_x', 'pi_x', ids.card, ids.intent, ids.endpoint, 'order.paid', 'subscribe', 'test', 'disabled']);
        case 4: return next() < 0.5;
        case 5: return null;
        case 6: return String.fromCharCode(...Array.from({ length: Math.floor(next() * 40) }, () => Math.floor(next() * 0xffff)));
        case 7: return 'y'.repeat(Math.floor(next() * 3000));
        case 8: return Array.from({ length: Math.floor(next() * 5) }, () => value(depth + 1));
        default: return Object.fromEntries(Array.from({ length: Math.floor(next() * 6) }, () => [pick([...FIELDS, String(next())]), value(depth + 1)]));
      }
    };
    const payload = (): string | undefined => {
      const kind = next();
      if (kind < 0.05) return undefined;
      if (kind < 0.15) return JSON.stringify(value()).slice(0, Math.floor(next() * 40));
      if (kind < 0.2) return String.fromCharCode(...Array.from({ length: 30 }, () => Math.floor(next() * 256)));
      if (kind < 0.25) return JSON.stringify(value());
      return JSON.stringify(Object.fromEntries(Array.from({ length: Math.floor(next() * 7) }, () => [pick(FIELDS), value()])));
    };

    const statuses = new Map<number, number>();
    for (let i = 0; i < REQUESTS; i++) {
      const route = pick(ROUTES);
      const body = payload();
      const headers: Record<string, string> = {};
      if (body !== undefined) headers['content-type'] = pick(['application/json', 'application/json', 'application/json', 'text/plain', 'application/json; charset=utf-8', 'application/x-www-form-urlencoded']);
      if (next() < 0.7) headers['idempotency-key'] = pick([`fuzz-${i}`, `fuzz-${i % 7}`, '', 'k'.repeat(300), 'ключ', `fuzz-${Math.floor(next() * 1e9)}`]);
      if (route.admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
      else if (!route.public) headers.authorization = pick([`Bearer ${merchant.test}`, `Bearer ${merchant.test}`, `Bearer ${merchant.live}`, 'Bearer sk_test_x', 'Basic x']);
      const before = await rowCount();
      const answersBefore = await storedAnswers();
      const reply = await service.app.inject({ method: 'POST', url: route.path(), headers, ...(body === undefined ? {} : { payload: body }) });
      statuses.set(reply.statusCode, (statuses.get(reply.statusCode) ?? 0) + 1);
      const context = `seed ${SEED}, request ${i}: POST ${route.path()} ${body?.slice(0, 200)} → ${reply.statusCode} ${reply.body.slice(0, 300)}`;
      // 503 RAIL_UNAVAILABLE is a live key's expected answer without a gateway; anything else 5xx is a defect.
      if (reply.statusCode >= 500) expect(JSON.parse(reply.body).code, context).toBe('RAIL_UNAVAILABLE');
      const parsed = JSON.parse(reply.body) as Record<string, unknown>;
      if (reply.statusCode >= 400) {
        expect(Object.keys(parsed).sort().filter((key) => !['param', 'failureCode'].includes(key)), context).toEqual(['code', 'error', 'message', 'requestId', 'statusCode']);
        expect(await rowCount(), context).toBe(before);
        // At most the key's own row is new: this very refusal, finished, under the key it was sent with.
        const added = (await storedAnswers()).filter((row) => !answersBefore.includes(row));
        const stored = { key: headers['idempotency-key'], response_status: reply.statusCode, response_body: reply.body };
        expect(added.filter((row) => row !== JSON.stringify(stored)), context).toEqual([]);
        if (added.length > 0) expect(reply.statusCode, context).toBeLessThan(500);
      }
    }
    // The fuzzer reached past validation too, not only into it.
    expect(Math.min(...statuses.keys())).toBeLessThan(300);
    expect([...statuses.keys()].filter((status) => status >= 400).length).toBeGreaterThan(4);
  }, 300_000);
});
