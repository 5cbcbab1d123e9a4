// Payment links in the dashboard: made by owners and developers through the API's command (under the form's key, so a
// form posted twice makes one link, and audited), refused field by field in the page's language with nothing made,
// turned off and on and described again; a link's page lists the orders buyers opened through it, linked to their
// order's and payment's pages; viewers see all of it and change nothing; one account never reaches another's links.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/harness.js';
import { DashboardClient, uniqueEmail } from './client.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => service.stop());

/** An item code the test fiscal module signs. */
const ITEM_CODE = '10399001001000000';
const formKeyIn = (html: string) => /name="idempotencyKey" value="([0-9a-f-]{36})"/.exec(html)![1]!;
const linkIdIn = (location: string | undefined) => /^\/dashboard\/payment-links\/(plink_\w+)\?done=created$/.exec(location ?? '')?.[1];

/** A signed-up owner, with a test key of the account's product. */
async function owner(): Promise<{ client: DashboardClient; email: string; key: string }> {
  const client = new DashboardClient(service);
  const email = uniqueEmail();
  await client.signUp(email);
  const key = /sk_test_[0-9A-Za-z]{32}/.exec((await client.post('/dashboard/api-keys', {})).html)![0];
  return { client, email, key };
}

async function productOf(email: string): Promise<string> {
  const [row] = await service.db.query<{ id: string }>(
    'SELECT p.id FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1',
    [email],
  );
  return row!.id;
}

async function viewerOf(client: DashboardClient): Promise<DashboardClient> {
  const invitee = uniqueEmail('viewer');
  await client.post('/dashboard/team/invite', { email: invitee, role: 'viewer' });
  const path = await client.invitationFor(invitee);
  const member = new DashboardClient(service);
  await member.get(path);
  expect((await member.post(path, { password: 'correct horse battery' })).status).toBe(303);
  return member;
}

/** Posts the create form as the page offers it (its form key), with `fields`; the answer. */
async function create(client: DashboardClient, fields: Record<string, string>) {
  const form = await client.get('/dashboard/payment-links/new');
  return client.post('/dashboard/payment-links', { idempotencyKey: formKeyIn(form.html), ...fields });
}

async function made(client: DashboardClient, fields: Record<string, string>): Promise<string> {
  const answer = await create(client, fields);
  expect(answer.status, answer.html.slice(0, 400)).toBe(303);
  return linkIdIn(answer.location)!;
}

