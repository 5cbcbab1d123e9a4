// Fiscal receipts in the dashboard: the Receipts list (filters in the address, paging, CSV), a payment's receipts on
// its page and their events in its timeline, the overview's flag of failed ones; each mode and each product sees its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { idem, startService, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';
import { DashboardClient, uniqueEmail } from './client.js';

/** Two lines and shipping, as in the API's tests: 2 × 50,000.00 − 5,000.00 + 30,000.00 + 15,000.00 = 140,000.00 so'm. */
const CART = {
  items: [
    { title: 'Choynak', price: 5_000_000, count: 2, code: '10399001001000000', packageCode: '1505709', vatPercent: 12, discount: 500_000 },
    { title: 'Kitob', price: 3_000_000, count: 1, code: '04901001001000000', packageCode: '1510911', vatPercent: 0, commissionTin: '123456789' },
  ],
  shipping: { title: 'Yetkazib berish', price: 1_500_000, code: '10112006002000000', packageCode: '1209779', vatPercent: 12 },
};
const CART_AMOUNT = 14_000_000;
/** One line the test fiscal module refuses (its code of seventeen zeros). */
const refusedCart = (price: number) => ({ items: [{ title: 'Atlas', price, count: 1, code: '00000000000000000', packageCode: '1', vatPercent: 12 }] });
/** One line it registers. */
const oneLine = (price: number) => ({ items: [{ title: 'Non', price, count: 1, code: '10399001001000000', packageCode: '1505709', vatPercent: 12 }] });

let service: TestService;

interface Shop {
  owner: DashboardClient;
  key: string;
  card: string;
  email: string;
}

async function shop(name: string): Promise<Shop> {
  const owner = new DashboardClient(service);
  const email = uniqueEmail(name);
  await owner.signUp(email);
  const key = /sk_test_[0-9A-Za-z]{32}/.exec((await owner.post('/dashboard/api-keys', {})).html)![0];
  return { owner, key, card: await bindCard(service, key, '8600000000000007'), email };
}

