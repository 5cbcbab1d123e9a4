// /metrics counts what the money paths did: charges and refunds as they end, the bank's and the fiscal module's calls by
// operation and outcome with their time, webhook attempts by outcome; every label from a fixed set, none naming a
// product, key, card or object.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, startService, type TestService } from '../support/harness.js';
import { bindCard, createBinding, submitCard, submitCode, TEST_CODE } from '../support/binding.js';
import { charge, reconcileNow } from '../support/payments.js';
import { fiscalizeAll, receiptFor } from '../support/receipts.js';
import { samples, type Sample } from '../support/prometheus.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const METRICS_TOKEN = 'mtk_8kQ2vXn5Rw7Lp3Zb9Tc4Yh6Jd1Mf0Gs';
const PANS = { succeeds: '8600000000000007', insufficient: '8600000000000015', inactive: '8600000000000023', unclear: '8600000000000031' };

/** The series of `name`, each as its labels joined (`a=1,b=2`) with its value. */
function series(all: Sample[], name: string): Record<string, number> {
  return Object.fromEntries(
    all
      .filter((sample) => sample.name === name)
      .map((sample) => [
        Object.entries(sample.labels)
          .map(([label, value]) => `${label}=${value}`)
          .join(','),
        sample.value,
      ]),
  );
}

let service: TestService;
const receivers: Receiver[] = [];
/** What the scenario made, and /metrics after it. */
let made: Awaited<ReturnType<typeof scenario>>;
let all: Sample[];

const scrape = async (of: TestService) => {
  const reply = await of.call({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(reply.status).toBe(200);
  return samples(reply.text);
};

/** A receiver answering as `behaviour`; `closed`: one that has stopped listening, so connections are refused. */
async function endpointUrl(behaviour: Receiver['behaviour'] | 'closed'): Promise<string> {
  const receiver = await startReceiver();
  if (behaviour === 'closed') await receiver.close();
  else receivers.push(Object.assign(receiver, { behaviour }));
  return `${receiver.url}/hooks`;
}

/** Four endpoints of the shop, each answering one way, that subscribe to failed payments. */
async function endpoints(key: string): Promise<void> {
  for (const behaviour of ['ok', 'fail', 'hang', 'closed'] as const) {
    const body = { url: await endpointUrl(behaviour), enabledEvents: ['payment_intent.failed'] };
    expect((await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key, body })).status).toBe(201);
  }
}

/** Cards bound (one after a wrong code) and one refused; returns the bound cards' ids and the bindings'. */
async function cards(key: string) {
  const binding = await createBinding(service, key);
  expect((await submitCard(service, binding.clientToken, { pan: PANS.succeeds })).status).toBe(200);
  expect((await submitCode(service, binding.clientToken, '000000')).status).not.toBe(200);
  expect((await submitCode(service, binding.clientToken, TEST_CODE)).status).toBe(200);
  const good = (await service.call({ method: 'GET', url: `/subscribe/v1/card_bindings/${binding.id}`, key })).body.card as string;
  const inactive = await createBinding(service, key);
  expect((await submitCard(service, inactive.clientToken, { pan: PANS.inactive })).status).toBe(400);
  return { good, poor: await bindCard(service, key, PANS.insufficient), unclear: await bindCard(service, key, PANS.unclear), bindings: [binding.id, inactive.id] };
}

/**
 * A charge that succeeds with a receipt and is refunded, one declined, one whose answer is lost until reconciliation;
 * the receipts registered and the failed charge's event sent to each endpoint.
 */
async function scenario() {
  const shop = await service.createMerchant();
  await endpoints(shop.test);
  const { good, poor, unclear, bindings } = await cards(shop.test);
  const paid = (await charge(service, shop.test, { amount: 150_000, card: good, receipt: receiptFor(150_000) })).body;
  expect(paid.status).toBe('SUCCEEDED');
  const declined = (await charge(service, shop.test, { amount: 150_000, card: poor })).body;
  expect(declined.status).toBe('FAILED');
  const open = (await charge(service, shop.test, { amount: 90_000, card: unclear })).body;
  expect(open.status).toBe('PROCESSING');
  const refund = (await service.call({ method: 'POST', url: '/v1/refunds', key: shop.test, idempotencyKey: idem(), body: { paymentIntent: paid.id } })).body;
  expect(refund.status).toBe('SUCCEEDED');
  await reconcileNow(service);
  await fiscalizeAll(service);
  while ((await service.webhooks.deliverDue(100)) > 0);
  return { shop, ids: [shop.productId, shop.test, shop.live, good, poor, unclear, paid.id, declined.id, open.id, refund.id, ...bindings] };
}

