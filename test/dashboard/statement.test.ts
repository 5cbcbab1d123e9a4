// The Statement in the dashboard: every movement of the balance (a payment, its settlement, a refund) under the balance
// it explains, its filters in the address, paging and the CSV export; each mode and each product sees its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { idem, startService, type TestService } from '../support/harness.js';
import { balance, charge } from '../support/payments.js';
import { DashboardClient, uniqueEmail } from './client.js';

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

/** A succeeded charge's id. */
async function paid(of: Shop, amount: number): Promise<string> {
  const reply = await charge(service, of.key, { amount, card: of.card });
  expect(reply.body.status, reply.text).toBe('SUCCEEDED');
  return reply.body.id;
}

async function refund(of: Shop, paymentIntent: string): Promise<string> {
  const reply = await service.call({ method: 'POST', url: '/v1/refunds', key: of.key, idempotencyKey: idem(), body: { paymentIntent } });
  expect(reply.body.status, reply.text).toBe('SUCCEEDED');
  return reply.body.id;
}

/** Every succeeded payment of every product settles now (the settlement delay reaches past them all). */
const settleAll = () => service.payments.settle(-100_000, 100);

/** The API's statement row of a source. */
async function apiRow(of: Shop, source: string): Promise<Record<string, string | number | null>> {
  const [row] = (await service.call({ method: 'GET', url: `/v1/balance_transactions?source=${source}`, key: of.key })).body.data;
  return row;
}

