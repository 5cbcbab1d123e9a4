// The receipt a buyer sees: on the hosted page's paid screen (through the public session call), registered while they
// look, and on its printable page, in three languages, on a phone, a desktop and paper.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeLine, formatAmount, formatDateTime, textsFor, type Language } from '../../src/web/assets/i18n.js';
import { submitCard, submitCode, TEST_CODE } from '../support/binding.js';
import { browserAvailable, DESKTOP_VIEWPORT, launchBrowser, openAsBuyer, PHONE_VIEWPORT, screenshot } from '../support/browser.js';
import { engine, idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { dataUrl, logoPng } from '../support/png.js';
import { fiscalizeAll } from '../support/receipts.js';

let service: TestService;
let merchant: Merchant;

const NBSP = '\u00a0';
const LOCALES: Record<Language, string> = { uz: 'uz-UZ', ru: 'ru-RU', en: 'en-US' };
const VIEWPORTS = { phone: PHONE_VIEWPORT, desktop: DESKTOP_VIEWPORT };
/** A cart of three lines, one discounted, and shipping: 185,000 + 6 × 42,000 − 12,000 + 99,000 + 25,000 = 549,000.00 so'm. */
const CART = {
  items: [
    { title: 'Choynak, Rishton sopoli', price: 18_500_000, count: 1, code: '10399001001000000', packageCode: '1505709', vatPercent: 12 },
    { title: 'Piyola, koʻk naqshli', price: 4_200_000, count: 6, code: '10399001002000000', packageCode: '1505709', vatPercent: 12, discount: 1_200_000 },
    { title: 'Kitob «Oʻzbek kulolchiligi»', price: 9_900_000, count: 1, code: '04901001001000000', packageCode: '1510911', vatPercent: 0 },
  ],
  shipping: { title: 'Yetkazib berish', price: 2_500_000, code: '10112006002000000', packageCode: '1209779', vatPercent: 12 },
};
const CART_AMOUNT = 54_900_000;
// 18,500,000 × 12/112 → 1,982,143; 24,000,000 × 12/112 → 2,571,429; 0; 2,500,000 × 12/112 → 267,857.
const CART_VAT = 1_982_143 + 2_571_429 + 267_857;
/** The test fiscal module refuses a line with this code. */
const REFUSED_CODE = '00000000000000000';

async function createOrder(body: Record<string, unknown> = {}, key = merchant.test) {
  const reply = await service.call({
    method: 'POST',
    url: '/merchant/v1/orders',
    key,
    idempotencyKey: idem(),
    body: { amount: CART_AMOUNT, description: 'Rishton sopol toʻplami', receipt: CART, ...body },
  });
  if (reply.status !== 201) throw new Error(`order refused: ${reply.text}`);
  return { id: reply.body.id as string, token: new URL(reply.body.paymentUrl).pathname.split('/pay/')[1]! };
}

/** An order paid through the public session calls, as the page would pay it. */
async function paidOrder(body: Record<string, unknown> = {}, key = merchant.test) {
  const order = await createOrder(body, key);
  await submitCard(service, order.token, { pan: '8600000000000007' });
  const paid = await submitCode(service, order.token, TEST_CODE);
  if (paid.status !== 200) throw new Error(`payment refused: ${paid.text}`);
  return order;
}

/** The order's sale receipt as the merchant reads it. */
async function saleOf(orderId: string, key = merchant.test) {
  const order = (await service.call({ method: 'GET', url: `/merchant/v1/orders/${orderId}`, key })).body;
  return (await service.call({ method: 'GET', url: `/v1/receipts/${order.receipt}`, key })).body;
}

const receiptPath = (receipt: { url: string }) => new URL(receipt.url).pathname;

beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant({ name: 'Kulol Uyi' });
});
afterAll(() => service?.stop());

