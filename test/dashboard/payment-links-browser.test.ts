// Payment links in the dashboard, in Chromium: a merchant makes one with a fiscal line and copies its address, a buyer
// opens it on a 390 px phone and pays with a test card, and the payment shows under the link; the link is turned off
// (confirmed first) and its page tells buyers so; the list, the form with its mistakes and the link's page fit a phone
// in Uzbek, Russian and English. Screenshots: test/artifacts/dashboard-link-*.png.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/web/dashboard/context.js';
import { browserAvailable, launchBrowser, openWatched, screenshot } from '../support/browser.js';
import { startService, type TestService } from '../support/harness.js';
import { DashboardClient, uniqueEmail } from './client.js';

const PHONE_WIDTH = 390;
/** An item code the test fiscal module signs (any 17 digits but zeros). */
const ITEM_CODE = '10399001001000000';

let service: TestService;
let browser: Browser;
let base: string;
let owner: DashboardClient;
let session: string;

const shot = (page: Page, name: string) => screenshot(page, `dashboard-link-${name}`);
const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

/** The merchant's dashboard, signed in, at `width` in `locale`; its clipboard may be written and read. */
async function dashboard(width: number, locale: string): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const opened = await openWatched(browser, base, { width, locale, cookies: [{ name: SESSION_COOKIE, value: session }] });
  await opened.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  return opened;
}

/** The link's address as this test's server answers it (the service names it under its configured public address). */
const local = (url: string) => url.replace(service.config.checkoutUrl, base);

/** Pays the hosted page the buyer is on with the test card that succeeds, in English. */
async function payWithTestCard(page: Page, amount: string): Promise<void> {
  await page.waitForURL(/\/pay\/cs_/);
  await page.getByLabel('Card number').pressSequentially('8600000000000007');
  await page.getByLabel('Expiry date').pressSequentially('1230');
  await page.getByLabel('Phone number linked to the card').fill('998901234567');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByLabel('SMS code').fill('111111');
  await page.getByRole('button', { name: `Pay ${amount}` }).click();
  await expect.poll(() => page.locator('h1').textContent()).toBe('Payment received');
}