const apiLink = async (key: string, id: string) => (await service.call({ method: 'GET', url: `/v1/payment_links/${id}`, key })).body;
const linkCount = async () => (await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payment_links'))[0]!.n;

/** A buyer presses Pay on the link's page: the order it opened. */
async function buyerOpens(key: string, id: string): Promise<string> {
  const slug = String((await apiLink(key, id)).url).split('/l/')[1];
  const pressed = await service.app.inject({ method: 'POST', url: `/l/${slug}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
  expect(pressed.statusCode).toBe(303);
  const orders = (await service.call({ method: 'GET', url: `/merchant/v1/orders?paymentLink=${id}&limit=1`, key })).body.data;
  return orders[0].id;
}

describe('making a link', () => {
  it('makes a fixed-price link with a fiscal line and a stock, once however often the form is posted, audited', async () => {
    const { client, key } = await owner();
    const form = await client.get('/dashboard/payment-links/new');
    expect(form.status).toBe(200);
    const fields = {
      idempotencyKey: formKeyIn(form.html),
      description: '  Dried   apricots, 2 kg ',
      pricing: 'fixed',
      amount: '150 000',
      quantityMax: '20',
      'line0-title': 'Dried apricots',
      'line0-code': '10399 001 001 000 000',
      'line0-packageCode': '1505709',
      'line0-vatPercent': '12',
      'line0-count': '2',
      'line0-price': '75,000',
    };
    const first = await client.post('/dashboard/payment-links', fields);
    expect(first.status).toBe(303);
    const id = linkIdIn(first.location)!;
    const again = await client.post('/dashboard/payment-links', fields);
    expect(again.location).toBe(first.location);
    expect((await service.call({ method: 'GET', url: '/v1/payment_links', key })).body.data).toHaveLength(1);
    expect(await apiLink(key, id)).toMatchObject({
      description: 'Dried apricots, 2 kg',
      amount: 15_000_000,
      amountMin: null,
      quantityMax: 20,
      active: true,
      receipt: { items: [{ title: 'Dried apricots', code: ITEM_CODE, packageCode: '1505709', vatPercent: 12, count: 2, price: 7_500_000 }] },
    });

    const page = await client.get(first.location!);
    expect(page.html).toContain('<p class="notice ok" role="status">The payment link is made: share it.</p>');
    expect(page.html).toMatch(/<dt>Amount<\/dt><dd>150,000\.00 UZS<\/dd>/);
    expect(page.html).toMatch(/<dt>Quantity available<\/dt><dd>20<\/dd>/);
    expect(page.html).toContain('<td data-label="Item">Dried apricots</td>');
    expect((await client.get('/dashboard/team/audit')).html).toMatch(new RegExp(`<code>payment_link\\.created</code></td><td[^>]*>${id}<`));
  });

  it('makes a link whose buyer enters the amount, within the bounds typed or the API’s own', async () => {
    const { client, key } = await owner();
    const bounded = await made(client, { description: 'Donation to the school library', pricing: 'chosen', amountMin: '5 000', amountMax: '500000.50' });
    expect(await apiLink(key, bounded)).toMatchObject({ amount: null, amountMin: 500_000, amountMax: 50_000_050, receipt: null, quantityMax: null });
    const open = await made(client, { description: 'Pay your invoice', pricing: 'chosen', amountMin: '', amountMax: '', amount: 'ignored when the buyer chooses' });
    expect(await apiLink(key, open)).toMatchObject({ amount: null, amountMin: 1_000, amountMax: 100_000_000 });
    expect((await client.get(`/dashboard/payment-links/${bounded}`)).html).toContain('<dd>The buyer enters it: from 5,000.00\u00a0UZS to 500,000.50\u00a0UZS</dd>');
  });

  it('says what is wrong at each field, in the page’s language, with what was typed, and makes nothing', async () => {
    const { client } = await owner();
    client.lang = 'ru';
    const before = await linkCount();
    const cases: Array<[Record<string, string>, string, string]> = [
      [{ description: ' ', pricing: 'fixed', amount: '1000' }, 'link-description', 'Опишите, за что платит покупатель, не длиннее 500 символов.'],
      [{ description: 'Somsa', pricing: 'fixed', amount: '' }, 'link-amount', 'Введите сумму или выберите, что её вводит покупатель.'],
      [{ description: 'Somsa', pricing: 'fixed', amount: '12.345' }, 'link-amount', 'Введите сумму в сумах, например 150000 или 150 000,50: не больше двух цифр после запятой.'],
      [{ description: 'Somsa', pricing: 'fixed', amount: '0' }, 'link-amount', 'Введите сумму больше нуля.'],
      [{ description: 'Xayriya', pricing: 'chosen', amountMin: '9' }, 'link-amountMin', 'Введите сумму от 10,00 сум до 1 000 000,00 сум или оставьте поле пустым.'],
      [{ description: 'Xayriya', pricing: 'chosen', amountMin: '5000', amountMax: '100' }, 'link-amountMin', 'Наименьшая сумма больше наибольшей.'],
      [{ description: 'Somsa', pricing: 'fixed', amount: '1000', quantityMax: '0' }, 'link-quantityMax', 'Введите целое число от 1 до 1 000 000 или оставьте поле пустым.'],
      [{ description: 'Somsa', pricing: 'fixed', amount: '1000', 'line0-title': 'Somsa', 'line0-code': '123', 'line0-packageCode': '1', 'line0-price': '1000' }, 'link-line0-code', 'Введите код ИКПУ: 17 цифр.'],
      [{ description: 'Somsa', pricing: 'fixed', amount: '1000', 'line2-code': ITEM_CODE }, 'link-line2-title', 'Введите название товара, до 128 символов.'],
    ];
    for (const [fields, id, said] of cases) {
      const page = await create(client, fields);
      expect(page.status, id).toBe(400);
      // Russian groups digits with no-break spaces.
      const html = page.html.replaceAll('\u00a0', ' ');
      expect(html).toContain('<p class="notice error" role="alert">Ничего не создано: проверьте отмеченные поля.</p>');
      expect(html, said).toContain(`<p class="field-error" id="${id}-error">${said}</p>`);
      expect(html).toMatch(new RegExp(`<input id="${id}"[^>]* aria-invalid="true" autofocus>`));
    }
    const typed = await create(client, { description: 'Somsa & choy', pricing: 'chosen', amountMin: '5 000', amountMax: '100' });
    expect(typed.html).toContain('value="Somsa &amp; choy"');
    expect(typed.html).toMatch(/<input type="radio" name="pricing" value="chosen" checked>/);
    expect(typed.html).toContain('value="5 000"');
    expect(await linkCount()).toBe(before);
  });

  it('says when the lines do not add up to the amount, or come without one', async () => {
    const { client } = await owner();
    const line = { 'line0-title': 'Non', 'line0-code': ITEM_CODE, 'line0-packageCode': '1', 'line0-vatPercent': '12', 'line0-count': '3', 'line0-price': '4000' };
    const short = await create(client, { description: 'Non', pricing: 'fixed', amount: '15000', ...line });
    expect(short.status).toBe(400);
    expect(short.html).toContain('<p class="field-error" role="alert">The lines add up to 12,000.00\u00a0UZS, and the amount is 15,000.00\u00a0UZS: they must be equal.</p>');
    expect(short.html).toMatch(/<details class="link-receipt" open>/);
    const chosen = await create(client, { description: 'Non', pricing: 'chosen', ...line });
    expect(chosen.html).toContain('Receipt lines add up to a fixed amount: choose a fixed amount, or leave the lines empty.');
    // A line typed further down, the ones above it left empty, is the receipt's first.
    const id = await made(client, { description: 'Non', pricing: 'fixed', amount: '12000', ...Object.fromEntries(Object.entries(line).map(([name, value]) => [name.replace('line0', 'line3'), value])) });
    expect((await client.get(`/dashboard/payment-links/${id}`)).html).toContain('<td data-label="Item">Non</td>');
  });

  it('says at its field a VAT rate Tolov does not take, and at the lines that a live product needs them', async () => {
    const { client, email } = await owner();
    const refused = await create(client, {
      description: 'Non',
      pricing: 'fixed',
      amount: '1000',
      'line1-title': 'Non',
      'line1-code': ITEM_CODE,
      'line1-packageCode': '1',
      'line1-vatPercent': '15',
      'line1-count': '1',
      'line1-price': '1000',
    });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('<p class="field-error" id="link-line1-vatPercent-error">Tolov does not take this VAT rate: enter the one your receipts use, such as 12 or 0.</p>');

    const product = await productOf(email);
    expect((await service.admin('POST', `/admin/v1/products/${product}/live`)).status).toBe(200);
    expect((await service.admin('POST', `/admin/v1/products/${product}`, { receiptRequired: true })).status).toBe(200);
    expect((await client.post('/dashboard/mode', { mode: 'live' })).status).toBe(303);
    const live = await create(client, { description: 'Xayriya', pricing: 'chosen' });
    expect(live.status).toBe(400);
    expect(live.html).toContain('Live payments of this product need fiscal lines: give a fixed amount and its receipt lines.');
  });
  it('makes nothing for a product Tolov suspended, and says so above the form, as typed', async () => {
    const { client, email } = await owner();
    const product = await productOf(email);
    expect((await service.admin('POST', `/admin/v1/products/${product}/suspend`, { reason: 'Documents under review' })).status).toBe(200);
    const before = await linkCount();
    const refused = await create(client, { description: 'Somsa', pricing: 'fixed', amount: '8000' });
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('<p class="notice error" role="alert">Nothing was made: Tolov has suspended this product.</p>');
    expect(refused.html).toContain('value="Somsa"');
    expect(await linkCount()).toBe(before);
  });
});

describe('a link’s page', () => {
  it('shares it: its address to copy, its QR code to see and download, and a plain link to Telegram', async () => {
    const { client, key } = await owner();
    const id = await made(client, { description: 'Tandir non & somsa', pricing: 'fixed', amount: '45000' });
    const { url } = await apiLink(key, id);
    const slug = String(url).split('/l/')[1]!;
    const page = await client.get(`/dashboard/payment-links/${id}`);
    expect(page.html).toContain(`<code id="link-url">${String(url).replace(slug, `<wbr>${slug}`)}</code><button type="button" class="copy" data-copy="link-url">Copy</button>`);
    expect(page.html).toContain(`<img class="link-qr" src="/l/${slug}/qr.svg" width="180" height="180" alt="QR code of the link">`);
    expect(page.html).toContain(`<a href="/l/${slug}/qr.svg?download" download>Download QR (SVG)</a>`);
    expect(page.html).toContain(`<a href="/l/${slug}/qr.png?download" download>Download QR (PNG, to print)</a>`);
    expect(page.html).toContain(`<a href="https://t.me/share/url?url=${encodeURIComponent(url)}&amp;text=Tandir%20non%20%26%20somsa">Share to Telegram</a>`);
    // Nothing on the page is fetched from another site, and its images come from its own origin.
    expect(page.headers['content-security-policy']).toContain("img-src 'self'");
    expect(page.html).not.toMatch(/<(img|script|link)[^>]+(src|href)="https?:/);
    const png = await service.app.inject({ method: 'GET', url: `/l/${slug}/qr.png?download` });
    expect(png.headers['content-disposition']).toBe(`attachment; filename="tolov-${slug}.png"`);
  });

  it('turns the link off and on again, and changes its description, each audited; a bad description is said at its field', async () => {
    const { client, key } = await owner();
    const id = await made(client, { description: 'Somsa', pricing: 'fixed', amount: '8000' });
    const page = await client.get(`/dashboard/payment-links/${id}`);
    expect(page.html).toMatch(new RegExp(`<form method="post" action="/dashboard/payment-links/${id}/deactivate" data-confirm="Turn off this link\\? [^"]+">`));
    const off = await client.post(`/dashboard/payment-links/${id}/deactivate`, { idempotencyKey: formKeyIn(page.html) });
    expect(off.location).toBe(`/dashboard/payment-links/${id}?done=deactivated`);
    expect((await apiLink(key, id)).active).toBe(false);
    const offPage = await client.get(off.location!);
    expect(offPage.html).toContain('The link is turned off: it opens no more orders.');
    expect(offPage.html).toContain('<span class="status s-inactive" title="INACTIVE">Turned off</span>');
    expect(offPage.html).toContain('This link is turned off: buyers who open it are told that it takes no payments.');
    expect(offPage.html).toMatch(/data-confirm="Turn this link on again\? [^"]+">[\s\S]*?<button type="submit">Turn the link on again<\/button>/);

    expect((await client.post(`/dashboard/payment-links/${id}/activate`, {})).location).toBe(`/dashboard/payment-links/${id}?done=activated`);
    expect((await apiLink(key, id)).active).toBe(true);
    const wrong = await client.post(`/dashboard/payment-links/${id}/description`, { description: '   ' });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain('<p class="field-error" id="describe-description-error">Describe what the buyer pays for, in up to 500 characters.</p>');
    expect(wrong.html).toMatch(/<details class="describe" open>/);
    const described = await client.post(`/dashboard/payment-links/${id}/description`, { description: 'Somsa, 2 dona' });
    expect(described.location).toBe(`/dashboard/payment-links/${id}?done=described`);
    expect((await apiLink(key, id)).description).toBe('Somsa, 2 dona');
    const audit = (await client.get('/dashboard/team/audit')).html;
    for (const action of ['payment_link.deactivated', 'payment_link.activated', 'payment_link.updated']) {
      expect(audit).toMatch(new RegExp(`<code>${action.replace('.', '\\.')}</code></td><td[^>]*>${id}<`));
    }
  });

  it('lists the orders buyers opened through the link, linked to their pages, and the orders list narrowed to it', async () => {
    const { client, key } = await owner();
    const id = await made(client, { description: 'Konsert chiptasi', pricing: 'fixed', amount: '250000' });
    expect((await client.get(`/dashboard/payment-links/${id}`)).html).toContain('No buyer has pressed Pay on this link yet.');
    const paid = await buyerOpens(key, id);
    const intent = (await service.call({ method: 'POST', url: `/v1/test_helpers/orders/${paid}/pay`, key, body: {} })).body.paymentIntent as string;
    const pending = await buyerOpens(key, id);
    const other = (await service.call({ method: 'POST', url: '/merchant/v1/orders', key, body: { amount: 1000 } })).body.id as string;

    const page = (await client.get(`/dashboard/payment-links/${id}`)).html;
    const orders = page.split('<h2>Orders through this link</h2>')[1]!;
    expect(orders.indexOf(pending)).toBeLessThan(orders.indexOf(paid));
    expect(orders).toContain(`<a href="/dashboard/orders/${paid}"><code>${paid}</code></a>`);
    expect(orders).toContain(`<a href="/dashboard/payments/${intent}"><code>${intent}</code></a>`);
    expect(orders).toContain('<span class="status s-paid" title="PAID">Paid</span>');
    expect(orders).toContain('<span class="status s-pending" title="PENDING">Awaiting payment</span>');
    expect(orders).not.toContain(other);
    expect(orders).toContain(`<a href="/dashboard/orders?paymentLink=${id}">All its orders, with filters and CSV export</a>`);

    expect((await client.get(`/dashboard/orders/${paid}`)).html).toMatch(new RegExp(`<dt>Payment link</dt><dd><a href="/dashboard/payment-links/${id}"><code>${id}</code></a></dd>`));
    const narrowed = (await client.get(`/dashboard/orders?paymentLink=${id}`)).html;
    expect(narrowed).toContain(`<p class="scope">Orders opened through the payment link <a href="/dashboard/payment-links/${id}"><code>${id}</code></a>`);
    expect(narrowed).toContain(paid);
    expect(narrowed).not.toContain(other);
    const csv = (await client.get(`/dashboard/orders.csv?paymentLink=${id}&status=PAID`)).html.trimEnd().split('\r\n');
    expect(csv).toHaveLength(2);
    expect(csv[1]).toMatch(new RegExp(`^${paid},.*,${id},Konsert chiptasi$`));
  });
});

