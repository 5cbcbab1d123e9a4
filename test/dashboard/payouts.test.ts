// Payouts in the dashboard: the list with its filters and paging; a payout's page with its fields, what a failure means,
// its timeline and its transactions (which add up to an automatic payout, as the statement narrowed to it shows);
// "Pay out now" for owners and developers, refused in the page's words; cancel while PENDING; the overview's next
// payout in each of its states; in three languages, and in Chromium on a laptop and a 390 px phone, by keyboard.
import type { Browser, Page as BrowserPage } from 'playwright-core';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/web/html.js';
import { MESSAGES, type Lang } from '../../src/web/dashboard/i18n.js';
import { SESSION_COOKIE } from '../../src/web/dashboard/context.js';
import { when } from '../../src/web/dashboard/layout.js';
import { browserAvailable, launchBrowser, openWatched, screenshot } from '../support/browser.js';
import { engine, idem, startService, type TestService } from '../support/harness.js';
import { balance, chargeCard } from '../support/payments.js';
import { makeAvailable, setPayoutAccount } from '../support/payouts.js';
import { DashboardClient, uniqueEmail, type Page } from './client.js';

let service: TestService;
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
});
afterAll(async () => service.stop());

const { en, ru, uz } = MESSAGES;
const LOCALES: Record<Lang, string> = { uz: 'uz-UZ', ru: 'ru-RU', en: 'en-US' };
/** A message as the page writes it (escaped), with its parameters. */
const said = (text: string, params: Record<string, string> = {}) => escapeHtml(text.replace(/\{(\w+)\}/g, (_, name: string) => params[name]!));
/** Tiyin as the page writes an amount in `lang`: 15,000.00 UZS · 15 000,00 сум. */
const amountIn = (tiyin: number, lang: Lang = 'en') =>
  MESSAGES[lang].moneyAmount.replace('{amount}', new Intl.NumberFormat(LOCALES[lang], { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(tiyin / 100));
/** A Tashkent day as a payout's page and the overview name it. */
const longDay = (day: string, lang: Lang = 'en') =>
  new Intl.DateTimeFormat(LOCALES[lang], { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date(`${day}T00:00:00Z`));
/** The test account ending in `last4` as pages name it, kept on one line by no-break spaces. */
const accountOf = (last4: string) => `00440\u00a0••••\u00a0${last4}`;
const tashkentToday = () => new Date(Date.now() + 5 * 3_600_000).toISOString().slice(0, 10);

interface Shop {
  owner: DashboardClient;
  email: string;
  key: string;
  productId: string;
}

/** A new account, signed up in the dashboard, with a test key and its product's id. */
async function shop(name: string): Promise<Shop> {
  const owner = new DashboardClient(service);
  const email = uniqueEmail(name);
  await owner.signUp(email);
  const key = /sk_test_[0-9A-Za-z]{32}/.exec((await owner.post('/dashboard/api-keys', {})).html)![0];
  const [product] = await service.db.query<{ id: string }>(
    'SELECT p.id FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1',
    [email],
  );
  return { owner, email, key, productId: product!.id };
}

/** A member of the shop's account with `role`, signed in. */
async function member(of: Shop, role: 'developer' | 'viewer'): Promise<DashboardClient> {
  const email = uniqueEmail(role);
  expect((await of.owner.post('/dashboard/team/invite', { email, role })).status).toBe(201);
  const path = await of.owner.invitationFor(email);
  const client = new DashboardClient(service);
  expect((await client.post(path, { password: 'correct horse battery' })).location).toBe('/dashboard');
  return client;
}

const createPayout = async (key: string, body: Record<string, unknown> = {}) => {
  const reply = await service.call({ method: 'POST', url: '/v1/payouts', key, idempotencyKey: idem(), body });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { id: string; amount: number; status: string };
};
const apiPayout = async (key: string, id: string) => (await service.call({ method: 'GET', url: `/v1/payouts/${id}`, key })).body;
const runPayouts = async (key: string) => {
  const reply = await service.call({ method: 'POST', url: '/v1/test_helpers/payouts/run', key });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { id: string; amount: number; status: string };
};
const apiRows = async (key: string, query: string) =>
  (await service.call({ method: 'GET', url: `/v1/balance_transactions?limit=100&${query}`, key })).body.data as Array<{ id: string; net: number; type: string; source: string }>;

/** The rows of the page's first table (or the table captioned `caption`): each cell's HTML by its column's name. */
function rowsOn(html: string, caption?: string): Array<Record<string, string>> {
  const tables = [...html.matchAll(/<table><caption>([^<]*)<\/caption>(.*?)<\/table>/gs)];
  const found = caption === undefined ? tables[0] : tables.find((table) => table[1] === escapeHtml(caption));
  const body = /<tbody>(.*?)<\/tbody>/s.exec(found?.[2] ?? '')?.[1] ?? '';
  return [...body.matchAll(/<tr>(.*?)<\/tr>/gs)].map(([, row]) =>
    Object.fromEntries([...row!.matchAll(/<td data-label="([^"]+)"[^>]*>(.*?)<\/td>/gs)].map(([, label, cell]) => [label!, cell!])),
  );
}
const textOf = (html: string) => html.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim();
const idsOn = (html: string) => rowsOn(html).map((row) => /<code>(po_\w+)<\/code>/.exec(row.ID!)![1]);
/** Tiyin from an amount as the English page writes it: 19,676.54 UZS, -123.46 UZS. */
const tiyinOf = (shown: string) => Number(textOf(shown).replace(/[^\d-]/g, ''));
/** An object page's fields: each value's HTML by its name. */
const fieldsOn = (html: string) => Object.fromEntries([...html.matchAll(/<dt>([^<]+)<\/dt><dd>(.*?)<\/dd>/gs)].map(([, name, value]) => [name!, value!]));
/** The timeline's entries as their text, in their order (an event's deliveries are a list within its entry). */
function timelineOf(html: string): string[] {
  const list = /<ol class="timeline">([\s\S]*?)<\/ol>/.exec(html)![1]!;
  const items: string[] = [];
  let depth = 0;
  let start = 0;
  for (const tag of list.matchAll(/<(\/?)li\b[^>]*>/g)) {
    if (tag[1] === '' && depth++ === 0) start = tag.index + tag[0].length;
    if (tag[1] === '/' && --depth === 0) items.push(textOf(list.slice(start, tag.index)));
  }
  return items;
}
/** The idempotency key of the page's pay-out form. */
const formKeyOn = (html: string) => /<form class="card pay-out"[\s\S]*?name="idempotencyKey" value="([0-9a-f-]{36})"/.exec(html)![1]!;
const payOut = (client: DashboardClient, amount: string, idempotencyKey: string = randomUUID()) => client.post('/dashboard/payouts', { amount, idempotencyKey });
const payoutIdOf = (answer: Page) => /^\/dashboard\/payouts\/(po_\w+)\?done=created$/.exec(answer.location ?? '')?.[1];
/** The hint and value of the "Next payout" tile in `lang`. */
function nextPayoutOn(html: string, lang: Lang = 'en'): { value: string; hint: string } {
  const tile = new RegExp(`<div class="tile"><p class="tile-label">${escapeHtml(MESSAGES[lang].nextPayout)}</p><p class="tile-value">([^<]*)</p>\\s*<p class="hint">([\\s\\S]*?)</p></div>`).exec(html);
  expect(tile, 'the next payout tile').not.toBeNull();
  return { value: tile![1]!, hint: tile![2]! };
}

/** A shop with payouts in every state: PAID, CANCELED, FAILED (the account closed) and PENDING, newest last. */
async function shopWithPayouts(): Promise<{ of: Shop; paid: string; canceled: string; failed: string; pending: string }> {
  const of = await shop('payouts-list');
  await setPayoutAccount(service, of.productId);
  await makeAvailable(service, of.key, 5_000_000);
  const paid = (await createPayout(of.key, { amount: 1_000_000 })).id;
  await service.payouts.sendDue(100);
  const canceled = (await createPayout(of.key, { amount: 500_000 })).id;
  expect((await service.call({ method: 'POST', url: `/v1/payouts/${canceled}/cancel`, key: of.key })).status).toBe(200);
  await setPayoutAccount(service, of.productId, { last4: '0002' });
  const failed = (await createPayout(of.key, { amount: 700_000 })).id;
  await service.payouts.sendDue(100);
  await setPayoutAccount(service, of.productId);
  const pending = (await createPayout(of.key, { amount: 200_000 })).id;
  return { of, paid, canceled, failed, pending };
}

describe('the Payouts list', () => {
  let listed: Awaited<ReturnType<typeof shopWithPayouts>>;
  beforeAll(async () => {
    listed = await shopWithPayouts();
  });

  it('follows Statement in the navigation and lists payouts newest first: amount, status, kind, arrival date, account, each linking to its page', async () => {
    const { of, paid, canceled, failed, pending } = listed;
    const page = await of.owner.get('/dashboard/payouts');
    expect(page.status).toBe(200);
    expect(page.html).toContain('<a href="/dashboard/statement">Statement</a><a href="/dashboard/payouts" aria-current="page">Payouts</a>');
    expect(idsOn(page.html)).toEqual([pending, failed, canceled, paid]);
    const [waiting, refused, , done] = rowsOn(page.html);
    expect(done).toMatchObject({ Amount: '10,000.00 UZS', Kind: 'Manual', 'To the account': `<span class="one-line">${accountOf('0001')}</span>` });
    expect(done!.ID).toBe(`<a href="/dashboard/payouts/${paid}"><code>${paid}</code></a>`);
    expect(done!.Status).toBe('<span class="status s-paid" title="PAID">Paid</span>');
    expect(done!['Arrival date']).toContain(`>${tashkentToday()}</time>`);
    expect(refused!.Status).toBe('<span class="status s-failed" title="FAILED">Failed</span> <small title="ACCOUNT_CLOSED">The bank refused the account</small>');
    expect(refused!['To the account']).toContain(accountOf('0002'));
    expect(waiting!.Status).toBe('<span class="status s-pending" title="PENDING">Pending</span>');
    for (const status of ['PENDING', 'IN_TRANSIT', 'PAID', 'FAILED', 'CANCELED']) expect(page.html).toContain(`<option value="${status}">${en[`payout_${status.toLowerCase() as 'paid'}`]}</option>`);
  });

  it('filters by status, day and id, says which filter it cannot apply, and exports what it shows as CSV', async () => {
    const { of, paid, canceled, failed } = listed;
    const ids = async (query: string) => idsOn((await of.owner.get(`/dashboard/payouts?${query}`)).html);
    expect(await ids('status=FAILED')).toEqual([failed]);
    expect(await ids('status=CANCELED')).toEqual([canceled]);
    expect(await ids('status=IN_TRANSIT')).toEqual([]);
    expect(await ids(`q=${paid}`)).toEqual([paid]);
    expect(await ids('q=po_nothing')).toEqual([]);
    expect(await ids('to=2020-01-01')).toHaveLength(0);
    const today = new Date().toISOString().slice(0, 10);
    expect(await ids(`from=${today}&status=PAID`)).toEqual([paid]);
    const bad = await of.owner.get('/dashboard/payouts?status=SENT');
    expect(bad.html).toContain(said(en.badFilter, { field: en.status }));
    const csv = await of.owner.get('/dashboard/payouts.csv?status=FAILED');
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    const [header, row, end] = csv.html.split('\r\n');
    expect(header).toBe('id,created,amount_uzs,status,automatic,arrival_date,bank_mfo,account_last4,failure_code');
    expect(row).toMatch(new RegExp(`^${failed},[^,]+,7000\\.00,FAILED,false,${tashkentToday()},00440,0002,ACCOUNT_CLOSED$`));
    expect(end).toBe('');
  });

  it('pages through more payouts than a page holds', async () => {
    const of = await shop('payouts-paging');
    await setPayoutAccount(service, of.productId);
    await makeAvailable(service, of.key, 1_000_000);
    const made: string[] = [];
    for (let n = 0; n < 26; n++) made.push((await createPayout(of.key, { amount: 100 + n })).id);
    const first = await of.owner.get('/dashboard/payouts');
    expect(idsOn(first.html)).toEqual(made.slice(1).reverse());
    const older = /<a href="([^"]+)">Older<\/a>/.exec(first.html)![1]!.replaceAll('&amp;', '&');
    expect(older).toBe(`/dashboard/payouts?starting_after=${made[1]}`);
    expect(idsOn((await of.owner.get(older)).html)).toEqual([made[0]]);
  });
});

describe('a payout’s page', () => {
  it('shows an automatic payout: its fields, its timeline from made to paid with its event, and its transactions adding up to it', async () => {
    const of = await shop('payout-automatic');
    await setPayoutAccount(service, of.productId);
    await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: of.key, idempotencyKey: idem(), body: { url: 'http://127.0.0.1:9/hooks' } });
    await makeAvailable(service, of.key, 2_000_000);
    await makeAvailable(service, of.key, 3_000_000);
    const refunded = await chargeCard(service, of.key, '8600000000000007', 500_000);
    await service.payments.settle(-10 * 365 * 86_400, 1_000);
    expect((await service.call({ method: 'POST', url: '/v1/refunds', key: of.key, idempotencyKey: idem(), body: { paymentIntent: refunded.id } })).status).toBe(201);
    const manual = await createPayout(of.key, { amount: 1_000_000 });
    const automatic = await runPayouts(of.key);
    await service.webhooks.deliverDue(100);
    // 1% fees: 1,980,000 + 2,970,000 + 495,000 − 500,000 (the refund) − 1,000,000 (the manual payout).
    expect(automatic).toMatchObject({ amount: 3_945_000, status: 'PAID' });

    const page = await of.owner.get(`/dashboard/payouts/${automatic.id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain(`<h1>Payout ${automatic.id}</h1>`);
    expect(page.html).toContain('<a href="/dashboard/payouts" aria-current="page">Payouts</a>');
    const fields = fieldsOn(page.html);
    expect(fields).toMatchObject({ Amount: '39,450.00 UZS', Kind: 'Automatic', 'To the account': accountOf('0001') });
    expect(fields.Status).toBe('<span class="status s-paid" title="PAID">Paid</span>');
    expect(fields['Arrival date']).toBe(`<time datetime="${tashkentToday()}">${longDay(tashkentToday())}</time>`);
    expect(page.html).not.toContain('Cancel payout');

    const timeline = timelineOf(page.html);
    expect(timeline[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC Made by the daily schedule: the amount left the available balance$/);
    expect(timeline[1]).toMatch(/ UTC Sent to the bank$/);
    expect(timeline[2]).toMatch(/ UTC Paid: the bank credited the account$/);
    expect(timeline[3]).toMatch(/ UTC payout\.paid evt_\w+ Pending · attempts: 1 · connection refused$/);
    expect(timeline).toHaveLength(4);

    // Its transactions: the charges, the refund and the manual payout it paid out, as the API lists them, adding up to it.
    const rows = rowsOn(page.html, en.payoutTransactionsCaption);
    const api = await apiRows(of.key, `payout=${automatic.id}`);
    expect(rows.map((row) => /title="(\w+)"/.exec(row.Type!)![1]).sort()).toEqual(['charge', 'charge', 'charge', 'payout', 'refund']);
    expect(rows.map((row) => tiyinOf(row.Net!))).toEqual(api.map((row) => row.net));
    expect(rows.reduce((sum, row) => sum + tiyinOf(row.Net!), 0)).toBe(automatic.amount);
    expect(page.html).toContain(said(en.payoutTransactionsTotal, { total: '39,450.00 UZS' }));
    expect(rows.find((row) => row.Type!.includes('title="payout"'))!.Source).toBe(`<a href="/dashboard/payouts/${manual.id}"><code>${manual.id}</code></a>`);
    expect(page.html).toContain(`<a href="/dashboard/statement?payout=${automatic.id}">Open in the statement</a>`);
    expect(page.html).toContain(`<a href="/dashboard/statement.csv?payout=${automatic.id}" download>Export as CSV</a>`);

    // The statement narrowed to the payout says so, keeps it in its filters, and exports the same rows.
    const statement = await of.owner.get(`/dashboard/statement?payout=${automatic.id}`);
    expect(statement.html).toContain(`<p class="scope">Transactions paid out by <a href="/dashboard/payouts/${automatic.id}"><code>${automatic.id}</code></a> · <a href="/dashboard/statement">Show all</a></p>`);
    expect(statement.html).toContain(`<input type="hidden" name="payout" value="${automatic.id}">`);
    expect(rowsOn(statement.html).map((row) => tiyinOf(row.Net!))).toEqual(api.map((row) => row.net));
    expect(rowsOn((await of.owner.get(`/dashboard/statement?payout=${automatic.id}&type=refund`)).html)).toHaveLength(1);
    const csv = (await of.owner.get(`/dashboard/statement.csv?payout=${automatic.id}`)).html.split('\r\n').slice(1, -1);
    expect(csv).toHaveLength(api.length);
    expect(csv.reduce((sum, line) => sum + Math.round(Number(line.split(',')[5]) * 100), 0)).toBe(automatic.amount);
    expect(csv.every((line) => line.endsWith(`,${automatic.id}`))).toBe(true);
    // The payout's own row in the whole statement links to it.
    const own = rowsOn((await of.owner.get(`/dashboard/statement?q=${automatic.id}`)).html);
    expect(own.map((row) => row.Source)).toEqual([`<a href="/dashboard/payouts/${automatic.id}"><code>${automatic.id}</code></a>`]);
  });

  it('shows a manual payout’s own rows in the statement, which the next automatic payout counts', async () => {
    const of = await shop('payout-manual');
    await setPayoutAccount(service, of.productId);
    await makeAvailable(service, of.key, 2_000_000);
    const manual = await createPayout(of.key, { amount: 1_234_567 });
    await service.payouts.sendDue(100);
    const page = await of.owner.get(`/dashboard/payouts/${manual.id}`);
    expect(fieldsOn(page.html)).toMatchObject({ Kind: 'Manual', Amount: '12,345.67 UZS' });
    expect(timelineOf(page.html)[0]).toMatch(/ UTC Asked for: the amount left the available balance$/);
    expect(page.html).toContain(said(en.payoutManualRows));
    const rows = rowsOn(page.html, en.payoutOwnRowsCaption);
    expect(rows.map((row) => [/title="(\w+)"/.exec(row.Type!)![1], tiyinOf(row.Net!)])).toEqual([['payout', -1_234_567]]);
    expect(page.html).not.toContain('Net total');
    expect(page.html).toContain(`<a href="/dashboard/statement?q=${manual.id}">Open in the statement</a>`);
  });

  it('says of a failed payout why, that its amount is back, and what to do; the next payout takes the amount', async () => {
    const of = await shop('payout-failed');
    await setPayoutAccount(service, of.productId, { last4: '0002' });
    await makeAvailable(service, of.key, 2_000_000);
    const failed = await runPayouts(of.key);
    expect(failed).toMatchObject({ status: 'FAILED', amount: 1_980_000 });
    expect((await balance(service, of.key)).available).toBe(1_980_000);

    const page = await of.owner.get(`/dashboard/payouts/${failed.id}`);
    const note = /<div class="notice warning failure-note" role="note">([\s\S]*?)<\/div>/.exec(page.html)![1]!;
    expect(note).toContain(`<strong>${said(en.payoutFailure_account_closed)}</strong>`);
    expect(note).toContain(said(en.payoutFailureHelp_account_closed));
    expect(note).toContain('<a href="/dashboard/payout-account">See the payout account</a>');
    const fields = fieldsOn(page.html);
    expect(fields.Status).toBe('<span class="status s-failed" title="FAILED">Failed</span> <small title="ACCOUNT_CLOSED">The bank refused the account</small>');
    expect(fields['Arrival date']).toBe('—');
    expect(timelineOf(page.html).slice(1)).toEqual([
      expect.stringMatching(/ UTC Sent to the bank$/),
      expect.stringMatching(/ UTC Failed: the bank refused it, and the amount is back in the available balance$/),
      expect.stringMatching(/ UTC payout\.failed evt_\w+ No webhook endpoint of this mode wanted it\.$/),
    ]);
    // The rows it paid out stay its own; their net is the amount now back in the balance.
    expect(rowsOn(page.html, en.payoutTransactionsCaption).reduce((sum, row) => sum + tiyinOf(row.Net!), 0)).toBe(1_980_000);
    // The next payout takes the amount back, once the account is corrected.
    expect(nextPayoutOn((await of.owner.get('/dashboard/overview')).html).value).toBe('19,800.00 UZS');
    await setPayoutAccount(service, of.productId);
    const next = await runPayouts(of.key);
    expect(next).toMatchObject({ status: 'PAID', amount: 1_980_000 });
  });

  it('is found only in its own product and mode', async () => {
    const { of, paid } = await shopWithPayouts();
    const other = await shop('payout-other');
    expect((await other.owner.get(`/dashboard/payouts/${paid}`)).status).toBe(404);
    expect((await of.owner.get('/dashboard/payouts/po_nothing')).status).toBe(404);
    expect((await other.owner.post(`/dashboard/payouts/${paid}/cancel`, { idempotencyKey: randomUUID() })).location).toBe(`/dashboard/payouts/${paid}?error=NOT_FOUND`);
  });
});

describe('Pay out now', () => {
  it('pays out the amount typed as the page’s language writes it, once per form, and opens the new payout', async () => {
    const of = await shop('pay-out');
    await setPayoutAccount(service, of.productId);
    await makeAvailable(service, of.key, 5_000_000);
    const page = await of.owner.get('/dashboard/payouts');
    expect(page.html).toContain(`<form class="card pay-out" method="post" action="/dashboard/payouts" data-confirm="Pay out to the account ${accountOf('0001')} now?"`);
    expect(page.html).toContain('<label for="pay-out-amount">Amount, UZS</label>');
    expect(page.html).toContain(said(en.payOutAmountHint, { available: '49,500.00 UZS' }));
    const key = formKeyOn(page.html);

    const made = await payOut(of.owner, '1,500.50', key);
    expect(made.status).toBe(303);
    const id = payoutIdOf(made)!;
    expect(await apiPayout(of.key, id)).toMatchObject({ amount: 150_050, automatic: false, status: 'PENDING' });
    // The same form posted again (a double click, a retry) pays out nothing more.
    expect((await payOut(of.owner, '1,500.50', key)).location).toBe(made.location);
    expect((await service.call({ method: 'GET', url: '/v1/payouts', key: of.key })).body.data).toHaveLength(1);
    const shown = await of.owner.get(made.location!);
    expect(shown.html).toContain(`<p class="notice ok" role="status">${said(en.payOutDone)}</p>`);
    expect(fieldsOn(shown.html)).toMatchObject({ Amount: '1,500.50 UZS', Kind: 'Manual' });
    expect(timelineOf(shown.html).at(-1)).toBe(en.payoutStepNotSent);
    expect((await of.owner.get('/dashboard/team/audit')).html).toContain(`<code>payout.created</code>`);

    // As Russian and Uzbek write amounts; empty, the whole available balance.
    for (const [lang, typed, tiyin] of [['ru', '2 000,25', 200_025], ['uz', '1 000', 100_000], ['en', '12345', 1_234_500]] as const) {
      of.owner.lang = lang;
      expect(await apiPayout(of.key, payoutIdOf(await payOut(of.owner, typed))!), typed).toMatchObject({ amount: tiyin });
    }
    of.owner.lang = 'en';
    const available = (await balance(service, of.key)).available as number;
    expect(await apiPayout(of.key, payoutIdOf(await payOut(of.owner, ''))!)).toMatchObject({ amount: available });
    expect((await balance(service, of.key)).available).toBe(0);
  });

  it('refuses an amount it cannot read, at the field, keeping what was typed', async () => {
    const of = await shop('pay-out-typo');
    await setPayoutAccount(service, of.productId);
    await makeAvailable(service, of.key, 1_000_000);
    for (const [typed, message] of [['abc', en.payOutAmountInvalid], ['1.500', en.payOutAmountInvalid], ['12,34,567', en.payOutAmountInvalid], ['0', en.payOutAmountZero], ['0,00', en.payOutAmountZero], ['99999999999', said(en.payOutAmountTooLarge, { max: '10,000,000,000.00 UZS' })]] as const) {
      const refused = await payOut(of.owner, typed);
      expect(refused.status, typed).toBe(400);
      expect(refused.html, typed).toContain(`<p class="field-error" id="pay-out-amount-error">${said(message)}</p>`);
      expect(refused.html, typed).toMatch(new RegExp(`name="amount"[^>]*value="${escapeHtml(typed).replace('.', '\\.')}"[^>]*aria-invalid="true" autofocus>`));
    }
    expect((await service.call({ method: 'GET', url: '/v1/payouts', key: of.key })).body.data).toEqual([]);
    // Without the form's key nothing is paid out.
    expect((await of.owner.post('/dashboard/payouts', { amount: '10' })).status).toBe(400);
  });

  it('refuses in the page’s words: more than is available, nothing available, payouts held (until when), no account (with the way to set it)', async () => {
    const of = await shop('pay-out-refused');
    const required = await payOut(of.owner, '');
    expect(required.status).toBe(409);
    expect(required.html).toContain(`<p class="notice error" role="alert">${said(en.payOutAccountRequired)} <a href="/dashboard/payout-account">Set the payout account</a></p>`);

    await setPayoutAccount(service, of.productId);
    await makeAvailable(service, of.key, 1_000_000);
    const tooMuch = await payOut(of.owner, '9 900,01');
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.html).toContain(`<p class="field-error" id="pay-out-amount-error">${said(en.payOutInsufficient, { asked: '9,900.01 UZS', available: '9,900.00 UZS' })}</p>`);
    expect(tooMuch.html).toMatch(/name="amount"[^>]*value="9 900,01"[^>]*aria-invalid="true" autofocus>/);
    await createPayout(of.key);
    const nothing = await payOut(of.owner, '');
    expect(nothing.status).toBe(409);
    expect(nothing.html).toContain(said(en.payOutNothingAvailable, { available: '0.00 UZS' }));
    expect(nothing.html).toContain(`<p class="hint" id="pay-out-amount-hint">${said(en.payOutNothingHint, { available: '0.00 UZS' })}</p>`);

    await makeAvailable(service, of.key, 1_000_000);
    await setPayoutAccount(service, of.productId, { held: true });
    const until = (await service.call({ method: 'GET', url: '/v1/payout_account', key: of.key })).body.payoutsHeldUntil as string;
    of.owner.lang = 'ru';
    const held = await payOut(of.owner, '100');
    expect(held.status).toBe(409);
    expect(held.html).toContain('<html lang="ru">');
    expect(held.html).toContain(said(ru.payOutHeld, { until: when(until) }));
    expect((await service.call({ method: 'GET', url: '/v1/payouts', key: of.key })).body.data).toHaveLength(1);
  });

  it('is for owners and developers: a viewer sees no form, and is refused', async () => {
    const of = await shop('pay-out-roles');
    await setPayoutAccount(service, of.productId);
    await makeAvailable(service, of.key, 1_000_000);
    const developer = await member(of, 'developer');
    expect((await developer.get('/dashboard/payouts')).html).toContain('<form class="card pay-out"');
    expect(payoutIdOf(await payOut(developer, '100'))).toMatch(/^po_/);
    const viewer = await member(of, 'viewer');
    const page = await viewer.get('/dashboard/payouts');
    expect(page.html).not.toContain('<form class="card pay-out"');
    expect(page.html).toContain(said(en.payOutRoles));
    expect((await payOut(viewer, '100')).status).toBe(403);
    expect((await service.call({ method: 'GET', url: '/v1/payouts', key: of.key })).body.data).toHaveLength(1);
  });
});

describe('cancel', () => {
  it('cancels a PENDING payout from its page, for owners and developers; its amount is back; a second cancel is refused in words', async () => {
    const of = await shop('payout-cancel');
    await setPayoutAccount(service, of.productId);
    await makeAvailable(service, of.key, 1_000_000);
    const id = payoutIdOf(await payOut(of.owner, '5 000'))!;
    const path = `/dashboard/payouts/${id}`;
    const page = await of.owner.get(path);
    expect(page.html).toContain(`<form method="post" action="${path}/cancel" data-confirm="${said(en.cancelPayoutConfirm)}">`);
    const viewer = await member(of, 'viewer');
    expect((await viewer.get(path)).html).not.toContain('Cancel payout');
    expect((await viewer.post(`${path}/cancel`, { idempotencyKey: randomUUID() })).status).toBe(403);
    expect((await of.owner.post(`${path}/cancel`, {})).status).toBe(400);

    const canceled = await of.owner.post(`${path}/cancel`, { idempotencyKey: randomUUID() });
    expect(canceled.location).toBe(`${path}?done=canceled`);
    expect((await apiPayout(of.key, id)).status).toBe('CANCELED');
    expect((await balance(service, of.key)).available).toBe(990_000);
    const after = await of.owner.get(canceled.location!);
    expect(after.html).toContain(said(en.payoutCanceledDone));
    expect(fieldsOn(after.html).Status).toBe('<span class="status s-canceled" title="CANCELED">Canceled</span>');
    expect(timelineOf(after.html).at(-1)).toMatch(/ UTC Canceled: the amount is back in the available balance$/);
    expect(after.html).not.toContain('Cancel payout');

    const again = await of.owner.post(`${path}/cancel`, { idempotencyKey: randomUUID() });
    expect(again.location).toBe(`${path}?error=PAYOUT_NOT_CANCELABLE`);
    expect((await of.owner.get(again.location!)).html).toContain(`<p class="notice error" role="alert">${said(en.refusedPayoutNotCancelable)}</p>`);
  });
});

describe('the next payout on the overview', () => {
  it('says when and how much, or that it needs an account, is held, or is below the minimum', async () => {
    const of = await shop('next-payout');
    const tile = async (path = '/dashboard/overview') => nextPayoutOn((await of.owner.get(path)).html);
    expect(await tile()).toEqual({ value: '0.00 UZS', hint: `${said(en.nextPayoutNoAccount)} <a href="/dashboard/payout-account">Set the payout account</a>` });
    await setPayoutAccount(service, of.productId);
    await makeAvailable(service, of.key, 500_000);
    expect(await tile()).toEqual({ value: '4,950.00 UZS', hint: said(en.nextPayoutBelowMinimum, { minimum: '10,000.00 UZS' }) });
    await makeAvailable(service, of.key, 1_000_000);
    // No payout of the product ran today: today's is still to come, whatever the time.
    expect(await tile()).toEqual({ value: '14,850.00 UZS', hint: said(en.nextPayoutOn, { date: longDay(tashkentToday()), time: '10:00', account: accountOf('0001') }) });
    // The payouts page shows the same.
    expect(await tile('/dashboard/payouts')).toEqual(await tile());
    await setPayoutAccount(service, of.productId, { held: true });
    const until = (await service.call({ method: 'GET', url: '/v1/payout_account', key: of.key })).body.payoutsHeldUntil as string;
    expect(await tile()).toEqual({ value: '14,850.00 UZS', hint: `<strong class="held">${said(en.nextPayoutHeld, { until: when(until) })}</strong>` });
    of.owner.lang = 'uz';
    expect(nextPayoutOn((await of.owner.get('/dashboard/overview')).html, 'uz')).toEqual({
      value: amountIn(1_485_000, 'uz'),
      hint: `<strong class="held">${said(uz.nextPayoutHeld, { until: when(until) })}</strong>`,
    });
  });

  it('is how the payout account page says payouts are made, in each language, with the way to them', async () => {
    const of = await shop('payout-account-words');
    for (const lang of ['en', 'ru', 'uz'] as const) {
      of.owner.lang = lang;
      const page = (await of.owner.get('/dashboard/payout-account')).html;
      expect(page, lang).toContain(`<p>${said(MESSAGES[lang].payoutAccountIntro)} <a href="/dashboard/payouts">${said(MESSAGES[lang].seePayouts)}</a></p>`);
    }
    expect(en.payoutAccountIntro).not.toMatch(/not make payouts|yet/);
  });

  it('counts nothing to pay out when refunds leave less than nothing unpaid', async () => {
    const of = await shop('next-payout-negative');
    await setPayoutAccount(service, of.productId);
    const paid = await chargeCard(service, of.key, '8600000000000007', 300_000);
    expect((await service.call({ method: 'POST', url: '/v1/refunds', key: of.key, idempotencyKey: idem(), body: { paymentIntent: paid.id } })).status).toBe(201);
    expect((await balance(service, of.key)).available).toBe(-300_000);
    const page = (await of.owner.get('/dashboard/payouts')).html;
    expect(nextPayoutOn(page)).toEqual({ value: '0.00 UZS', hint: said(en.nextPayoutBelowMinimum, { minimum: '10,000.00 UZS' }) });
    expect(page).toContain(said(en.payOutNothingHint, { available: '-3,000.00 UZS' }));
  });
});

describe('in Uzbek and Russian', () => {
  let listed: Awaited<ReturnType<typeof shopWithPayouts>>;
  beforeAll(async () => {
    listed = await shopWithPayouts();
  });

  it.each(['uz', 'ru'] as const)('in %s the list, a failed payout’s page and a refusal say it in the language', async (lang) => {
    const { of, failed } = listed;
    const t = MESSAGES[lang];
    of.owner.lang = lang;
    const list = (await of.owner.get('/dashboard/payouts')).html;
    expect(list).toContain(`<html lang="${lang}">`);
    for (const text of [t.navPayouts, t.payoutsCaption, t.payout_paid, t.payout_failed, t.payout_canceled, t.payout_pending, t.payoutManual, t.payOutNow, t.payOutAmount, t.nextPayout]) expect(list, text).toContain(said(text));
    const page = (await of.owner.get(`/dashboard/payouts/${failed}`)).html;
    for (const text of [t.payoutFailure_account_closed, t.payoutFailureHelp_account_closed, t.payoutStepFailed, t.payoutTransactions, t.destination]) expect(page, text).toContain(said(text));
    expect(page).toContain(amountIn(700_000, lang));
    const refused = await payOut(of.owner, '999 999');
    expect(refused.html).toContain(said(t.payOutInsufficient, { asked: amountIn(99_999_900, lang), available: amountIn(Number((await balance(service, of.key)).available), lang) }));
    of.owner.lang = 'en';
  });
});

describe.runIf(browserAvailable())('in Chromium', () => {
  let browser: Browser;
  let base: string;
  let listed: Awaited<ReturnType<typeof shopWithPayouts>>;
  let automatic: string;
  beforeAll(async () => {
    base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
    listed = await shopWithPayouts();
    await makeAvailable(service, listed.of.key, 3_000_000);
    await chargeCard(service, listed.of.key, '8600000000000007', 1_234_567);
    automatic = (await runPayouts(listed.of.key)).id;
    await makeAvailable(service, listed.of.key, 2_500_000);
  }, 60_000);
  afterAll(async () => browser?.close());

  const shot = (page: BrowserPage, name: string) => screenshot(page, `payouts-${engine}-${name}`);

  /** The owner's session in a browser at `width`, collecting the page's problems and any request to another host. */
  const open = (width: number, lang: Lang = 'en') =>
    openWatched(browser, base, {
      width,
      locale: LOCALES[lang],
      cookies: [
        { name: SESSION_COOKIE, value: listed.of.owner.cookies.get(SESSION_COOKIE)! },
        { name: 'tolov_lang', value: lang },
      ],
    });

  const overflow = (page: BrowserPage) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  it('shows the list, a paid and a failed payout, the overview, and pays out by keyboard, refusing too much', async () => {
    const { context, page, problems } = await open(1280);
    await page.goto(`${base}/dashboard/payouts`);
    expect(await page.locator('tbody tr').count()).toBe(5);
    await shot(page, 'list');
    await page.getByRole('link', { name: automatic }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(`Payout ${automatic}`);
    await expect.poll(() => page.getByRole('table', { name: en.payoutTransactionsCaption }).locator('tbody tr').count()).toBeGreaterThanOrEqual(4);
    await shot(page, 'detail-paid');
    await page.goto(`${base}/dashboard/payouts/${listed.failed}`);
    expect(await page.getByRole('note').textContent()).toContain(en.payoutFailure_account_closed);
    await shot(page, 'detail-failed');
    await page.goto(`${base}/dashboard/overview`);
    await page.locator('#activity-chart canvas').waitFor();
    await shot(page, 'overview');

    // By keyboard: into the amount, too much typed and sent with Enter; refused, and the amount is there to correct.
    await page.goto(`${base}/dashboard/payouts`);
    await page.getByRole('textbox', { name: 'Amount, UZS' }).focus();
    await page.keyboard.type('999 999 999');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.keyboard.press('Enter');
    await page.locator('#pay-out-amount-error').waitFor();
    expect(await page.locator('#pay-out-amount-error').textContent()).toMatch(/^Nothing was paid out: 999,999,999\.00 UZS is more than the available balance, [\d,.]+ UZS\.$/);
    // The field is in focus again (autofocus, applied when the page first renders), with what was typed, to be corrected.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('pay-out-amount');
    expect(await page.getByRole('textbox', { name: 'Amount, UZS' }).inputValue()).toBe('999 999 999');
    expect(new URL(page.url()).pathname).toBe('/dashboard/payouts');
    await shot(page, 'pay-out-refused');
    await page.getByRole('textbox', { name: 'Amount, UZS' }).fill('1 000');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Pay out now' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toMatch(/^Payout po_/);
    expect(await page.getByRole('status').textContent()).toBe(en.payOutDone);
    await page.getByRole('button', { name: 'Cancel payout' }).waitFor();
    await shot(page, 'paid-out');
    expect(problems).toEqual([]);
    await context.close();
  });

  it.each(['en', 'ru', 'uz'] as const)('fits a 390 px phone in %s: the list, a payout, the form refused, the overview', async (lang) => {
    const { context, page, problems } = await open(390, lang);
    for (const [name, path] of [['list', '/dashboard/payouts'], ['detail-paid', `/dashboard/payouts/${automatic}`], ['detail-failed', `/dashboard/payouts/${listed.failed}`], ['overview', '/dashboard/overview'], ['statement', `/dashboard/statement?payout=${automatic}`]]) {
      await page.goto(`${base}${path}`);
      expect(await overflow(page), `${name} is wider than the phone`).toBeLessThanOrEqual(0);
      await shot(page, `phone-${lang}-${name}`);
    }
    await page.goto(`${base}/dashboard/payouts`);
    await page.locator('#pay-out-amount').fill('abc');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator('form.pay-out button[type="submit"]').click();
    await page.locator('#pay-out-amount-error').waitFor();
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await shot(page, `phone-${lang}-pay-out-refused`);
    expect(problems).toEqual([]);
    await context.close();
  });
});