describe.runIf(browserAvailable())('payment links in the dashboard, in Chromium', () => {
  beforeAll(async () => {
    service = await startService();
    base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
    owner = new DashboardClient(service);
    await owner.signUp(uniqueEmail(), undefined, 'Quritilgan Mevalar');
    session = owner.cookies.get(SESSION_COOKIE)!;
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('makes a link with a fiscal line, which a buyer on a phone pays with a test card, and shows the payment under it', async () => {
    const merchant = await dashboard(1280, 'en-US');
    const { page } = merchant;
    await page.goto(`${base}/dashboard/payment-links`);
    expect(await page.getByText('Nothing matches in this mode.').isVisible()).toBe(true);
    await page.getByRole('link', { name: 'New payment link' }).click();
    await page.getByLabel('Description').fill('Dried apricots, 2 kg');
    await page.getByLabel('Amount, UZS').fill('150 000');
    await page.getByLabel('Quantity available').fill('20');
    await page.getByText('Fiscal receipt lines (optional)').click();
    const line = page.getByRole('group', { name: 'Line 1' });
    await line.getByLabel('Item name').fill('Dried apricots');
    await line.getByLabel('IKPU code').fill(ITEM_CODE);
    await line.getByLabel('Package code').fill('1505709');
    await line.getByLabel('Quantity').fill('2');
    await line.getByLabel('Price of one, UZS').fill('75,000');
    await shot(page, 'new-en');
    await page.getByRole('button', { name: 'Create payment link' }).click();

    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toMatch(/^Payment link plink_\w+$/);
    expect(await page.getByRole('status').textContent()).toBe('The payment link is made: share it.');
    const url = (await page.locator('#link-url').textContent())!;
    expect(url).toMatch(/\/l\/[0-9A-Za-z]{10}$/);
    const qr = page.getByRole('img', { name: 'QR code of the link' });
    await expect.poll(() => qr.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth)).toBeGreaterThan(0);
    const slug = url.slice(-10);
    expect(await page.getByRole('link', { name: 'Download QR (SVG)' }).getAttribute('href')).toBe(`/l/${slug}/qr.svg?download`);
    expect(await page.getByRole('link', { name: 'Download QR (PNG, to print)' }).getAttribute('href')).toBe(`/l/${slug}/qr.png?download`);
    expect(await page.getByRole('link', { name: 'Share to Telegram' }).getAttribute('href')).toBe(
      `https://t.me/share/url?url=${encodeURIComponent(url)}&text=Dried%20apricots%2C%202%20kg`,
    );
    await page.getByRole('button', { name: 'Copy' }).click();
    // The page writes the clipboard once the browser has granted it, after the click.
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    expect(await page.locator('table.receipt-lines tbody tr').first().textContent()).toContain('Dried apricots');
    expect(await page.getByText('No buyer has pressed Pay on this link yet.').isVisible()).toBe(true);
    await shot(page, 'detail-en');

    const buyer = await openWatched(browser, base, { width: PHONE_WIDTH, locale: 'en-US' });
    await buyer.page.goto(local(url));
    expect(await overflow(buyer.page)).toBeLessThanOrEqual(0);
    await shot(buyer.page, 'buyer-phone');
    await buyer.page.getByRole('button', { name: 'Pay UZS 150,000.00' }).click();
    await payWithTestCard(buyer.page, 'UZS 150,000.00');
    await shot(buyer.page, 'buyer-paid-phone');

    await page.reload();
    const row = page.locator('tbody tr', { hasText: 'Paid' });
    expect(await row.locator('td').nth(1).textContent()).toBe('150,000.00 UZS');
    const payment = (await row.locator('a[href^="/dashboard/payments/pi_"]').textContent())!;
    await shot(page, 'paid-en');
    await row.locator('a[href^="/dashboard/orders/ord_"]').click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toMatch(/^Order ord_/);
    await page.locator('.fields').getByRole('link', { name: payment }).waitFor();
    await page.locator('.fields').getByRole('link', { name: /^plink_/ }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toMatch(/^Payment link plink_/);
    expect([...merchant.problems, ...buyer.problems]).toEqual([]);
    await merchant.context.close();
    await buyer.context.close();
  });

  it('turns a link off once confirmed, after which buyers are told so, and on again', async () => {
    const merchant = await dashboard(PHONE_WIDTH, 'ru-RU');
    const { page } = merchant;
    await page.goto(`${base}/dashboard/payment-links/new`);
    await page.getByLabel('Описание').fill('Пожертвование школьной библиотеке');
    await page.getByLabel('Сумму вводит покупатель').check();
    await page.getByLabel('Не меньше, сум').fill('5 000');
    await page.getByRole('button', { name: 'Создать платёжную ссылку' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toMatch(/^Платёжная ссылка plink_/);
    const url = (await page.locator('#link-url').textContent())!;

    // Dismissed, nothing changes; accepted, the link is off.
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: 'Отключить ссылку' }).click();
    expect(await page.locator('.fields .status').textContent()).toBe('Активна');
    page.once('dialog', (dialog) => {
      expect(dialog.message()).toMatch(/^Отключить ссылку\?/);
      void dialog.accept();
    });
    await page.getByRole('button', { name: 'Отключить ссылку' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Ссылка отключена: новые заказы по ней не создаются.');
    expect(await page.locator('.fields .status').textContent()).toBe('Отключена');
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await shot(page, 'off-phone-ru');

    const buyer = await openWatched(browser, base, { width: PHONE_WIDTH, locale: 'ru-RU' });
    await buyer.page.goto(local(url));
    expect(await buyer.page.locator('h1').textContent()).toBe('Ссылка отключена');

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Снова включить ссылку' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Ссылка снова включена: покупатели могут платить по ней.');
    await buyer.page.reload();
    expect(await buyer.page.getByLabel('Сумма, сум').isVisible()).toBe(true);
    expect([...merchant.problems, ...buyer.problems]).toEqual([]);
    await merchant.context.close();
    await buyer.context.close();
  });

  it('lists links on a laptop, each with its price or the buyer’s bounds, and filters the turned-off ones', async () => {
    const made = async (fields: Record<string, string>) => {
      const answer = await owner.post('/dashboard/payment-links', fields);
      expect(answer.status, answer.html.slice(0, 500)).toBe(303);
      return answer.location!.split('/').pop()!.split('?')[0]!;
    };
    await made({ description: 'Xayriya: maktab kutubxonasi uchun kitoblar', pricing: 'chosen', amountMin: '5 000', amountMax: '750 000' });
    const off = await made({ description: 'Konsert chiptasi, 12-dekabr, Turkiston saroyi', amount: '250000', quantityMax: '300' });
    expect((await owner.post(`/dashboard/payment-links/${off}/deactivate`, {})).status).toBe(303);

    const { context, page, problems } = await dashboard(1280, 'en-US');
    await page.goto(`${base}/dashboard/payment-links`);
    expect(await page.locator('tbody tr', { hasText: 'Xayriya' }).locator('td').nth(1).textContent()).toBe('Buyer chooses5,000.00\u00a0UZS to 750,000.00\u00a0UZS');
    await shot(page, 'list-en');
    await page.getByLabel('Status').selectOption('INACTIVE');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    expect(await page.locator('tbody tr .status').textContent()).toBe('Turned off');
    expect(problems).toEqual([]);
    await context.close();
  });

  it.each([
    ['uz', 'uz-UZ', 'Yangi toʻlov havolasi', 'Toʻlov havolasini yaratish'],
    ['ru', 'ru-RU', 'Новая платёжная ссылка', 'Создать платёжную ссылку'],
    ['en', 'en-US', 'New payment link', 'Create payment link'],
  ])('fits a 390 px phone in %s: the list, the form with its mistakes, and a link’s page', async (lang, locale, newLink, create) => {
    const { context, page, problems } = await dashboard(PHONE_WIDTH, locale);
    await page.goto(`${base}/dashboard/payment-links`);
    await page.getByRole('link', { name: newLink }).click();
    // A bound the wrong way round and a line that adds up to less than the amount: each said at its place.
    await page.locator('#link-description').fill('Non va somsa');
    await page.locator('#link-amount').fill('48000');
    await page.locator('details.link-receipt > summary').click();
    await page.locator('#link-line0-title').fill('Tandir non');
    await page.locator('#link-line0-code').fill('1234');
    await page.locator('#link-line0-packageCode').fill('1505709');
    await page.locator('#link-line0-price').fill('4 000');
    await page.getByRole('button', { name: create }).click();
    await page.locator('p.field-error').first().waitFor();
    expect(await page.locator('#link-line0-code').getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('link-line0-code');
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await shot(page, `form-refused-phone-${lang}`);

    await page.locator('#link-line0-code').fill(ITEM_CODE);
    await page.locator('#link-line0-count').fill('12');
    await page.getByRole('button', { name: create }).click();
    await page.locator('#link-url').waitFor();
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await shot(page, `detail-phone-${lang}`);

    await page.goto(`${base}/dashboard/payment-links`);
    expect(await page.locator('tbody tr').count()).toBeGreaterThan(0);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await shot(page, `list-phone-${lang}`);
    expect(problems).toEqual([]);
    await context.close();
  });
});
