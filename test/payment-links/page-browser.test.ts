// A buyer on a phone (390 px) opens a shop's payment link, in each of the three languages, by keyboard: types an
// amount, is told when it is out of range, pays on the hosted page, and the payment shows under the link. A link turned
// off and one sold out say so. Screenshots of each state are in test/artifacts/link-*.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, launchBrowser, openWatched, screenshot } from '../support/browser.js';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';

const NBSP = '\u00a0';
const PHONE_WIDTH = 390;

let service: TestService;
let shop: Merchant;
let browser: Browser;
let base: string;

async function createLink(body: Record<string, unknown>): Promise<{ id: string; url: string }> {
  const reply = await service.call({ method: 'POST', url: '/v1/payment_links', key: shop.test, idempotencyKey: idem(), body });
  if (reply.status !== 201) throw new Error(`link refused: ${reply.text}`);
  return { id: reply.body.id, url: reply.body.url.replace(service.config.checkoutUrl, base) };
}

async function openLink(url: string, locale: string): Promise<{ page: Page; problems: string[] }> {
  const { page, problems } = await openWatched(browser, base, { width: PHONE_WIDTH, locale });
  await page.goto(url);
  return { page, problems };
}

const shot = (page: Page, name: string) => screenshot(page, `link-${name}`);
const fitsThePhone = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

/** Tabs from the top of the page until `label`'s field has the focus, as a keyboard user gets there. */
async function tabTo(page: Page, label: string): Promise<void> {
  for (let presses = 0; presses < 10; presses++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.labels?.[0]?.textContent ?? null);
    if (focused === label) return;
  }
  throw new Error(`${label} was not reached by Tab`);
}

describe.runIf(browserAvailable())('a payment link, in Chromium on a phone', () => {
  beforeAll(async () => {
    service = await startService();
    shop = await service.createMerchant({ name: 'Samarqand Non' });
    base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it.each([
    ['uz', 'uz-UZ', `45${NBSP}000,00 soʻm toʻlash`],
    ['ru', 'ru-RU', `Оплатить 45${NBSP}000,00 сум`],
    ['en', 'en-US', 'Pay UZS 45,000.00'],
  ])('shows a fixed amount in %s, fitting the phone, with nothing from another host', async (lang, locale, button) => {
    const link = await createLink({ amount: 4_500_000, description: 'Tandir non, 10 dona' });
    const { page, problems } = await openLink(link.url, locale);
    expect(await page.locator('h1').textContent()).toBe('Tandir non, 10 dona');
    expect(await page.getByRole('button', { name: button }).isVisible()).toBe(true);
    expect(await fitsThePhone(page)).toBe(true);
    await shot(page, `fixed-${lang}`);
    expect(problems).toEqual([]);
  });

  it('takes an amount typed by keyboard, refuses one out of range, and the payment shows under the link', async () => {
    const link = await createLink({ description: 'Xayriya', amountMin: 500_000, amountMax: 50_000_000 });
    const { page, problems } = await openLink(`${link.url}?lang=en`, 'en-US');
    await tabTo(page, 'Amount, UZS');
    await page.keyboard.type('1 000 000');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Enter an amount from UZS 5,000.00 to UZS 500,000.00');
    expect(await page.getByLabel('Amount, UZS').inputValue()).toBe('1 000 000');
    // The refused field has the focus again, for the buyer to correct it.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('amount');
    expect(await fitsThePhone(page)).toBe(true);
    await shot(page, 'amount-refused-en');

    await page.getByLabel('Amount, UZS').fill('25 000,50');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/pay\/cs_/);
    await expect.poll(() => page.locator('#amount').textContent()).toBe('UZS 25,000.50');
    await page.getByLabel('Card number').pressSequentially('8600000000000007');
    await page.getByLabel('Expiry date').pressSequentially('1230');
    await page.getByLabel('Phone number linked to the card').fill('998901234567');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('SMS code').fill('111111');
    await page.getByRole('button', { name: 'Pay UZS 25,000.50' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Payment received');
    await shot(page, 'paid-en');

    const orders = (await service.call({ method: 'GET', url: `/merchant/v1/orders?paymentLink=${link.id}`, key: shop.test })).body.data;
    expect(orders).toMatchObject([{ amount: 2_500_050, status: 'PAID', paymentLink: link.id }]);
    expect(problems).toEqual([]);
  });

  it('says in Russian that a link is turned off, and in Uzbek that one is sold out', async () => {
    const off = await createLink({ amount: 100_000, description: 'Somsa' });
    await service.call({ method: 'POST', url: `/v1/payment_links/${off.id}`, key: shop.test, body: { active: false } });
    const turnedOff = await openLink(off.url, 'ru-RU');
    expect(await turnedOff.page.locator('h1').textContent()).toBe('Ссылка отключена');
    expect(await fitsThePhone(turnedOff.page)).toBe(true);
    await shot(turnedOff.page, 'off-ru');

    const ticket = await createLink({ amount: 100_000, description: 'Konsert chiptasi', quantityMax: 1 });
    const first = await openLink(ticket.url, 'uz-UZ');
    await first.page.getByRole('button', { name: /toʻlash$/ }).click();
    await first.page.waitForURL(/\/pay\/cs_/);
    const second = await openLink(ticket.url, 'uz-UZ');
    await second.page.getByRole('button', { name: /toʻlash$/ }).click();
    await expect.poll(() => second.page.locator('h1').textContent()).toBe('Hammasi sotilgan');
    await shot(second.page, 'sold-out-uz');
    expect([...turnedOff.problems, ...first.problems, ...second.problems]).toEqual([]);
  });
});