beforeAll(async () => {
  service = await startService({
    TOLOV_METRICS_TOKEN: METRICS_TOKEN,
    TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true',
    TOLOV_WEBHOOK_RETRY_SCHEDULE: '0,60',
    TOLOV_WEBHOOK_TIMEOUT_MS: '400',
  });
  made = await scenario();
  all = await scrape(service);
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await service.stop();
});

describe('/metrics outcome counts', () => {
  it('counts each charge and refund once, as it ends: the unclear charge when reconciliation settles it', () => {
    expect(series(all, 'tolov_payments_total')).toEqual({
      'kind=charge,outcome=succeeded,mode=test': 2,
      'kind=charge,outcome=failed,mode=test': 1,
      'kind=refund,outcome=succeeded,mode=test': 1,
    });
  });

  it("counts the bank's calls by operation and outcome, and times them", () => {
    expect(series(all, 'tolov_rail_calls_total')).toEqual({
      'operation=tokenize,outcome=succeeded,mode=test': 3,
      'operation=tokenize,outcome=failed,mode=test': 1,
      'operation=send_code,outcome=succeeded,mode=test': 3,
      'operation=verify_code,outcome=failed,mode=test': 1,
      'operation=verify_code,outcome=succeeded,mode=test': 3,
      'operation=debit,outcome=succeeded,mode=test': 1,
      'operation=debit,outcome=failed,mode=test': 1,
      'operation=debit,outcome=unknown,mode=test': 1,
      'operation=refund,outcome=succeeded,mode=test': 1,
      'operation=fence,outcome=succeeded,mode=test': 1,
    });
    expect(series(all, 'tolov_rail_call_duration_seconds_count')).toMatchObject({ 'operation=debit,mode=test': 3, 'operation=refund,mode=test': 1 });
  });

  it("counts the fiscal module's calls: the sale's receipt and the refund's return, each registered at the first call", () => {
    expect(series(all, 'tolov_fiscal_calls_total')).toEqual({ 'operation=register,outcome=succeeded,mode=test': 2 });
    expect(series(all, 'tolov_fiscal_call_duration_seconds_count')).toEqual({ 'operation=register,mode=test': 2 });
  });

  it('counts webhook attempts by outcome: answered 2xx, answered otherwise, timed out, not connected', () => {
    expect(series(all, 'tolov_webhook_attempts_total')).toEqual({
      'outcome=succeeded,mode=test': 1,
      'outcome=failed,mode=test': 1,
      'outcome=timeout,mode=test': 1,
      'outcome=unreachable,mode=test': 1,
    });
  });

  it('exposes every series an alert in docs/operations.md names', () => {
    const docs = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const from = docs.indexOf('## Alerts');
    const alerts = docs.slice(from, docs.indexOf('\n## ', from + 1));
    const named = new Set([...alerts.matchAll(/\b((?:tolov|nodejs|process)_[a-z_]+?)(?:_bucket)?\b(?=[{ )])/g)].map((match) => match[1]!));
    expect(named.size).toBeGreaterThanOrEqual(10);
    const exposed = new Set(all.map((sample) => sample.name.replace(/_(bucket|sum|count)$/, '')));
    // The embedded engine has one session and no pool to report.
    if (service.db.engine === 'pglite') named.delete('tolov_db_pool_connections');
    for (const name of named) expect(exposed, name).toContain(name);
  });

  it('puts no product, key, id or card number in any label', () => {
    for (const { name, labels } of all) {
      for (const value of Object.values(labels)) {
        expect(value, name).not.toMatch(/\d{12,}|[a-z]+_[0-9A-Za-z]{24}/);
        for (const id of [...made.ids, ...Object.values(PANS)]) expect(value, name).not.toContain(id);
      }
    }
  });

  it("keeps each service's counts its own, in one process", async () => {
    const other = await startService({ TOLOV_METRICS_TOKEN: METRICS_TOKEN });
    try {
      const names = new Set((await scrape(other)).map((sample) => sample.name));
      for (const name of ['tolov_payments_total', 'tolov_rail_calls_total', 'tolov_fiscal_calls_total', 'tolov_webhook_attempts_total']) expect(names).not.toContain(name);
      // Ends when the other stops: the first service counts on.
      expect(series(await scrape(service), 'tolov_payments_total')['kind=charge,outcome=succeeded,mode=test']).toBe(2);
    } finally {
      await other.stop();
    }
  });
});
