// The dashboard's lists: payments, orders, refunds, cards, events and the request log of the selected mode, with their
// filters in the address, search by id or customer reference, and paging; the same filters as the API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard, submitCard, submitCode, TEST_CODE } from '../support/binding.js';
import { idem, startService, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';
import { DashboardClient, uniqueEmail } from './client.js';

let service: TestService;
let client: DashboardClient;
let key: string;
beforeAll(async () => {
  service = await startService();
  client = new DashboardClient(service);
  await client.signUp(uniqueEmail());
  key = /sk_test_[0-9A-Za-z]{32}/.exec((await client.post('/dashboard/api-keys', {})).html)![0];
});
afterAll(async () => service.stop());

/** The ids in the first column of the page's table, in order. */
const idsOn = (html: string) => [...html.matchAll(/<tr><td[^>]*>(?:<a [^>]+>)?<code>((?:pi|ord|re|evt|req)_\w+)<\/code>/g)].map((match) => match[1]);


/** An owner of an account of their own, its test key made in the dashboard, and a card saved with it. */
async function ownerWithCard(name: string): Promise<{ owner: DashboardClient; key: string; card: string }> {
  const owner = new DashboardClient(service);
  await owner.signUp(uniqueEmail(name));
  const key = /sk_test_[0-9A-Za-z]{32}/.exec((await owner.post('/dashboard/api-keys', {})).html)![0];
  return { owner, key, card: await bindCard(service, key, '8600000000000007') };
}

describe('dashboard lists', () => {
  it('filter payments by status and customer, and find one by id', async () => {
    const good = await bindCard(service, key, '8600000000000007', { customerRef: 'dilnoza' });
    const bad = await bindCard(service, key, '8600000000000015', { customerRef: 'dilnoza' });
    const other = await bindCard(service, key, '8600000000000007', { customerRef: 'timur' });
    const paid = (await charge(service, key, { amount: 1_234_500, card: good })).body.id;
    const failed = (await charge(service, key, { amount: 50_000, card: bad })).body.id;
    const timurs = (await charge(service, key, { amount: 70_000, card: other })).body.id;

    const all = await client.get('/dashboard/payments');
    expect(idsOn(all.html)).toEqual([timurs, failed, paid]);
    expect(all.html).toContain('12,345.00 UZS');
    expect(idsOn((await client.get('/dashboard/payments?status=FAILED')).html)).toEqual([failed]);
    expect(idsOn((await client.get('/dashboard/payments?q=dilnoza')).html)).toEqual([failed, paid]);
    expect(idsOn((await client.get('/dashboard/payments?q=dilnoza&status=SUCCEEDED')).html)).toEqual([paid]);
    expect(idsOn((await client.get(`/dashboard/payments?q=${paid}`)).html)).toEqual([paid]);
    expect((await client.get('/dashboard/payments?q=pi_nothing')).html).toContain('Nothing matches in this mode.');
    // The form shows what is applied.
    expect((await client.get('/dashboard/payments?status=FAILED')).html).toMatch(/<option value="FAILED" selected>/);
  });

  it('show the card a hosted-page payment debited, unsaved, on the list and in the CSV', async () => {
    const order = (await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 40_000, customerRef: 'hosted-card' } })).body;
    const token = order.paymentUrl.split('/pay/')[1] as string;
    expect((await submitCard(service, token, { pan: '8600000000000007' })).status).toBe(200);
    expect((await submitCode(service, token, TEST_CODE)).body.status).toBe('COMPLETED');
    const intent = (await service.call({ method: 'GET', url: `/merchant/v1/orders/${order.id}`, key })).body.paymentIntent as string;

    const row = /<tr><td[^>]*><a [^>]+><code>(pi_\w+)<\/code>.*?<\/tr>/s.exec((await client.get(`/dashboard/payments?q=${intent}`)).html)!;
    expect(row[1]).toBe(intent);
    expect(row[0]).toContain('Uzcard •••• 0007');
    const csv = (await client.get(`/dashboard/payments.csv?q=${intent}`)).html.trimEnd().split('\r\n');
    expect(csv[0]).toBe('id,created,amount_uzs,fee_uzs,status,failure_code,card,network,masked_pan,order,refunded_uzs,description');
    expect(csv[1]).toMatch(new RegExp(`^${intent},[^,]+,400\\.00,[0-9.]+,SUCCEEDED,,,uzcard,860000\\*{6}0007,${order.id},0\\.00,`));
  });

  it('show amounts past 2^53 tiyin exactly on the overview, in each language, and the largest payment exactly in the list and CSV', async () => {
    const { owner, key: richKey, card } = await ownerWithCard('rich');
    const largest = (await charge(service, richKey, { amount: 1_000_000_000_000, card })).body.id as string;
    const productId = (await service.db.query<{ product_id: string }>('SELECT product_id FROM payment_intents WHERE id = $1', [largest]))[0]!.product_id;
    // No API moves this much: the ledger and today's payments are written as they would be after years of them.
    await service.db.transaction(async (tx) => {
      await tx.query("INSERT INTO ledger_transactions (id, product_id, livemode, reason, reference_id) VALUES ('ltx_rich', $1, false, 'test', 'test')", [productId]);
      await tx.query(
        `INSERT INTO ledger_entries (transaction_id, product_id, livemode, account, amount)
         VALUES ('ltx_rich', $1, false, 'merchant_available', 9010000000000001), ('ltx_rich', $1, false, 'rail_clearing', -9010000000000001)`,
        [productId],
      );
      await tx.query(
        `INSERT INTO ledger_balances (product_id, livemode, account, shard, amount) VALUES ($1, false, 'merchant_available', 0, 9010000000000001)
         ON CONFLICT (product_id, livemode, account, shard) DO UPDATE SET amount = ledger_balances.amount + EXCLUDED.amount`,
        [productId],
      );
      await tx.query(
        `INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, rail_token, rail, masked_pan, succeeded_at)
         SELECT 'pi_rich' || g, $1, false, CASE WHEN g = 0 THEN 1 ELSE 1000000000000 END, 0, 'UZS', 'SUCCEEDED', $2, 'tr_rich', 'uzcard',
                '860000******0007', now()
           FROM generate_series(0, 9010) g`,
        [productId, card],
      );
    });
    // Today: the charge above, the 9,010 of 10^10 so'm and one tiyin.
    const cases = [['en', '90,100,000,000,000.01 UZS', '90,110,000,000,000.01 UZS'], ['ru', '90 100 000 000 000,01 сум', '90 110 000 000 000,01 сум'], ['uz', '90 100 000 000 000,01 soʻm', '90 110 000 000 000,01 soʻm']];
    for (const [lang, available, volume] of cases) {
      owner.lang = lang!;
      const overview = (await owner.get('/dashboard/overview')).html.replaceAll('\u00a0', ' ');
      expect(overview, lang).toContain(available);
      expect(overview, lang).toContain(volume);
    }
    owner.lang = 'en';
    expect((await owner.get(`/dashboard/payments?q=${largest}`)).html).toContain('10,000,000,000.00 UZS');
    expect((await owner.get(`/dashboard/payments.csv?q=${largest}`)).html).toContain(`${largest},`);
    expect((await owner.get('/dashboard/payments.csv?status=SUCCEEDED')).html).toMatch(new RegExp(`^${largest},[^,]+,10000000000\\.00,`, 'm'));
  });

  it('show a refunded payment as Refunded in the list and the overview, and explain the negative balance its refund left', async () => {
    const { owner, key: ownKey, card } = await ownerWithCard('refunding');
    const kept = (await charge(service, ownKey, { amount: 20_000, card })).body.id as string;
    const refunded = (await charge(service, ownKey, { amount: 30_000, card })).body.id as string;
    expect((await owner.get('/dashboard/overview')).html).not.toContain('Negative:');
    await service.call({ method: 'POST', url: '/v1/refunds', key: ownKey, idempotencyKey: idem(), body: { paymentIntent: refunded } });
    // The API's status stays SUCCEEDED; the dashboard says what the merchant needs to know.
    expect((await service.call({ method: 'GET', url: `/v1/payment_intents/${refunded}`, key: ownKey })).body.status).toBe('SUCCEEDED');
    const rowOf = (html: string, id: string) => new RegExp(`<tr><td[^>]*><a [^>]+><code>${id}</code>.*?</tr>`, 's').exec(html)?.[0] ?? '';
    const list = (await owner.get('/dashboard/payments')).html;
    expect(rowOf(list, refunded)).toContain('<span class="status s-refunded" title="SUCCEEDED">Refunded</span>');
    expect(rowOf(list, kept)).toContain('<span class="status s-succeeded" title="SUCCEEDED">Succeeded</span>');
    // The payments are not settled yet: the refund came out of the available balance, now below zero.
    const cases = [['en', 'Refunded', 'Negative: refunds were paid', 'UZS'], ['ru', 'Возвращён', 'Баланс отрицательный: возвраты', 'сум'], ['uz', 'Qaytarilgan', 'Balans manfiy: qaytarishlar', 'soʻm']];
    for (const [lang, badge, explained, currency] of cases) {
      owner.lang = lang!;
      const overview = (await owner.get('/dashboard/overview')).html.replaceAll('\u00a0', ' ');
      expect(overview, lang).toMatch(new RegExp(`<p class="tile-value">-300[.,]00 ${currency}</p><p class="hint">${explained}`));
      expect(rowOf(overview, refunded), lang).toContain(`<span class="status s-refunded" title="SUCCEEDED">${badge}</span>`);
      expect(rowOf((await owner.get('/dashboard/payments')).html, refunded), lang).toContain(`<span class="status s-refunded" title="SUCCEEDED">${badge}</span>`);
    }
  });

  it('filter orders by day, page them with the filters kept, and refuse a bad date without failing', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const made = [];
    for (let n = 0; n < 27; n++) {
      made.push((await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 10_000 + n, customerRef: 'aziz' } })).body.id);
    }
    const first = await client.get(`/dashboard/orders?q=aziz&from=${today}&to=${today}`);
    expect(idsOn(first.html)).toEqual(made.slice(2).reverse());
    const older = /<a href="([^"]+)">Older<\/a>/.exec(first.html)![1]!.replaceAll('&amp;', '&');
    expect(older).toContain('q=aziz');
    expect(older).toContain(`from=${today}`);
    expect(idsOn((await client.get(older)).html)).toEqual([made[1], made[0]]);
    expect(idsOn((await client.get('/dashboard/orders?to=2020-01-01')).html)).toEqual([]);
    for (const from of ['yesterday', '2026-02-30']) {
      const bad = await client.get(`/dashboard/orders?from=${from}&status=PAID`);
      expect(bad.status).toBe(200);
      expect(bad.html).toContain('These filters cannot be applied');
    }
  });

  it('list refunds, cards by customer, events by type, and the request log', async () => {
    const card = await bindCard(service, key, '8600000000000007', { customerRef: 'malika' });
    const intent = (await charge(service, key, { amount: 99_000, card })).body.id;
    const refund = await service.call({ method: 'POST', url: '/v1/refunds', key, idempotencyKey: 'refund-from-test', body: { paymentIntent: intent } });
    expect(idsOn((await client.get('/dashboard/refunds')).html)).toEqual([refund.body.id]);
    const cards = await client.get('/dashboard/cards?q=malika');
    expect(cards.html).toContain('860000******0007');
    expect(cards.html).toContain(card);
    const events = await client.get('/dashboard/events?type=payment_intent.succeeded');
    expect(events.html).toContain(intent);
    expect(events.html).toMatch(/<td[^>]*>payment_intent\.succeeded<\/td>/);
    expect(events.html).not.toMatch(/<td[^>]*>payment_intent\.failed<\/td>/);
    const log = await client.get('/dashboard/logs');
    expect(log.html).toContain(refund.headers['request-id']);
    expect(log.html).toContain('refund-from-test');
    expect(log.html).not.toContain(key);
  });

  it('export a filtered list as CSV, every page of it, with formulas made inert', async () => {
    const made: string[] = [];
    for (let n = 0; n < 230; n++) {
      const description = n === 0 ? '=HYPERLINK("http://evil.example","x")' : `Order, number ${n}`;
      made.push((await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 100 + n, customerRef: 'export-me', description } })).body.id);
    }
    const page = await client.get('/dashboard/orders?q=export-me&status=PENDING');
    const link = /<a href="([^"]+\.csv[^"]*)" download>/.exec(page.html)![1]!.replaceAll('&amp;', '&');
    expect(link).toBe('/dashboard/orders.csv?q=export-me&status=PENDING');
    const csv = await client.get(link);
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe('attachment; filename="tolov-orders-test.csv"');
    const lines = csv.html.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,created,amount_uzs,status,customer_ref,payment_intent,paid_at,payment_link,description');
    expect(lines).toHaveLength(231);
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual([...made].reverse());
    expect(lines.at(-1)).toContain(`'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(lines[1]).toMatch(/,3\.29,PENDING,export-me,,,,"Order, number 229"$/);
    expect((await client.get('/dashboard/orders.csv?from=someday')).status).toBe(400);
  });

  it('take the first and last days of the calendar as date filters, on pages and in exports', async () => {
    const order = (await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 100, customerRef: 'far-days' } })).body.id;
    for (const slug of ['payments', 'orders', 'refunds', 'receipts', 'cards', 'events']) {
      for (const dates of ['to=9999-12-31', 'from=0001-01-01&to=9999-12-31', 'from=9999-12-31', 'to=0001-01-01']) {
        const csv = await client.get(`/dashboard/${slug}.csv?${dates}`);
        expect(csv.status, `${slug}.csv?${dates}`).toBe(200);
        const page = await client.get(`/dashboard/${slug}?${dates}`);
        expect(page.html, `${slug}?${dates}`).not.toContain('These filters cannot be applied');
      }
    }
    expect((await client.get('/dashboard/orders.csv?q=far-days&to=9999-12-31')).html).toContain(order);
    expect(idsOn((await client.get('/dashboard/orders?q=far-days&from=2000-01-01&to=9999-12-31')).html)).toEqual([order]);
    expect((await client.get('/dashboard/orders.csv?q=far-days&from=9999-12-31')).html).not.toContain(order);
    for (const day of ['10000-01-01', '0000-12-31', '9999-12-32']) expect((await client.get(`/dashboard/orders.csv?to=${day}`)).status).toBe(400);
  });

  it('export no cell a spreadsheet runs as a formula, whichever separator its locale splits on', async () => {
    const descriptions = [
      "shop;=cmd|' /C calc'!A0", 'a;+1+1', 'b; -2+3', 'c;@SUM(1)', 'd;"=1+1"', 'e\t=1+1', 'f,=1+1', 'g\n=1+1', 'h\r\n-1+1', ' =1+1', '\t@SUM(1)', '\r=1',
    ];
    for (const description of descriptions) {
      await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 100, customerRef: 'formula-locale', description } });
    }
    const csv = await client.get('/dashboard/orders.csv?q=formula-locale');
    expect(csv.status).toBe(200);
    // Splitting on every separator and every line break, quotes ignored, gives every cell any spreadsheet could see.
    for (const separator of [',', ';', '\t']) {
      const cells = csv.html.split(/\r\n|\n|\r/).flatMap((line) => line.split(separator));
      expect(cells.filter((cell) => /^[\s"]*[=+\-@]/.test(cell))).toEqual([]);
    }
    // A cell holding a separator is quoted, so that a reader honouring quotes keeps it whole.
    expect(csv.html).toContain(`,"shop;'=cmd|' /C calc'!A0"\r\n`);
    expect(csv.html).toContain(`,"e\t'=1+1"\r\n`);
  });
});