describe('the list', () => {
  it('shows each link’s description, price, status, address and day; finds one by id, filters by status, and exports CSV', async () => {
    const { client, key } = await owner();
    const fixed = await made(client, { description: 'Quritilgan oʻrik, 2 kg', pricing: 'fixed', amount: '150000' });
    const chosen = await made(client, { description: 'Xayriya', pricing: 'chosen', amountMin: '5000' });
    await client.post(`/dashboard/payment-links/${chosen}/deactivate`, {});
    client.lang = 'uz';
    // Uzbek groups digits with no-break spaces.
    const list = (await client.get('/dashboard/payment-links')).html.replaceAll('\u00a0', ' ');
    expect(list).toContain(`<a class="button primary" href="/dashboard/payment-links/new">Yangi toʻlov havolasi</a>`);
    expect(list).toContain(`<a href="/dashboard/payment-links/${fixed}" title="Quritilgan oʻrik, 2 kg">Quritilgan oʻrik, 2 kg</a>`);
    expect(list).toContain('<td data-label="Summa" class="num">150 000,00 soʻm</td>');
    expect(list).toContain('Summani xaridor kiritadi<small class="range">5 000,00 soʻm dan 1 000 000,00 soʻm gacha</small>');
    expect(list).toContain('<span class="status s-inactive" title="INACTIVE">Oʻchirilgan</span>');
    expect(list).toContain('<span class="status s-active" title="ACTIVE">Faol</span>');

    expect((await client.get(`/dashboard/payment-links?q=${chosen}`)).html).not.toContain(fixed);
    const off = (await client.get('/dashboard/payment-links?status=INACTIVE')).html;
    expect(off).toContain(chosen);
    expect(off).not.toContain(fixed);
    expect((await client.get('/dashboard/payment-links?status=MAYBE')).status).toBe(200);

    const csv = (await client.get('/dashboard/payment-links.csv')).html.trimEnd().split('\r\n');
    expect(csv[0]).toBe('id,created,description,amount_uzs,amount_min_uzs,amount_max_uzs,active,quantity_max,url');
    const { url } = await apiLink(key, fixed);
    expect(csv[2]).toMatch(new RegExp(`^${fixed},[^,]+,"Quritilgan oʻrik, 2 kg",150000\\.00,,,true,,${url}$`));
  });

  it('pages on past the first 25 links', async () => {
    const { client, key } = await owner();
    for (let n = 0; n < 26; n++) {
      await service.call({ method: 'POST', url: '/v1/payment_links', key, body: { amount: 1000 + n, description: `Link ${n}` } });
    }
    const first = (await client.get('/dashboard/payment-links')).html;
    expect(first.match(/<tr><td/g)).toHaveLength(25);
    const older = /<a href="([^"]+)">Older<\/a>/.exec(first)![1]!.replaceAll('&amp;', '&');
    const second = (await client.get(older)).html;
    expect(second.match(/<tr><td/g)).toHaveLength(1);
    expect(second).toContain('>Link 0</a>');
  });
});