/** The rows of a list page: each cell's HTML by its column's name. */
const rowsOn = (html: string) =>
  [...(/<tbody>(.*?)<\/tbody>/s.exec(html)?.[1] ?? '').matchAll(/<tr>(.*?)<\/tr>/gs)].map(([, row]) =>
    Object.fromEntries([...row!.matchAll(/<td data-label="([^"]+)"[^>]*>(.*?)<\/td>/gs)].map(([, label, cell]) => [label!, cell!])),
  );
/** Each row as its type (the API's value) and its source. */
const movementsOn = (html: string) => rowsOn(html).map((row) => `${/title="(\w+)"/.exec(row.Type!)![1]} ${/<code>([^<]+)<\/code>/.exec(row.Source!)![1]}`);
/** Tiyin from an amount as the page writes it: 19,676.54 UZS, -123.46 UZS. */
const tiyinOf = (shown: string) => Number(shown.replace(/<[^>]+>/g, '').replace(/[^\d-]/g, ''));
/** The balance's tiles on the page, in tiyin. */
const tilesOn = (html: string) => {
  const [available, pending] = [...html.matchAll(/<p class="tile-value">([^<]+)<\/p>/g)].map((found) => tiyinOf(found[1]!));
  return { available, pending };
};
/** The net of the page's rows, by status. */
const netsOn = (html: string) => {
  const sums = { available: 0, pending: 0 };
  for (const row of rowsOn(html)) sums[/title="(\w+)"/.exec(row.Status!)![1] as 'available' | 'pending'] += tiyinOf(row.Net!);
  return sums;
};

let main: Shop;
/** Two payments settled, then one paid and the first refunded: 12,345.67 + 20,000.00 settled, 5,000.00 pending. */
let first: string;
let second: string;
let pending: string;
let refunded: string;
beforeAll(async () => {
  service = await startService();
  main = await shop('statement');
  first = await paid(main, 1_234_567);
  second = await paid(main, 2_000_000);
  await settleAll();
  pending = await paid(main, 500_000);
  refunded = await refund(main, first);
});
afterAll(async () => service.stop());

describe('the Statement', () => {
  it('shows each movement’s type, amounts, status, availability and source, from the navigation and the overview', async () => {
    const page = await main.owner.get('/dashboard/statement');
    expect(page.status).toBe(200);
    expect(page.html).toContain('<a href="/dashboard/statement" aria-current="page">Statement</a>');
    expect(page.html).toMatch(/<a href="\/dashboard\/refunds">Refunds<\/a><a href="\/dashboard\/statement"/);
    expect((await main.owner.get('/dashboard/overview')).html).toContain('<a href="/dashboard/statement">Every movement of the balance: the statement</a>');
    expect(movementsOn(page.html)).toEqual([`refund ${refunded}`, `charge ${pending}`, `charge ${second}`, `charge ${first}`]);
    const [back, waiting, , settled] = rowsOn(page.html);
    // 1% of 12,345.67 is 123.4567: 123.46 so'm, rounded half up.
    expect(settled).toMatchObject({ Type: '<span title="charge">Payment</span>', Amount: '12,345.67 UZS', Fee: '123.46 UZS', Net: '12,222.21 UZS' });
    expect(settled!.Status).toBe('<span class="status s-available" title="available">Available</span>');
    expect(settled!.Source).toBe(`<a href="/dashboard/payments/${first}"><code>${first}</code></a>`);
    // A refund gives back the whole amount, not the fee; it links to the payment it gave back.
    expect(back).toMatchObject({ Type: '<span title="refund">Refund</span>', Amount: '-12,345.67 UZS', Fee: '0.00 UZS', Net: '-12,345.67 UZS' });
    expect(back!.Source).toBe(`<a href="/dashboard/payments/${first}"><code>${refunded}</code></a>`);
    expect(waiting!.Status).toBe('<span class="status s-pending" title="pending">Pending</span>');
    // A pending row says when it becomes available: a day after the payment, by default.
    const api = await apiRow(main, pending);
    expect(waiting!['Available on']).toContain(`datetime="${api.availableOn}"`);
    expect(Date.parse(String(api.availableOn)) - Date.parse(String(api.created))).toBe(86_400_000);
    for (const [lang, words] of [['ru', ['Выписка', 'Возврат', 'Платёж', 'Доступно', 'Ожидает', 'Нетто', '-12 345,67 сум']], ['uz', ['Koʻchirma', 'Qaytarish', 'Toʻlov', 'Mavjud', 'Kutilmoqda', 'Sof summa', '-12 345,67 soʻm']]] as const) {
      main.owner.lang = lang;
      const translated = (await main.owner.get('/dashboard/statement')).html.replaceAll('\u00a0', ' ');
      for (const word of words) expect(translated, `${lang}: ${word}`).toContain(word);
    }
    main.owner.lang = 'en';
  });

  it('shows above the rows the balance whose parts their nets add up to, and says so', async () => {
    const html = (await main.owner.get('/dashboard/statement')).html;
    const api = await balance(service, main.key);
    // 12,222.21 + 19,800.00 − 12,345.67 available; 4,950.00 pending.
    expect(api).toMatchObject({ available: 1_967_654, pending: 495_000 });
    expect(tilesOn(html)).toEqual({ available: api.available, pending: api.pending });
    expect(netsOn(html)).toEqual({ available: api.available, pending: api.pending });
    expect(html).toContain('<p class="tile-value">19,676.54 UZS</p>');
    expect(html).toContain('<p class="tile-value">4,950.00 UZS</p>');
    expect(html).toContain('<p class="sums">The net of all rows marked “Available” adds up to the available balance, and the net of all rows marked “Pending” to the pending balance');
    // The balance stays above the rows whatever they are filtered to, and when a filter is refused.
    expect(tilesOn((await main.owner.get('/dashboard/statement?type=refund')).html)).toEqual({ available: api.available, pending: api.pending });
    expect(tilesOn((await main.owner.get('/dashboard/statement?type=fee')).html)).toEqual({ available: api.available, pending: api.pending });
  });

  it('filters by type, day and source, finds a row by its id, and says which filter it cannot apply', async () => {
    const get = async (query: string) => movementsOn((await main.owner.get(`/dashboard/statement?${query}`)).html);
    expect(await get('type=refund')).toEqual([`refund ${refunded}`]);
    expect(await get('type=charge')).toEqual([`charge ${pending}`, `charge ${second}`, `charge ${first}`]);
    expect(await get('type=payout')).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect(await get(`from=${today}&to=${today}&type=refund`)).toEqual([`refund ${refunded}`]);
    expect(await get('to=2020-01-01')).toEqual([]);
    expect(await get(`q=${first}`)).toEqual([`charge ${first}`]);
    expect(await get(`q=${refunded}`)).toEqual([`refund ${refunded}`]);
    expect(await get(`q=${(await apiRow(main, second)).id}`)).toEqual([`charge ${second}`]);
    expect(await get('q=txn_nothing')).toEqual([]);
    const shown = (await main.owner.get(`/dashboard/statement?type=charge&from=${today}`)).html;
    expect(shown).toContain('<option value="charge" selected>Payment</option>');
    expect(shown).toContain('<option value="payout_failure">Payout returned</option>');
    expect(shown).toContain(`<a href="/dashboard/statement.csv?type=charge&amp;from=${today}" download>`);
    for (const [query, field] of [['type=fee', 'Type'], ['from=2026-02-30', 'From'], ['to=tomorrow', 'To']]) {
      const bad = await main.owner.get(`/dashboard/statement?${query}`);
      expect(bad.status, query).toBe(200);
      expect(bad.html, query).toContain(`These filters cannot be applied: check “${field}”.`);
      expect((await main.owner.get(`/dashboard/statement.csv?${query}`)).status, query).toBe(400);
    }
  });

  it('pages 25 rows at a time, keeping the filters in the Older link', async () => {
    const many = await shop('many-rows');
    const made: string[] = [];
    for (let n = 0; n < 27; n++) made.push(await paid(many, 10_000 + n));
    const page = await many.owner.get('/dashboard/statement?type=charge');
    expect(movementsOn(page.html)).toEqual(made.slice(2).reverse().map((id) => `charge ${id}`));
    const older = /<a href="([^"]+)">Older<\/a>/.exec(page.html)![1]!.replaceAll('&amp;', '&');
    expect(older).toBe(`/dashboard/statement?type=charge&starting_after=${(await apiRow(many, made[2]!)).id}`);
    expect(movementsOn((await many.owner.get(older)).html)).toEqual([`charge ${made[1]}`, `charge ${made[0]}`]);
  });

  it('exports the filtered statement as CSV: exact amounts, negative ones as numbers, each row’s payment', async () => {
    const csv = await main.owner.get('/dashboard/statement.csv');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe('attachment; filename="tolov-statement-test.csv"');
    const lines = csv.html.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,created,type,amount_uzs,fee_uzs,net_uzs,status,available_on,source,payment_intent,payout');
    const [back, settled] = [await apiRow(main, refunded), await apiRow(main, first)];
    expect(lines[1]).toBe([back.id, back.created, 'refund', '-12345.67', '0.00', '-12345.67', 'available', back.availableOn, refunded, first, ''].join(','));
    expect(lines[4]).toBe([settled.id, settled.created, 'charge', '12345.67', '123.46', '12222.21', 'available', settled.availableOn, first, first, ''].join(','));
    expect(lines.slice(1).map((line) => line.split(',')[8])).toEqual([refunded, pending, second, first]);
    expect(lines[2]).toMatch(new RegExp(`,charge,5000\\.00,50\\.00,4950\\.00,pending,[^,]+,${pending},${pending},$`));
    const refunds = (await main.owner.get('/dashboard/statement.csv?type=refund')).html.trimEnd().split('\r\n');
    expect(refunds).toEqual([lines[0], lines[1]]);
  });

  it('makes every text cell of the export formula-safe, on the page too', async () => {
    // A source Tolov did not write, as a corrupted row could hold: a formula in it is made inert.
    const formula = '=HYPERLINK("http://evil.example";"x")';
    await service.db.query('UPDATE balance_transactions SET source = $2 WHERE source = $1', [pending, formula]);
    try {
      const csv = (await main.owner.get('/dashboard/statement.csv?type=charge')).html;
      expect(csv).toContain(`,"'=HYPERLINK(""http://evil.example"";""x"")","'=HYPERLINK(""http://evil.example"";""x"")",`);
      // Splitting on every separator, quotes ignored, gives every cell a spreadsheet could see: no formula, only numbers.
      for (const separator of [',', ';', '\t']) {
        const cells = csv.split(/\r\n|\n|\r/).flatMap((line) => line.split(separator));
        expect(cells.filter((cell) => /^[\s"]*[=+\-@]/.test(cell) && !/^-\d+\.\d\d$/.test(cell))).toEqual([]);
      }
      const page = (await main.owner.get('/dashboard/statement?type=charge')).html;
      expect(page).toContain('<code>=HYPERLINK(&quot;http://evil.example&quot;;&quot;x&quot;)</code>');
    } finally {
      await service.db.query('UPDATE balance_transactions SET source = $1 WHERE source = $2', [pending, formula]);
    }
  });
});

describe('modes and products', () => {
  /** The product of a signed-up owner. */
  const productOf = async (email: string) =>
    (await service.db.query<{ id: string }>(`SELECT p.id FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1`, [email]))[0]!.id;

  /** A live payment of 7,000.00 so'm, pending, as the live rail and the ledger would leave it: its entries and its row. */
  async function livePayment(productId: string): Promise<void> {
    await service.db.transaction(async (tx) => {
      await tx.query("INSERT INTO ledger_transactions (id, product_id, livemode, reason, reference_id) VALUES ('ltx_liveStatement1', $1, true, 'payment_succeeded', 'pi_liveStatement1')", [productId]);
      await tx.query(
        `INSERT INTO ledger_entries (transaction_id, product_id, livemode, account, amount)
         VALUES ('ltx_liveStatement1', $1, true, 'rail_clearing', -700000), ('ltx_liveStatement1', $1, true, 'merchant_pending', 693000), ('ltx_liveStatement1', $1, true, 'platform_fees', 7000)`,
        [productId],
      );
      await tx.query(
        `INSERT INTO ledger_balances (product_id, livemode, account, shard, amount)
         VALUES ($1, true, 'rail_clearing', 0, -700000), ($1, true, 'merchant_pending', 0, 693000), ($1, true, 'platform_fees', 0, 7000)`,
        [productId],
      );
      await tx.query(
        `INSERT INTO balance_transactions (id, product_id, livemode, type, amount, fee, net, status, available_on, source)
         VALUES ('txn_liveStatement1', $1, true, 'charge', 700000, 7000, 693000, 'pending', now() + interval '1 day', 'pi_liveStatement1')`,
        [productId],
      );
    });
  }

  it('show live rows and the live balance in live mode only, test ones in test mode only', async () => {
    const both = await shop('both-modes');
    const test = await paid(both, 300_000);
    const testRow = (await apiRow(both, test)).id;
    const productId = await productOf(both.email);
    expect((await service.admin('POST', `/admin/v1/products/${productId}/live`)).status).toBe(200);
    await livePayment(productId);

    await both.owner.post('/dashboard/mode', { mode: 'live' });
    const live = (await both.owner.get('/dashboard/statement')).html;
    expect(live).toContain('Live mode');
    expect(movementsOn(live)).toEqual(['charge pi_liveStatement1']);
    expect(tilesOn(live)).toEqual({ available: 0, pending: 693_000 });
    expect(netsOn(live)).toEqual({ available: 0, pending: 693_000 });
    expect(movementsOn((await both.owner.get(`/dashboard/statement?q=${testRow}`)).html)).toEqual([]);
    expect(movementsOn((await both.owner.get(`/dashboard/statement?q=${test}`)).html)).toEqual([]);
    const liveCsv = await both.owner.get('/dashboard/statement.csv');
    expect(liveCsv.headers['content-disposition']).toBe('attachment; filename="tolov-statement-live.csv"');
    expect(liveCsv.html).toContain('txn_liveStatement1,');
    expect(liveCsv.html).not.toContain(test);

    await both.owner.post('/dashboard/mode', { mode: 'test' });
    const testPage = (await both.owner.get('/dashboard/statement')).html;
    expect(movementsOn(testPage)).toEqual([`charge ${test}`]);
    expect(tilesOn(testPage)).toEqual({ available: 0, pending: 297_000 });
    expect(movementsOn((await both.owner.get('/dashboard/statement?q=txn_liveStatement1')).html)).toEqual([]);
    expect((await both.owner.get('/dashboard/statement.csv')).html).not.toContain('txn_liveStatement1');
  });

  it('never show another product’s rows, by list, search, filter or export', async () => {
    const other = await shop('other-product');
    const theirs = await paid(other, 400_000);
    const theirRefund = await refund(other, theirs);
    const theirRow = (await apiRow(other, theirs)).id;
    const list = (await main.owner.get('/dashboard/statement')).html;
    expect(list).not.toContain(theirs);
    expect(list).not.toContain(theirRefund);
    for (const query of [`q=${theirRow}`, `q=${theirs}`, `q=${theirRefund}`]) expect(movementsOn((await main.owner.get(`/dashboard/statement?${query}`)).html), query).toEqual([]);
    const csv = (await main.owner.get('/dashboard/statement.csv')).html;
    expect(csv).not.toContain(theirs);
    expect(csv).not.toContain(theirRow);
    expect(movementsOn((await other.owner.get('/dashboard/statement')).html)).toEqual([`refund ${theirRefund}`, `charge ${theirs}`]);
    expect(tilesOn((await main.owner.get('/dashboard/statement')).html)).toEqual({ available: 1_967_654, pending: 495_000 });
  });
});

describe('the balance and its rows, step by step', () => {
  it('show the same sums after a charge, its settlement and its refund, in each language', async () => {
    const steps = await shop('steps');
    const expectSums = async (expected: { available: number; pending: number }) => {
      const html = (await steps.owner.get('/dashboard/statement')).html;
      const api = await balance(service, steps.key);
      expect({ available: api.available, pending: api.pending }).toEqual(expected);
      expect(tilesOn(html)).toEqual(expected);
      expect(netsOn(html)).toEqual(expected);
    };
    await expectSums({ available: 0, pending: 0 });
    expect((await steps.owner.get('/dashboard/statement')).html).toContain('<p class="empty">Nothing matches in this mode.</p>');
    const payment = await paid(steps, 990_000);
    await expectSums({ available: 0, pending: 980_100 });
    await settleAll();
    await expectSums({ available: 980_100, pending: 0 });
    await refund(steps, payment);
    await expectSums({ available: -9_900, pending: 0 });
    // Below zero, the page says why, as the overview does.
    expect((await steps.owner.get('/dashboard/statement')).html).toContain('<p class="tile-value">-99.00 UZS</p><p class="hint">Negative: refunds were paid out of money not yet available');
    for (const [lang, available] of [['ru', '-99,00 сум'], ['uz', '-99,00 soʻm']] as const) {
      steps.owner.lang = lang;
      expect((await steps.owner.get('/dashboard/statement')).html.replaceAll('\u00a0', ' '), lang).toContain(`<p class="tile-value">${available}</p>`);
    }
  });
});