/** A charge with `receipt` lines; its intent. */
async function paid(of: Shop, amount: number, receipt: unknown): Promise<{ id: string; receipt: string }> {
  const reply = await charge(service, of.key, { amount, card: of.card, receipt });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

async function refund(of: Shop, paymentIntent: string): Promise<{ id: string; receipt: string }> {
  return (await service.call({ method: 'POST', url: '/v1/refunds', key: of.key, idempotencyKey: idem(), body: { paymentIntent } })).body;
}

const fiscalize = () => service.receipts.fiscalizeDue(100);

/** The receipt ids in the first column of a list page, in order. */
const idsOn = (html: string) => [...html.matchAll(/<tr><td[^>]*><a [^>]+><code>(rcpt_\w+)<\/code>/g)].map((match) => match[1]);
/** The row of `id` on a list page. */
const rowOf = (html: string, id: string) => new RegExp(`<tr><td[^>]*><a [^>]+><code>${id}</code>.*?</tr>`, 's').exec(html)?.[0] ?? '';
/** The receipt's card on a payment's page. */
const sectionOf = (html: string, id: string) => new RegExp(`<section class="receipt" id="${id}".*?</section>`, 's').exec(html)?.[0] ?? '';

let main: Shop;
/** A sale refunded (a sale and a return receipt, both fiscalized), and a sale the module refused. */
let sold: { id: string; receipt: string };
let returned: { id: string; receipt: string };
let refused: { id: string; receipt: string };
beforeAll(async () => {
  service = await startService();
  main = await shop('receipts');
  sold = await paid(main, CART_AMOUNT, CART);
  refused = await paid(main, 250_000, refusedCart(250_000));
  returned = await refund(main, sold.id);
  // The sales first; the return once its sale is registered.
  expect(await fiscalize()).toBe(2);
  expect(await fiscalize()).toBe(1);
});
afterAll(async () => service.stop());

describe('the Receipts list', () => {
  it('shows each receipt’s type, amount, VAT and status in the page’s words, linked to its payment, from the navigation', async () => {
    const page = await main.owner.get('/dashboard/receipts');
    expect(page.status).toBe(200);
    expect(page.html).toContain('<a href="/dashboard/receipts" aria-current="page">Receipts</a>');
    expect(idsOn(page.html)).toEqual([returned.receipt, refused.receipt, sold.receipt]);
    const sale = rowOf(page.html, sold.receipt);
    expect(sale).toContain(`<a href="/dashboard/payments/${sold.id}#${sold.receipt}">`);
    expect(sale).toContain('<span title="sale">Sale</span>');
    // 9,500,000 × 12/112 → 1,017,857 and 1,500,000 × 12/112 → 160,714 tiyin of VAT.
    expect(sale).toMatch(/<td data-label="Amount" class="num">140,000\.00 UZS<\/td>\s*<td data-label="VAT" class="num">11,785\.71 UZS<\/td>/);
    expect(sale).toContain('<span class="status s-fiscalized" title="FISCALIZED">Fiscalized</span>');
    expect(sale).toContain(`<a href="/dashboard/payments/${sold.id}"><code>${sold.id}</code></a>`);
    expect(rowOf(page.html, returned.receipt)).toContain('<span title="return">Return</span>');
    expect(rowOf(page.html, refused.receipt)).toContain(
      '<span class="status s-failed" title="FAILED">Failed</span> <small title="INVALID_CODE">The fiscal module refused an item’s IKPU code</small>',
    );
    for (const [lang, words] of [['ru', ['Чеки', 'Фискализирован', 'Продажа', 'Не фискализирован', '140 000,00 сум']], ['uz', ['Cheklar', 'Fiskallashtirilgan', 'Sotuv', 'Fiskallashtirilmagan', '140 000,00 soʻm']]] as const) {
      main.owner.lang = lang;
      const translated = (await main.owner.get('/dashboard/receipts')).html.replaceAll('\u00a0', ' ');
      for (const word of words) expect(translated, `${lang}: ${word}`).toContain(word);
    }
    main.owner.lang = 'en';
  });

  it('filters by status, type and day, finds a receipt or a payment’s receipts, and says which filter it cannot apply', async () => {
    const get = async (query: string) => idsOn((await main.owner.get(`/dashboard/receipts?${query}`)).html);
    expect(await get('status=FAILED')).toEqual([refused.receipt]);
    expect(await get('status=FISCALIZED&type=sale')).toEqual([sold.receipt]);
    expect(await get('type=return')).toEqual([returned.receipt]);
    expect(await get('status=PENDING')).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect(await get(`from=${today}&to=${today}&type=sale`)).toEqual([refused.receipt, sold.receipt]);
    expect(await get('to=2020-01-01')).toEqual([]);
    expect(await get(`q=${sold.receipt}`)).toEqual([sold.receipt]);
    expect(await get(`q=${sold.id}`)).toEqual([returned.receipt, sold.receipt]);
    expect(await get('q=rcpt_nothing')).toEqual([]);
    const shown = (await main.owner.get('/dashboard/receipts?status=FAILED&type=sale')).html;
    expect(shown).toMatch(/<option value="FAILED" selected>Failed<\/option>/);
    expect(shown).toMatch(/<option value="sale" selected>Sale<\/option>/);
    expect(shown).toContain('<a href="/dashboard/receipts.csv?status=FAILED&amp;type=sale" download>');
    for (const [query, field] of [['status=DONE', 'Status'], ['type=refund', 'Type'], ['from=2026-02-30', 'From']]) {
      const bad = await main.owner.get(`/dashboard/receipts?${query}`);
      expect(bad.status, query).toBe(200);
      expect(bad.html, query).toContain(`These filters cannot be applied: check “${field}”.`);
      expect((await main.owner.get(`/dashboard/receipts.csv?${query}`)).status, query).toBe(400);
    }
  });

  it('pages 25 at a time, keeping the filters in the Older link', async () => {
    const many = await shop('many-receipts');
    const made: string[] = [];
    for (let n = 0; n < 27; n++) made.push((await paid(many, 10_000 + n, oneLine(10_000 + n))).receipt);
    await fiscalize();
    const first = await many.owner.get('/dashboard/receipts?status=FISCALIZED&type=sale');
    expect(idsOn(first.html)).toEqual(made.slice(2).reverse());
    const older = /<a href="([^"]+)">Older<\/a>/.exec(first.html)![1]!.replaceAll('&amp;', '&');
    expect(older).toBe(`/dashboard/receipts?status=FISCALIZED&type=sale&starting_after=${made[2]}`);
    expect(idsOn((await many.owner.get(older)).html)).toEqual([made[1], made[0]]);
  });

  it('exports the filtered list as CSV with the fiscal fields, its cells made formula-safe', async () => {
    const csv = await main.owner.get('/dashboard/receipts.csv');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe('attachment; filename="tolov-receipts-test.csv"');
    const lines = csv.html.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,created,type,status,amount_uzs,vat_uzs,payment_intent,refund,terminal_id,receipt_number,fiscal_sign,fiscalized_at,failure_code,qr_url,receipt_url');
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual([returned.receipt, refused.receipt, sold.receipt]);
    const api = (await service.call({ method: 'GET', url: `/v1/receipts/${sold.receipt}`, key: main.key })).body;
    expect(lines[3]).toBe(
      [sold.receipt, api.created, 'sale', 'FISCALIZED', '140000.00', '11785.71', sold.id, '', api.terminalId, api.receiptNumber, api.fiscalSign, api.fiscalizedAt, '', api.qrUrl, api.url].join(','),
    );
    expect(lines[1]).toMatch(new RegExp(`^${returned.receipt},[^,]+,return,FISCALIZED,140000\\.00,11785\\.71,${sold.id},${returned.id},TEST\\w+,`));
    expect(lines[2]).toMatch(new RegExp(`^${refused.receipt},[^,]+,sale,FAILED,2500\\.00,267\\.86,${refused.id},,,,,,INVALID_CODE,,http`));
    expect((await main.owner.get('/dashboard/receipts.csv?type=return')).html.trimEnd().split('\r\n')).toHaveLength(2);

    // A live fiscal gateway's refusal code is text Tolov did not write: a formula in it is made inert, here and on the page.
    const formula = "=HYPERLINK(\"http://evil.example\";\"x\")";
    await service.db.query('UPDATE receipts SET failure_code = $2 WHERE id = $1', [refused.receipt, formula]);
    try {
      const escaped = (await main.owner.get('/dashboard/receipts.csv?status=FAILED')).html;
      expect(escaped).toContain(`,"'=HYPERLINK(""http://evil.example"";""x"")",`);
      for (const separator of [',', ';', '\t']) {
        expect(escaped.split(/\r\n/).flatMap((line) => line.split(separator)).filter((cell) => /^[\s"]*[=+\-@]/.test(cell))).toEqual([]);
      }
      const page = (await main.owner.get(`/dashboard/payments/${refused.id}`)).html;
      expect(page).toContain('<code>=HYPERLINK(&quot;http://evil.example&quot;;&quot;x&quot;)</code>');
    } finally {
      await service.db.query(`UPDATE receipts SET failure_code = 'INVALID_CODE' WHERE id = $1`, [refused.receipt]);
    }
  });
});

describe('a payment’s page', () => {
  it('shows its sale and return receipts with what the fiscal module signed, the lines once, and their events in the timeline', async () => {
    const page = (await main.owner.get(`/dashboard/payments/${sold.id}`)).html;
    const [sale, back] = [(await service.call({ method: 'GET', url: `/v1/receipts/${sold.receipt}`, key: main.key })).body, (await service.call({ method: 'GET', url: `/v1/receipts/${returned.receipt}`, key: main.key })).body];
    expect(page).toContain('<h2>Fiscal receipts</h2>');
    const saleCard = sectionOf(page, sold.receipt);
    expect(saleCard).toContain(`<h3 id="${sold.receipt}-title">Sale receipt <code>${sold.receipt}</code></h3>`);
    expect(saleCard).toContain('<dt>Status</dt><dd><span class="status s-fiscalized" title="FISCALIZED">Fiscalized</span></dd>');
    expect(saleCard).toContain('<dt>Amount</dt><dd>140,000.00 UZS</dd><dt>VAT</dt><dd>11,785.71 UZS</dd>');
    expect(saleCard).toContain(`<dt>Fiscal module (terminal)</dt><dd><code>${sale.terminalId}</code></dd>`);
    expect(saleCard).toContain(`<dt>Receipt number</dt><dd><code>${sale.receiptNumber}</code></dd>`);
    expect(saleCard).toContain(`<dt>Fiscal sign</dt><dd><code>${sale.fiscalSign}</code></dd>`);
    expect(saleCard).toContain(`<a href="${sale.qrUrl.replaceAll('&', '&amp;')}" rel="noopener">Open on ofd.soliq.uz</a>`);
    expect(saleCard).toContain(`<dt>Buyer’s receipt</dt><dd><a href="${sale.url}">Open the printable receipt</a></dd>`);
    expect(saleCard).not.toContain('<dt>Refund</dt>');
    const returnCard = sectionOf(page, returned.receipt);
    expect(returnCard).toContain('Return receipt');
    expect(returnCard).toContain(`<dt>Refund</dt><dd><a href="/dashboard/refunds?q=${returned.id}"><code>${returned.id}</code></a></dd>`);
    expect(returnCard).toContain(`<code>${back.fiscalSign}</code>`);
    expect(returnCard).toContain(`<a href="${back.url}">`);
    // The sale's lines, once, the shipping last; each total exact.
    const lines = /<table class="receipt-lines">.*?<\/table>/s.exec(page)![0];
    expect(lines.match(/<tr>/g)).toHaveLength(4);
    expect(lines).toMatch(/Choynak.*?<code>10399001001000000<\/code>.*?<code>1505709<\/code>.*?>2<\/td>.*?>50,000\.00 UZS<\/td>.*?>5,000\.00 UZS<\/td>.*?>12%<\/td>.*?>95,000\.00 UZS<\/td>/s);
    expect(lines).toMatch(/Kitob<small class="hint">On commission, principal’s TIN 123456789<\/small>.*?<td data-label="Discount" class="num"><\/td>.*?>0%<\/td>/s);
    expect(lines).toMatch(/Yetkazib berish<small class="hint">Shipping<\/small>.*?>15,000\.00 UZS<\/td>\s*<\/tr>\s*<\/tbody>/s);
    // The timeline holds the payment's events, its refund, and both receipts' events, oldest first.
    const timeline = /<ol class="timeline">(.*?)<\/ol>/s.exec(page)![1]!;
    const order = ['payment_intent.succeeded', 'Refund', 'receipt.fiscalized'].map((text) => timeline.indexOf(text));
    expect(order[0]).toBeGreaterThanOrEqual(0);
    expect(order).toEqual([...order].sort((x, y) => x - y));
    expect(timeline.match(/<code>receipt\.fiscalized<\/code>/g)).toHaveLength(2);
    expect(page.split('</main>')[0]).toMatch(/<ol class="timeline">.*<\/ol>\s*$/s);
  });

  it('says why a receipt failed and what to do, one still pending that it is being registered, and when a payment has none', async () => {
    const failed = sectionOf((await main.owner.get(`/dashboard/payments/${refused.id}`)).html, refused.receipt);
    expect(failed).toContain('<span class="status s-failed" title="FAILED">Failed</span> <small title="INVALID_CODE">The fiscal module refused an item’s IKPU code</small>');
    expect(failed).toContain('<p class="receipt-note failed">The tax authority has no record of this receipt, and Tolov will not try again.');
    expect(failed).not.toContain('Fiscal sign');
    expect(failed).toContain('Open the printable receipt');

    const waiting = await paid(main, 20_000, oneLine(20_000));
    const pending = sectionOf((await main.owner.get(`/dashboard/payments/${waiting.id}`)).html, waiting.receipt);
    expect(pending).toContain('<span class="status s-pending" title="PENDING">Pending</span>');
    expect(pending).toContain('<p class="receipt-note">Tolov is registering it with the fiscal module');
    await fiscalize();

    const plain = (await charge(service, main.key, { amount: 30_000, card: main.card })).body.id as string;
    expect((await main.owner.get(`/dashboard/payments/${plain}`)).html).toContain('<h2>Fiscal receipts</h2><p class="empty">No fiscal receipt: the payment was made without receipt lines.</p>');
    const declined = (await charge(service, main.key, { amount: 250_000, card: await bindCard(service, main.key, '8600000000000015'), receipt: refusedCart(250_000) })).body.id as string;
    expect((await main.owner.get(`/dashboard/payments/${declined}`)).html).not.toContain('Fiscal receipts');
  });

  it('links each receipt event in the Events list to the receipt in the Receipts list', async () => {
    const events = (await main.owner.get('/dashboard/events?type=receipt.failed')).html;
    expect(events).toContain(`<a href="/dashboard/receipts?q=${refused.receipt}"><code>${refused.receipt}</code></a>`);
    expect(idsOn((await main.owner.get(`/dashboard/receipts?q=${refused.receipt}`)).html)).toEqual([refused.receipt]);
  });
});

describe('the overview', () => {
  it('flags the failed receipts of its 30 days, calmly, with a link to them; an account without any shows nothing', async () => {
    const overview = (await main.owner.get('/dashboard/overview')).html;
    const first = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
    expect(overview).toContain(
      `<p class="notice warning">Fiscal receipts not registered in the last 30 days: 1. The tax authority has no record of these sales or refunds; register them another way. <a href="/dashboard/receipts?status=FAILED&amp;from=${first}">See them</a></p>`,
    );
    expect(idsOn((await main.owner.get(`/dashboard/receipts?status=FAILED&from=${first}`)).html)).toEqual([refused.receipt]);
    // Older than the overview's days: no longer flagged, still in the list.
    await service.db.query(`UPDATE receipts SET created_at = created_at - interval '31 days' WHERE id = $1`, [refused.receipt]);
    try {
      expect((await main.owner.get('/dashboard/overview')).html).not.toContain('notice warning');
      expect(idsOn((await main.owner.get('/dashboard/receipts?status=FAILED')).html)).toEqual([refused.receipt]);
    } finally {
      await service.db.query(`UPDATE receipts SET created_at = created_at + interval '31 days' WHERE id = $1`, [refused.receipt]);
    }
    for (const [lang, text] of [['ru', 'Чеков, не прошедших фискализацию за последние 30 дней: 1.'], ['uz', 'Oxirgi 30 kunda fiskallashtirilmagan cheklar: 1.']] as const) {
      main.owner.lang = lang;
      expect((await main.owner.get('/dashboard/overview')).html).toContain(text);
    }
    main.owner.lang = 'en';
    const clean = await shop('no-failures');
    await paid(clean, 20_000, oneLine(20_000));
    await fiscalize();
    expect((await clean.owner.get('/dashboard/overview')).html).not.toContain('notice warning');
  });
});

describe('modes and products', () => {
  /** The product of a signed-up owner. */
  const productOf = async (email: string) =>
    (await service.db.query<{ id: string }>(`SELECT p.id FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1`, [email]))[0]!.id;

  it('show live receipts in live mode only, and test receipts in test mode only', async () => {
    const both = await shop('both-modes');
    const test = await paid(both, 250_000, refusedCart(250_000));
    await fiscalize();
    expect((await service.admin('POST', `/admin/v1/products/${await productOf(both.email)}/live`)).status).toBe(200);
    // A live payment and its receipt, refused by the fiscal gateway, as the live rail and the worker would leave them.
    await service.db.query(
      `INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, rail_token, rail, masked_pan, succeeded_at)
       SELECT 'pi_liveReceipt1', product_id, true, amount, fee, currency, status, card_id, rail_token, rail, masked_pan, succeeded_at FROM payment_intents WHERE id = $1`,
      [test.id],
    );
    await service.db.query(
      `INSERT INTO receipts (id, product_id, livemode, type, status, payment_intent_id, lines, amount, vat_amount, masked_pan, public_token, failure_code)
       SELECT 'rcpt_liveReceipt1', product_id, true, 'sale', 'FAILED', 'pi_liveReceipt1', lines, amount, vat_amount, masked_pan, 'rc_liveReceipt1', 'FISCAL_UNAVAILABLE' FROM receipts WHERE id = $1`,
      [test.receipt],
    );
    await both.owner.post('/dashboard/mode', { mode: 'live' });
    expect((await both.owner.get('/dashboard/receipts')).html).toContain('Live mode');
    expect(idsOn((await both.owner.get('/dashboard/receipts')).html)).toEqual(['rcpt_liveReceipt1']);
    expect(rowOf((await both.owner.get('/dashboard/receipts')).html, 'rcpt_liveReceipt1')).toContain('<small title="FISCAL_UNAVAILABLE">The fiscal module could not be reached</small>');
    expect(idsOn((await both.owner.get(`/dashboard/receipts?q=${test.receipt}`)).html)).toEqual([]);
    expect(idsOn((await both.owner.get(`/dashboard/receipts?q=${test.id}`)).html)).toEqual([]);
    expect((await both.owner.get(`/dashboard/payments/${test.id}`)).status).toBe(404);
    const liveCsv = await both.owner.get('/dashboard/receipts.csv');
    expect(liveCsv.headers['content-disposition']).toBe('attachment; filename="tolov-receipts-live.csv"');
    expect(liveCsv.html).toContain('rcpt_liveReceipt1');
    expect(liveCsv.html).not.toContain(test.receipt);
    expect((await both.owner.get('/dashboard/overview')).html).toContain('Fiscal receipts not registered in the last 30 days: 1.');
    expect(sectionOf((await both.owner.get('/dashboard/payments/pi_liveReceipt1')).html, 'rcpt_liveReceipt1')).toContain('FISCAL_UNAVAILABLE');

    await both.owner.post('/dashboard/mode', { mode: 'test' });
    expect(idsOn((await both.owner.get('/dashboard/receipts')).html)).toEqual([test.receipt]);
    expect(idsOn((await both.owner.get('/dashboard/receipts?q=rcpt_liveReceipt1')).html)).toEqual([]);
    expect((await both.owner.get('/dashboard/receipts.csv')).html).not.toContain('rcpt_liveReceipt1');
    expect((await both.owner.get('/dashboard/payments/pi_liveReceipt1')).status).toBe(404);
  });

  it('never show another product’s receipts, by list, search, export, payment page or overview', async () => {
    const other = await shop('other-product');
    const theirs = await paid(other, 250_000, refusedCart(250_000));
    await fiscalize();
    const list = (await main.owner.get('/dashboard/receipts')).html;
    expect(list).not.toContain(theirs.receipt);
    expect(idsOn((await main.owner.get(`/dashboard/receipts?q=${theirs.receipt}`)).html)).toEqual([]);
    expect(idsOn((await main.owner.get(`/dashboard/receipts?q=${theirs.id}`)).html)).toEqual([]);
    expect((await main.owner.get('/dashboard/receipts.csv')).html).not.toContain(theirs.receipt);
    expect((await main.owner.get(`/dashboard/payments/${theirs.id}`)).status).toBe(404);
    // Each overview counts its own: one failed receipt each.
    expect((await main.owner.get('/dashboard/overview')).html).toContain('in the last 30 days: 1.');
    expect((await other.owner.get('/dashboard/overview')).html).toContain('in the last 30 days: 1.');
    expect(idsOn((await other.owner.get('/dashboard/receipts')).html)).toEqual([theirs.receipt]);
  });
});