describe('who may do what', () => {
  it('shows a viewer the links and their orders but no button that changes them, and refuses their posts', async () => {
    const { client, key } = await owner();
    const id = await made(client, { description: 'Somsa', pricing: 'fixed', amount: '8000' });
    const viewer = await viewerOf(client);
    const list = await viewer.get('/dashboard/payment-links');
    expect(list.html).toContain('Owners and developers can make payment links and turn them off.');
    expect(list.html).not.toContain('/dashboard/payment-links/new');
    const page = await viewer.get(`/dashboard/payment-links/${id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Orders through this link');
    for (const hidden of ['Turn off the link', 'Change the description', `action="/dashboard/payment-links/${id}/`]) expect(page.html).not.toContain(hidden);
    expect((await viewer.get('/dashboard/payment-links/new')).status).toBe(403);
    expect((await viewer.post('/dashboard/payment-links', { description: 'Mine', pricing: 'fixed', amount: '1000' })).status).toBe(403);
    expect((await viewer.post(`/dashboard/payment-links/${id}/deactivate`, {})).status).toBe(403);
    expect((await viewer.post(`/dashboard/payment-links/${id}/description`, { description: 'Mine' })).status).toBe(403);
    expect(await apiLink(key, id)).toMatchObject({ active: true, description: 'Somsa' });
    expect((await service.call({ method: 'GET', url: '/v1/payment_links', key })).body.data).toHaveLength(1);
  });

  it('never lets one account see or change another’s link, and wants the form token', async () => {
    const a = await owner();
    const b = await owner();
    const id = await made(a.client, { description: 'Somsa', pricing: 'fixed', amount: '8000' });
    expect((await b.client.get(`/dashboard/payment-links/${id}`)).status).toBe(404);
    for (const action of ['deactivate', 'activate', 'description']) {
      expect((await b.client.post(`/dashboard/payment-links/${id}/${action}`, { description: 'Taken' })).status, action).toBe(404);
    }
    expect((await b.client.get(`/dashboard/payment-links?q=${id}`)).html).not.toContain(`/dashboard/payment-links/${id}`);
    expect((await a.client.post(`/dashboard/payment-links/${id}/deactivate`, {}, { csrf: null })).status).toBe(403);
    expect(await apiLink(a.key, id)).toMatchObject({ active: true, description: 'Somsa' });
  });
});