describe.runIf(browserAvailable())('the receipt a buyer sees, in Chromium', () => {
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  /** Every request the page makes, to check that none leaves Tolov. */
  const requestsOf = (page: Page) => {
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    return requested;
  };

  const lineTexts = (page: Page) => page.locator('.lines li').evaluateAll((items) => items.map((item) => [...item.children].map((part) => part.textContent)));

  it('shows the lines while the receipt is registered, then its QR code, and opens the printable page', async () => {
    const order = await createOrder();
    const { page, problems } = await openAsBuyer(browser, `${base}/pay/${order.token}`);
    const requested = requestsOf(page);
    await page.getByLabel('Karta raqami').pressSequentially('8600000000000007');
    await page.getByLabel('Amal qilish muddati').pressSequentially('1230');
    await page.getByLabel('Kartaga ulangan telefon raqami').fill('998901234567');
    await page.getByRole('button', { name: 'Davom etish' }).click();
    await page.getByLabel('SMS-kod').fill(TEST_CODE);
    await page.getByRole('button', { name: /toʻlash$/ }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Toʻlov qabul qilindi');

    const region = page.getByRole('region', { name: 'Chek' });
    // Each part of a line's detail is kept whole: it breaks between them only.
    const detail = (...parts: string[]) => parts.map((part) => part.replaceAll(' ', NBSP)).join(' · ');
    expect(await lineTexts(page)).toEqual([
      ['Choynak, Rishton sopoli', `185${NBSP}000,00 soʻm`, detail('1 × 185 000,00 soʻm', 'QQS 12%')],
      ['Piyola, koʻk naqshli', `240${NBSP}000,00 soʻm`, detail('6 × 42 000,00 soʻm', 'chegirma 12 000,00 soʻm', 'QQS 12%')],
      ['Kitob «Oʻzbek kulolchiligi»', `99${NBSP}000,00 soʻm`, detail('1 × 99 000,00 soʻm', 'QQS 0%')],
      ['Yetkazib berish', `25${NBSP}000,00 soʻm`, detail('1 × 25 000,00 soʻm', 'QQS 12%')],
    ]);
    expect(await region.locator('.totals').locator('dt, dd').allTextContents()).toEqual([
      'Jami', `549${NBSP}000,00 soʻm`, 'Shu jumladan QQS', formatAmount(CART_VAT, 'uz'),
    ]);
    expect(await page.getByRole('status').textContent()).toBe(textsFor('uz').receipt.pending);
    expect(await page.locator('img.qr').count()).toBe(0);
    await screenshot(page, `receipt-${engine}-paid-pending-uz`);

    // The page asks again a few seconds later; an unchanged answer leaves the page (a live region) as it is.
    await page.getByRole('status').evaluate((node) => node.setAttribute('data-seen', ''));
    const asked = page.waitForResponse((response) => /\/checkout\/v1\/sessions\/[^/]+$/.test(response.url()));
    await page.clock.fastForward(3_500);
    await asked;
    await page.waitForLoadState('networkidle');
    expect(await page.locator('[data-seen]').count()).toBe(1);

    expect(await service.receipts.fiscalizeDue(10)).toBe(1);
    // It asks again, and draws the registered receipt.
    await page.clock.fastForward(3_500);
    const qr = page.getByRole('img', { name: 'Chekning QR-kodi' });
    await expect.poll(() => qr.evaluate((image: HTMLImageElement) => image.naturalWidth)).toBeGreaterThan(0);
    const sale = await saleOf(order.id);
    expect(sale.status).toBe('FISCALIZED');
    expect(await region.locator('.registered dd').allTextContents()).toEqual([sale.receiptNumber, sale.fiscalSign]);
    expect(await page.getByRole('link', { name: 'soliq.uz saytida tekshirish' }).getAttribute('href')).toBe(sale.qrUrl);
    expect(await page.getByRole('status').count()).toBe(0);

    await page.getByRole('link', { name: 'Chekni ochish va chop etish' }).click();
    await page.waitForURL(`${base}${receiptPath(sale)}`);
    expect(await page.locator('h1').textContent()).toBe('Sotuv cheki');
    expect(await page.locator('.shop').textContent()).toBe('Kulol Uyi');
    expect(await page.getByRole('img', { name: 'Chekning QR-kodi' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Chop etish' }).isVisible()).toBe(true);
    expect(requested.filter((address) => !address.startsWith(base))).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('draws the paid screen and the printable page in three languages, on a phone and a desktop, and fits', async () => {
    const order = await paidOrder();
    await fiscalizeAll(service);
    const sale = await saleOf(order.id);
    for (const [language, locale] of Object.entries(LOCALES) as [Language, string][]) {
      const text = textsFor(language).receipt;
      for (const [device, viewport] of Object.entries(VIEWPORTS)) {
        const label = `${language} ${device}`;
        const { page, problems } = await openAsBuyer(browser, `${base}/pay/${order.token}`, locale, { viewport });
        const requested = requestsOf(page);
        const qr = page.getByRole('img', { name: text.qr });
        await expect.poll(() => qr.evaluate((image: HTMLImageElement) => image.naturalWidth), { message: label }).toBeGreaterThan(0);
        expect(await page.locator('.line-detail').first().textContent(), label).toBe(describeLine({ ...CART.items[0]!, discount: 0 }, language));
        expect(await page.evaluate(() => document.documentElement.scrollWidth), label).toBeLessThanOrEqual(viewport.width);
        await screenshot(page, `receipt-${engine}-paid-${language}-${device}`);

        await page.getByRole('link', { name: text.open }).click();
        await expect.poll(() => page.locator('h1').textContent(), { message: label }).toBe(text.saleTitle);
        expect(await page.locator('html').getAttribute('lang'), label).toBe(language);
        expect(await page.locator('.when').textContent(), label).toBe(text.tashkentTime(formatDateTime(new Date(sale.fiscalizedAt), language, 'Asia/Tashkent')));
        expect(await page.locator('.totals dd').first().textContent(), label).toBe(formatAmount(CART_AMOUNT, language));
        expect(await page.evaluate(() => document.documentElement.scrollWidth), label).toBeLessThanOrEqual(viewport.width);
        await screenshot(page, `receipt-${engine}-printable-${language}-${device}`);
        expect(requested.filter((address) => !address.startsWith(base)), label).toEqual([]);
        expect(problems, label).toEqual([]);
        await page.context().close();
      }
    }
  }, 120_000);

  it('prints black on white: the receipt alone, without buttons, language links or colour', async () => {
    const order = await paidOrder();
    await fiscalizeAll(service);
    const { page, problems } = await openAsBuyer(browser, `${base}${receiptPath(await saleOf(order.id))}?lang=ru`);
    await page.emulateMedia({ media: 'print' });
    const inked = await page.evaluate(() =>
      [...document.querySelectorAll('main *')]
        .filter((node) => node.checkVisibility() && !(node instanceof SVGElement))
        .map((node) => [node.tagName, getComputedStyle(node).color, getComputedStyle(node).backgroundColor]),
    );
    expect(inked.filter(([, color, background]) => color !== 'rgb(0, 0, 0)' || background !== 'rgba(0, 0, 0, 0)')).toEqual([]);
    expect(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)).toBe('rgb(255, 255, 255)');
    for (const hidden of ['.languages', '#print', '.check-link']) expect(await page.locator(hidden).isVisible(), hidden).toBe(false);
    expect(await page.getByRole('img', { name: 'QR-код чека' }).isVisible()).toBe(true);
    await screenshot(page, `receipt-${engine}-print-ru`);
    expect(problems).toEqual([]);
  });

  it('can be used with the keyboard alone: language, the check link and Print', async () => {
    const order = await paidOrder();
    await fiscalizeAll(service);
    const { page, problems } = await openAsBuyer(browser, `${base}${receiptPath(await saleOf(order.id))}`, 'en-US');
    await expect.poll(() => page.getByRole('button', { name: 'Print' }).isVisible()).toBe(true);
    await page.evaluate(() => {
      window.print = () => document.body.setAttribute('data-printed', 'yes');
    });
    const focused: string[] = [];
    for (let step = 0; step < 5; step++) {
      await page.keyboard.press('Tab');
      focused.push(await page.evaluate(() => document.activeElement?.textContent?.trim() ?? ''));
    }
    expect(focused).toEqual(['Oʻzbekcha', 'Русский', 'English', 'Check on soliq.uz', 'Print']);
    await page.keyboard.press('Enter');
    expect(await page.locator('body').getAttribute('data-printed')).toBe('yes');
    // The language links keep the buyer on the same receipt.
    for (let step = 0; step < 3; step++) await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('h1').textContent()).toBe('Чек продажи');
    expect(problems).toEqual([]);
  });

  it('says while the receipt is registered, and reloads the printable page by itself until it is', async () => {
    const order = await paidOrder();
    const sale = await saleOf(order.id);
    const { page, problems } = await openAsBuyer(browser, `${base}${receiptPath(sale)}`, 'en-US');
    const text = textsFor('en').receipt;
    expect(await page.getByRole('status').textContent()).toBe(`${text.pending} ${text.refreshing}`);
    expect(await page.locator('meta[http-equiv="refresh"]').getAttribute('content')).toBe('5');
    expect(await page.locator('.details dt').allTextContents()).toEqual(['Card', 'Payment reference']);
    // Nothing worth printing yet: the fiscal sign and its QR code are to come.
    expect(await page.locator('#print').count()).toBe(0);
    await screenshot(page, `receipt-${engine}-printable-pending-en`);
    await fiscalizeAll(service);
    await expect.poll(() => page.getByRole('img', { name: text.qr }).count(), { timeout: 15_000 }).toBe(1);
    expect(await page.locator('meta[http-equiv="refresh"]').count()).toBe(0);
    await expect.poll(() => page.locator('.details dt').allTextContents()).toEqual(['Card', 'Fiscal module', 'Receipt number', 'Fiscal sign', 'Payment reference']);
    await expect.poll(() => page.getByRole('button', { name: text.print }).isVisible()).toBe(true);
    expect(problems).toEqual([]);
  });

  it('tells the buyer a receipt the tax authority refused will come from the shop', async () => {
    const items = [{ ...CART.items[0]!, code: REFUSED_CODE }];
    const order = await paidOrder({ amount: CART.items[0]!.price, receipt: { items } });
    await fiscalizeAll(service);
    const sale = await saleOf(order.id);
    expect(sale).toMatchObject({ status: 'FAILED', failureCode: 'INVALID_CODE' });
    const { page, problems } = await openAsBuyer(browser, `${base}/pay/${order.token}`, 'ru-RU');
    const text = textsFor('ru').receipt;
    await expect.poll(() => page.getByRole('status').textContent()).toBe(text.failed);
    expect(await page.getByRole('link', { name: text.open }).count()).toBe(0);
    await screenshot(page, `receipt-${engine}-paid-failed-ru`);
    await page.goto(`${base}${receiptPath(sale)}`);
    expect(await page.getByRole('status').textContent()).toBe(text.failed);
    expect(await page.locator('meta[http-equiv="refresh"]').count()).toBe(0);
    expect(await page.locator('.qr-figure').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it("wears the shop's name, colour and logo, all served by Tolov", async () => {
    const branded = await service.createMerchant({ name: 'kulol-uyi-llc' });
    const branding = { displayName: 'Kulol Uyi', brandColor: '#7C2D12', logo: dataUrl('image/png', logoPng([124, 45, 18])) };
    expect((await service.admin('POST', `/admin/v1/products/${branded.productId}/branding`, branding)).status).toBe(200);
    const order = await paidOrder({}, branded.test);
    await fiscalizeAll(service);
    const { page, problems } = await openAsBuyer(browser, `${base}${receiptPath(await saleOf(order.id, branded.test))}`);
    const requested = requestsOf(page);
    await page.reload();
    expect(await page.locator('.shop').textContent()).toBe('Kulol Uyi');
    await expect.poll(() => page.getByRole('img', { name: 'Kulol Uyi' }).evaluate((image: HTMLImageElement) => image.naturalWidth)).toBe(150);
    expect(await page.getByRole('button', { name: 'Chop etish' }).evaluate((node) => getComputedStyle(node).backgroundColor)).toBe('rgb(124, 45, 18)');
    expect(requested.filter((address) => !address.startsWith(base))).toEqual([]);
    await screenshot(page, `receipt-${engine}-printable-branded-uz`);
    expect(problems).toEqual([]);
  });

  it('shows no receipt for an order paid without lines', async () => {
    const order = await paidOrder({ amount: 1_500_000, receipt: undefined });
    const { page, problems } = await openAsBuyer(browser, `${base}/pay/${order.token}`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Toʻlov qabul qilindi');
    expect(await page.getByRole('region', { name: 'Chek' }).locator('dt').allTextContents()).toEqual(['Doʻkon', 'Summa', 'Karta', 'Sana', 'Toʻlov raqami']);
    expect(await page.locator('.lines, .totals, .fiscal').count()).toBe(0);
    expect(problems).toEqual([]);
  });
});

describe('the receipt over HTTP', () => {

  it('reaches the paid screen through the public session call, with nothing about the card but the masked number', async () => {
    const unpaid = await createOrder();
    expect((await service.call({ method: 'GET', url: `/checkout/v1/sessions/${unpaid.token}` })).body.receipt).toBeNull();
    const order = await paidOrder();
    const state = (await service.call({ method: 'GET', url: `/checkout/v1/sessions/${order.token}` })).body;
    const sale = await saleOf(order.id);
    expect(state.receipt).toEqual({
      status: 'PENDING',
      items: [
        { title: 'Choynak, Rishton sopoli', count: 1, price: 18_500_000, discount: 0, total: 18_500_000, vatPercent: 12 },
        { title: 'Piyola, koʻk naqshli', count: 6, price: 4_200_000, discount: 1_200_000, total: 24_000_000, vatPercent: 12 },
        { title: 'Kitob «Oʻzbek kulolchiligi»', count: 1, price: 9_900_000, discount: 0, total: 9_900_000, vatPercent: 0 },
      ],
      shipping: { title: 'Yetkazib berish', price: 2_500_000, vatPercent: 12 },
      amount: CART_AMOUNT,
      vatAmount: CART_VAT,
      terminalId: null,
      receiptNumber: null,
      fiscalSign: null,
      fiscalizedAt: null,
      qrUrl: null,
      url: sale.url,
    });
    await fiscalizeAll(service);
    const registered = (await service.call({ method: 'GET', url: `/checkout/v1/sessions/${order.token}` })).body.receipt;
    expect(registered).toMatchObject({ status: 'FISCALIZED', terminalId: expect.stringMatching(/^TEST/), qrUrl: expect.stringMatching(/^https:\/\/ofd\.soliq\.uz\/check\?/) });
    expect(JSON.stringify(registered)).not.toMatch(/8600000000000007|maskedPan|packageCode|commissionTin|"code"/);
  });

  it('serves the printable page with strict headers and no inline code, in the language asked for; an unknown link is the pages\' 404', async () => {
    const order = await paidOrder();
    await fiscalizeAll(service);
    const path = receiptPath(await saleOf(order.id));
    const page = await service.call({ method: 'GET', url: path, headers: { 'accept-language': 'ru-RU,ru;q=0.9' } });
    expect(page.status).toBe(200);
    expect(String(page.headers['content-security-policy'])).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers.vary).toBe('Accept-Language, Cookie');
    expect(page.text).toContain('<h1>Чек продажи</h1>');
    expect(page.text).toContain('<dd>8600 00•• •••• 0007</dd>');
    expect(page.text).not.toMatch(/8600000000000007|<script(?![^>]*\bsrc=)|\sstyle=|<style/);
    expect(page.text).not.toMatch(/(src|href)="(https?:)?\/\/(?!ofd\.soliq\.uz)/);
    expect((await service.call({ method: 'GET', url: `${path}?lang=en` })).text).toContain('<h1>Sales receipt</h1>');
    const qr = await service.call({ method: 'GET', url: `${path}/qr.svg` });
    expect(qr.status).toBe(200);
    expect(qr.headers['content-type']).toBe('image/svg+xml');
    expect(qr.text).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>\n?$/s);

    const unknown = await service.call({ method: 'GET', url: '/receipts/rc_no_such_receipt', headers: { 'accept-language': 'en' } });
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('<h1 id="title">Link not found</h1>');
    expect(String(unknown.headers['content-security-policy'])).toContain("default-src 'none'");
    expect((await service.call({ method: 'GET', url: '/receipts/rc_no_such_receipt/qr.svg' })).status).toBe(404);
  });

  it('stops reloading a receipt still being registered after ten minutes, and asks the buyer to come back', async () => {
    const order = await paidOrder();
    const sale = await saleOf(order.id);
    await service.db.query("UPDATE receipts SET created_at = now() - interval '11 minutes' WHERE id = $1", [sale.id]);
    const page = await service.call({ method: 'GET', url: `${receiptPath(sale)}?lang=en` });
    const text = textsFor('en').receipt;
    expect(page.text).not.toContain('http-equiv="refresh"');
    expect(page.text).toContain(`<p class="fiscal-note pending" role="status">${text.pending} ${text.reloadLater}</p>`);
    expect(page.text).not.toContain('id="print"');
    await fiscalizeAll(service);
  });

  it('gives a refund its return receipt page, with the sum returned', async () => {
    const order = await paidOrder();
    const sale = await saleOf(order.id);
    const refund = await service.call({ method: 'POST', url: '/v1/refunds', key: merchant.test, idempotencyKey: idem(), body: { paymentIntent: sale.paymentIntent } });
    expect(refund.status, refund.text).toBe(201);
    const returned = (await service.call({ method: 'GET', url: `/v1/receipts/${refund.body.receipt}`, key: merchant.test })).body;
    const page = await service.call({ method: 'GET', url: `${receiptPath(returned)}?lang=en` });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Refund receipt</h1>');
    expect(page.text).toContain('<dt>Refunded</dt><dd>UZS 549,000.00</dd>');
    // A PENDING receipt has no QR code yet.
    expect((await service.call({ method: 'GET', url: `${receiptPath(returned)}/qr.svg` })).status).toBe(404);
  });
});
