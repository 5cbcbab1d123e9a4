// Support's search in the console and the operator API: each kind of object found by its id, in any product, with its
// page and timeline (a card never more than its network and last four, a payout's account never more than its bank's
// MFO and last four); payments found by card, amount and Tashkent
// day; bad input answered with what is wrong (a page, or 400 VALIDATION_ERROR), never a 500; every search audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tashkentDay } from '../../src/core/calendar.js';
import { bindCard } from '../support/binding.js';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { charge, eventsOf } from '../support/payments.js';
import { makeAvailable, setPayoutAccount } from '../support/payouts.js';
import { receiptFor } from '../support/receipts.js';
import { firstAdmin, invitedOperator, type Operator } from './client.js';

let service: TestService;
let admin: Operator;
let shop: Merchant;
/** One object of each kind the search reads, made through the API as merchants and buyers make them. */
const made = {} as Record<'payment' | 'receipt' | 'refund' | 'order' | 'orderPayment' | 'payout' | 'event' | 'ledger' | 'endpoint' | 'card', string>;
/** The payment found by its card: 12,345.67 so'm on a card ending 0007. */
const AMOUNT = 1_234_567;
let paidAt: Date;
/** The whole number of the account the payout goes to: no page shows it. */
let accountNumber: string;

const call = async (method: 'POST' | 'GET', url: string, body?: Record<string, unknown>) => {
  const reply = await service.call({ method, url, key: shop.test, ...(method === 'POST' ? { idempotencyKey: idem(), body: body ?? {} } : {}) });
  if (reply.status >= 300) throw new Error(`${method} ${url}: ${reply.text}`);
  return reply.body;
};

beforeAll(async () => {
  service = await startService({ TOLOV_PAYOUT_MIN: '1000000', TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
  admin = await firstAdmin(service);
  shop = await service.createMerchant();
  made.card = await bindCard(service, shop.test, '8600000000000007');
  const paid = (await charge(service, shop.test, { amount: AMOUNT, card: made.card, receipt: receiptFor(AMOUNT) })).body;
  [made.payment, made.receipt, paidAt] = [paid.id, paid.receipt, new Date(paid.created)];
  made.refund = (await call('POST', '/v1/refunds', { paymentIntent: made.payment })).id;
  const order = await call('POST', '/merchant/v1/orders', { amount: 7_500_00, description: 'Atlas' });
  made.order = order.id;
  made.orderPayment = (await call('POST', `/v1/test_helpers/orders/${order.id}/pay`)).paymentIntent;
  await makeAvailable(service, shop.test, 3_000_000);
  accountNumber = await setPayoutAccount(service, shop.productId);
  made.payout = (await call('POST', '/v1/test_helpers/payouts/run')).id;
  made.event = (await service.db.query<{ id: string }>('SELECT id FROM events WHERE object_id = $1 LIMIT 1', [made.payment]))[0]!.id;
  made.ledger = (await service.db.query<{ id: string }>('SELECT id FROM ledger_transactions WHERE reference_id = $1 LIMIT 1', [made.payment]))[0]!.id;
  made.endpoint = (await call('POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hook' })).id;
});
afterAll(() => service?.stop());

const searches = async () =>
  service.db.query<{ target: string | null; detail: string | null; via: string }>(`SELECT target, detail, via FROM operator_audit WHERE action = 'support.searched' ORDER BY seq`);

describe('the search by id', () => {
  it.each([
    ['payment', 'Payment'],
    ['orderPayment', 'Payment'],
    ['receipt', 'Receipt'],
    ['refund', 'Refund'],
    ['order', 'Order'],
    ['payout', 'Payout'],
    ['event', 'Event'],
    ['ledger', 'Ledger transaction'],
    ['endpoint', 'Webhook endpoint'],
    ['card', 'Saved card'],
  ] as const)('finds the %s and shows its page: product, fields and timeline', async (name, kind) => {
    const id = made[name];
    const asked = await admin.client.get(`/operator/search?q=${id}`);
    expect(asked.location).toBe(`/operator/search/${id}`);
    const page = await admin.client.get(asked.location!);
    expect(page.status).toBe(200);
    expect(page.html).toContain(`<h1>${kind} ${id}</h1>`);
    expect(page.html).toContain(`<a href="/operator/products/${shop.productId}"><code>${shop.productId}</code></a>`);
    expect(page.html).toMatch(/<ol class="timeline"><li><span>[^<]+UTC<\/span> Created<\/li>/);
    for (const event of await eventsOf(service, id)) expect(page.html).toContain(`<code>${event.type}</code>`);
    // Never a card number, nor its masked form: the network and the last four at most.
    expect(page.html).not.toMatch(/860000|\*{6}/);
  });

  it("shows a payment's card, amounts and linked objects, and its refund and receipts on its timeline", async () => {
    const page = (await admin.client.get(`/operator/search/${made.payment}`)).html;
    expect(page).toContain('<dd>Uzcard •••• 0007</dd>');
    expect(page).toContain('<dd>12,345.67 UZS</dd>');
    // Refunded in full, as the dashboard says; the API's status in its title.
    expect(page).toContain('<span class="status s-refunded" title="SUCCEEDED">Refunded</span>');
    for (const id of [made.card, made.refund, made.receipt]) expect(page).toContain(`<dd><a href="/operator/search/${id}"><code>${id}</code></a></dd>`);
    expect(page.split(`<dd><a href="/operator/search/${made.receipt}">`)).toHaveLength(2);
    const timeline = /<ol class="timeline">([\s\S]*?)<\/ol>/.exec(page)![1]!;
    const items = [...timeline.matchAll(/<li[^>]*><span>[^<]+<\/span> ([\s\S]*?)<\/li>/g)].map((item) => item[1]!.replace(/<[^>]+>/g, ''));
    // What happened, in order: made, paid and its money moved, its sale receipt, then the refund, its money and its return receipt.
    expect(items[0]).toBe('Created');
    expect(items).toContain('Succeeded');
    expect(items).toContain(`Refund ${made.refund}`);
    expect(items).toContain(`Receipt ${made.receipt}`);
    expect(items.filter((item) => item.startsWith('Receipt rcpt_'))).toHaveLength(2);
    expect(items.some((item) => item.startsWith('Money moved in the ledger: refund_succeeded ltx_'))).toBe(true);
    expect(items.indexOf(`Refund ${made.refund}`)).toBeGreaterThan(items.indexOf('Succeeded'));
    expect(items.filter((item) => item.startsWith('payment_intent.succeeded evt_'))).toHaveLength(1);
  });

  it("shows a payout's account as the activation review does: the bank's MFO and the last four digits only", async () => {
    const page = (await admin.client.get(`/operator/search/${made.payout}`)).html;
    expect(page).toContain(`<dt>Account (MFO and last four digits)</dt><dd>00440\u00a0••••\u00a0${accountNumber.slice(-4)}</dd>`);
    expect(page).not.toContain(accountNumber.slice(0, 16));
    expect(page).toContain('<dt>Account holder</dt><dd>Chorsu Market LLC</dd>');
  });

  it('is open to support, and every look-up is in the audit log, found or not', async () => {
    const support = await invitedOperator(service, admin, 'support');
    expect((await support.client.get(`/operator/search/${made.order}`)).status).toBe(200);
    const missing = await support.client.get('/operator/search/pi_0000000000000000missing');
    expect(missing.status).toBe(404);
    expect(missing.html).toContain('Nothing has the id pi_0000000000000000missing, in either mode.');
    const targets = (await searches()).map((entry) => entry.target);
    expect(targets).toEqual(expect.arrayContaining([made.order, 'pi_0000000000000000missing', ...Object.values(made)]));
  });
});

describe('the search by card, amount and day', () => {
  const find = (query: Record<string, string>) => admin.client.get(`/operator/search?${new URLSearchParams(query)}`);

  it("finds a test-mode payment by its card's last four, the amount in so'm as typed, and its Tashkent day", async () => {
    const day = tashkentDay(paidAt);
    for (const amount of ['12345.67', '12 345,67', ' 12 345.67 ']) {
      const page = await find({ last4: '0007', amount, day });
      expect(page.status, amount).toBe(200);
      expect(page.html).toContain('Payments found: 1');
      expect(page.html).toContain(`<a href="/operator/search/${made.payment}">`);
      expect(page.html).toContain('Uzcard •••• 0007');
    }
    const last = (await searches()).at(-1)!;
    expect(last).toMatchObject({ target: null, via: 'console', detail: `card ending 0007, ${AMOUNT} tiyin, Tashkent day ${day}` });
  });

  it('finds nothing with another last four, amount or day', async () => {
    const day = tashkentDay(paidAt);
    const nextDay = tashkentDay(new Date(paidAt.getTime() + 86_400_000));
    for (const query of [{ last4: '0015', amount: '12345.67', day }, { last4: '0007', amount: '12345.68', day }, { last4: '0007', amount: '12345.67', day: nextDay }]) {
      const page = await find(query);
      expect(page.status).toBe(200);
      expect(page.html).toContain('No payment by such a card, of this amount, on this day.');
    }
  });

  it('says what is wrong with each field, with 400, and searches nothing', async () => {
    const before = (await searches()).length;
    const page = await find({ last4: '12', amount: '12,345.67', day: '2026-02-30' });
    expect(page.status).toBe(400);
    for (const words of ['<p>Enter the card&#39;s last four digits.</p>', '<p>Enter the amount in so&#39;m, such as 50000 or 50000.50.</p>', '<p>Enter a real day, YYYY-MM-DD.</p>']) expect(page.html).toContain(words);
    expect(page.html.match(/aria-invalid="true"/g)).toHaveLength(3);
    expect((await find({ last4: '0007', amount: '0', day: '2026-01-01' })).status).toBe(400);
    expect((await find({ last4: '0007', amount: '99999999999', day: '2026-01-01' })).status).toBe(400);
    expect((await searches()).length).toBe(before);
  });
});

describe('bad input to the console', () => {
  it('answers a card number, markup or a repeated field with a page saying so, and writes no card number anywhere', async () => {
    for (const url of ['/operator/search?q=8600000000000007', '/operator/search?q=%3Cscript%3E', '/operator/search/8600000000000007', '/operator/search/pi_%3Cb%3E']) {
      const page = await admin.client.get(url);
      expect(page.status, url).toBe(400);
      expect(page.html).toContain('This is not an object id.');
      expect(page.html).not.toContain('<script>');
      expect(page.html).not.toContain('8600000000000007');
    }
    expect((await admin.client.get('/operator/search?q=pi_a&q=pi_b')).status).toBe(400);
    const audited = await service.db.query(`SELECT 1 FROM operator_audit WHERE target LIKE '%8600%' OR detail LIKE '%8600%'`);
    expect(audited).toEqual([]);
  });
});

describe('GET /admin/v1/search', () => {
  const search = (query: string) => service.admin('GET', `/admin/v1/search?${query}`);

  it('finds an object by its id: one result in a list, none for an id of nothing', async () => {
    const found = await search(`q=${made.payment}`);
    expect(found.status).toBe(200);
    expect(found.body).toEqual({
      object: 'list',
      data: [{ object: 'payment_intent', id: made.payment, product: shop.productId, livemode: false, status: 'SUCCEEDED', amount: AMOUNT, created: paidAt.toISOString() }],
      has_more: false,
    });
    expect((await search(`q=${made.event}`)).body.data).toEqual([expect.objectContaining({ object: 'event', status: null, amount: null })]);
    expect((await search('q=po_nothing')).body).toEqual({ object: 'list', data: [], has_more: false });
    expect((await searches()).at(-1)).toMatchObject({ target: 'po_nothing', via: 'api' });
  });

  it('finds payments by last4, amount in tiyin and Tashkent day', async () => {
    const found = await search(`last4=0007&amount=${AMOUNT}&day=${tashkentDay(paidAt)}`);
    expect(found.status).toBe(200);
    expect(found.body.data.map((hit: { id: string }) => hit.id)).toEqual([made.payment]);
    expect(found.body.has_more).toBe(false);
    // Days at the ends of the calendar are searched, not refused by a date the database cannot take.
    for (const day of ['0001-01-01', '9999-12-31']) expect((await search(`last4=0007&amount=${AMOUNT}&day=${day}`)).body.data).toEqual([]);
  });

  it('answers bad input with 400 VALIDATION_ERROR naming the parameter, never a 500', async () => {
    for (const [query, param] of [
      ['', 'last4'],
      [`q=${made.payment}&last4=0007`, 'q'],
      ['q=8600000000000007', 'q'],
      ['q=', 'q'],
      ['last4=12&amount=100&day=2026-01-01', 'last4'],
      ['last4=0007&amount=0&day=2026-01-01', 'amount'],
      ['last4=0007&amount=1.5&day=2026-01-01', 'amount'],
      ['last4=0007&amount=abc&day=2026-01-01', 'amount'],
      ['last4=0007&amount=100&day=2026-02-30', 'day'],
      ['last4=0007&amount=100', 'day'],
      ['last4=0007&amount=100&day=2026-01-01&mode=live', 'mode'],
    ] as const) {
      const reply = await search(query);
      expect(reply.status, query).toBe(400);
      expect(reply.body, query).toMatchObject({ code: 'VALIDATION_ERROR', param });
    }
  });

  it('needs the operator token', async () => {
    expect((await service.call({ method: 'GET', url: `/admin/v1/search?q=${made.payment}` })).status).toBe(401);
    expect((await service.call({ method: 'GET', url: `/admin/v1/search?q=${made.payment}`, key: shop.test })).status).toBe(401);
  });
});
