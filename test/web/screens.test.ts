// Every screen of the hosted pages, in the three languages, on a phone and on a desktop: each is checked for its
// heading, what it says is paid, its way back to the shop, and its fit, and saved as a screenshot to look at.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAmount, textsFor, type Language } from '../../src/web/assets/i18n.js';
import { createBinding, submitCard, submitCode, TEST_CODE } from '../support/binding.js';
import { browserAvailable, DESKTOP_VIEWPORT, launchBrowser, openAsBuyer, PHONE_VIEWPORT, screenshot } from '../support/browser.js';
import { engine, idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { dataUrl, logoPng } from '../support/png.js';

let service: TestService;
let merchant: Merchant;
let browser: Browser;
let base: string;

const SHOP = 'https://shop.example.uz/orders/1042';
const AMOUNT = 48_750_000;
const LOCALES: Record<Language, string> = { uz: 'uz-UZ', ru: 'ru-RU', en: 'en-US' };
const VIEWPORTS = { phone: PHONE_VIEWPORT, desktop: DESKTOP_VIEWPORT };

interface Screen {
  name: string;
  path: string;
  /** The screen shows what is paid (an order's amount and merchant). */
  summary: boolean;
  /** The screen offers the way back to the shop. */
  back: boolean;
}

async function order(body: Record<string, unknown> = {}, key = merchant.test) {
  const reply = await service.call({
    method: 'POST',
    url: '/merchant/v1/orders',
    key,
    idempotencyKey: idem(),
    body: { amount: AMOUNT, description: 'Samarkand ceramics, 2 plates', returnUrl: SHOP, ...body },
  });
  return { id: reply.body.id as string, token: new URL(reply.body.paymentUrl).pathname.split('/pay/')[1]! };
}

/** Sessions in every state a buyer can meet, made through the public session calls. */
async function everyScreen(): Promise<Screen[]> {
  const pay = await order();
  const code = await order();
  await submitCard(service, code.token, { pan: '8600000000000007' });
  const paid = await order();
  await submitCard(service, paid.token, { pan: '8600000000000007' });
  await submitCode(service, paid.token, TEST_CODE);
  const refused = await order();
  await submitCard(service, refused.token, { pan: '8600000000000015' });
  await submitCode(service, refused.token, TEST_CODE);
  const processing = await order();
  await submitCard(service, processing.token, { pan: '8600000000000031' });
  await submitCode(service, processing.token, TEST_CODE);
  const failed = await order();
  await submitCard(service, failed.token, { pan: '8600000000000007' });
  for (let i = 0; i < 5; i++) await submitCode(service, failed.token, '000000');
  const canceled = await order();
  await service.call({ method: 'POST', url: `/merchant/v1/orders/${canceled.id}/cancel`, key: merchant.test });
  const expired = await order();
  await service.db.query('UPDATE checkout_sessions SET expires_at = now() WHERE token = $1', [expired.token]);
  const bind = await createBinding(service, merchant.test, { customerRef: 'buyer-7', returnUrl: SHOP });
  const bound = await createBinding(service, merchant.test, { customerRef: 'buyer-8', returnUrl: SHOP });
  await submitCard(service, bound.clientToken, { pan: '9860000000000000' });
  await submitCode(service, bound.clientToken, TEST_CODE);
  const closedShop = await service.createMerchant({ name: 'Kulol Uyi' });
  const suspended = await order({}, closedShop.test);
  await service.admin('POST', `/admin/v1/products/${closedShop.productId}/suspend`, { reason: 'Under review' });
  return [
    { name: 'pay', path: `/pay/${pay.token}`, summary: true, back: false },
    { name: 'code', path: `/pay/${code.token}`, summary: true, back: false },
    { name: 'paid', path: `/pay/${paid.token}`, summary: false, back: true },
    { name: 'refused', path: `/pay/${refused.token}`, summary: true, back: true },
    { name: 'processing', path: `/pay/${processing.token}`, summary: true, back: false },
    { name: 'failed', path: `/pay/${failed.token}`, summary: true, back: true },
    { name: 'canceled', path: `/pay/${canceled.token}`, summary: true, back: true },
    { name: 'expired', path: `/pay/${expired.token}`, summary: true, back: true },
    { name: 'suspended', path: `/pay/${suspended.token}`, summary: true, back: true },
    { name: 'notFound', path: '/pay/cs_no_such_link', summary: false, back: false },
    { name: 'bind', path: `/bind/${bind.clientToken}`, summary: false, back: false },
    { name: 'done', path: `/bind/${bound.clientToken}`, summary: false, back: true },
  ];
}

/** Lines the text of `selector` takes (by its text's line boxes). */
const linesOf = (page: Page, selector: string) =>
  page.locator(selector).evaluate((node) => {
    const range = document.createRange();
    range.selectNodeContents(node);
    return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
  });

describe.runIf(browserAvailable())('every hosted screen, in three languages, on a phone and a desktop', () => {
  beforeAll(async () => {
    service = await startService();
    merchant = await service.createMerchant({ name: 'Kulol Uyi' });
    base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('heads each screen by its state, shows what is paid, offers the way back, and fits', async () => {
    const screens = await everyScreen();
    for (const [language, locale] of Object.entries(LOCALES) as [Language, string][]) {
      const texts = textsFor(language) as unknown as Record<string, string>;
      for (const [device, viewport] of Object.entries(VIEWPORTS)) {
        // One tab per language and device, going from screen to screen as a buyer's browser would: a new tab costs a
        // renderer process each time, most of what a screen took.
        const { page, problems } = await openAsBuyer(browser, 'about:blank', locale, { viewport });
        for (const screen of screens) {
          const label = `${screen.name} ${language} ${device}`;
          const problemsBefore = problems.length;
          await page.clock.resume();
          await page.goto(base + screen.path);
          // The paid page would return to the shop after a while: keep it still for its picture.
          await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1_000);
          await expect.poll(() => page.locator('h1').textContent(), { message: label }).toBe(texts[`${screen.name}Title`]);
          expect(await page.locator('html').getAttribute('lang'), label).toBe(language);
          if (screen.summary) {
            expect(await page.locator('#amount').textContent(), label).toBe(formatAmount(AMOUNT, language));
            expect(await page.locator('#merchant').textContent(), label).toBe(textsFor(language).forMerchant('Kulol Uyi'));
          }
          expect(await page.getByRole('link', { name: texts.backToShop }).count(), label).toBe(screen.back ? 1 : 0);
          // Nothing runs off the side of the screen.
          expect(await page.evaluate(() => document.documentElement.scrollWidth), label).toBeLessThanOrEqual(viewport.width);
          // The script draws the form again as the session's state comes in: asked until a drawn one answers.
          if (screen.name === 'pay' || screen.name === 'bind') await expect.poll(() => linesOf(page, 'label[for="expiry"]'), { message: label }).toBe(1);
          await screenshot(page, `screens-${engine}-${screen.name}-${language}-${device}`);
          expect(problems.slice(problemsBefore), label).toEqual([]);
        }
        await page.context().close();
      }
    }
  }, 240_000);

  it('shows what is paid, and the outcome, before any script runs', async () => {
    const open = await order();
    const { page } = await openAsBuyer(browser, `${base}/pay/${open.token}`, 'ru-RU', { javaScriptEnabled: false });
    expect(await page.locator('h1').textContent()).toBe('Оплата заказа');
    expect(await page.locator('#merchant').textContent()).toBe('Для Kulol Uyi');
    expect(await page.locator('#amount').textContent()).toBe(formatAmount(AMOUNT, 'ru'));
    expect(await page.locator('.description').textContent()).toBe('Samarkand ceramics, 2 plates');
    expect(await page.locator('.time-left').textContent()).toMatch(/^На оплату осталось (29:5\d|30:00)$/);
    await screenshot(page, `screens-${engine}-first-html-ru`);
    await page.context().close();

    const expired = await order();
    await service.db.query('UPDATE checkout_sessions SET expires_at = now() WHERE token = $1', [expired.token]);
    const gone = await openAsBuyer(browser, `${base}/pay/${expired.token}`, 'en-US', { javaScriptEnabled: false });
    expect(await gone.page.locator('h1').textContent()).toBe('This link has expired');
    expect(await gone.page.locator('#amount').textContent()).toBe('UZS 487,500.00');
    expect(await gone.page.getByRole('link', { name: 'Back to the shop' }).getAttribute('href')).toBe(SHOP);
    await gone.page.context().close();

    const refused = await order();
    await submitCard(service, refused.token, { pan: '8600000000000015' });
    await submitCode(service, refused.token, TEST_CODE);
    const declined = await openAsBuyer(browser, `${base}/pay/${refused.token}`, 'uz-UZ', { javaScriptEnabled: false });
    expect(await declined.page.locator('h1').textContent()).toBe('Toʻlov rad etildi');
    expect(await declined.page.locator('.outcome p').first().textContent()).toBe('Kartada mablagʻ yetarli emas.');
    await declined.page.context().close();
  });

  it("wears the merchant's name, colour and logo, all served by Tolov", async () => {
    const branded = await service.createMerchant({ name: 'kulol-uyi-llc' });
    const logo = logoPng([124, 45, 18]);
    const reply = await service.admin('POST', `/admin/v1/products/${branded.productId}/branding`, {
      displayName: 'Kulol Uyi',
      brandColor: '#7C2D12',
      logo: dataUrl('image/png', logo),
    });
    expect(reply.status).toBe(200);
    const created = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: branded.test, idempotencyKey: idem(), body: { amount: AMOUNT, returnUrl: SHOP } });
    const url = created.body.paymentUrl.replace(service.config.checkoutUrl, base);
    for (const [device, viewport] of Object.entries(VIEWPORTS)) {
      const { page, problems } = await openAsBuyer(browser, url, 'uz-UZ', { viewport });
      const requested: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      await page.reload();
      await expect.poll(() => page.locator('h1').textContent()).toBe('Buyurtmani toʻlash');
      expect(await page.locator('#merchant').textContent()).toBe('Kulol Uyi uchun');
      const image = page.getByRole('img', { name: 'Kulol Uyi' });
      await expect.poll(() => image.evaluate((node) => (node as HTMLImageElement).naturalWidth)).toBe(150);
      // A button the script has just drawn again has no style until it is in the page: asked until it is.
      await expect.poll(() => page.getByRole('button', { name: 'Davom etish' }).evaluate((node) => getComputedStyle(node).backgroundColor)).toBe('rgb(124, 45, 18)');
      // The logo beside the language buttons fits a phone's width.
      expect(await page.evaluate(() => document.documentElement.scrollWidth), device).toBeLessThanOrEqual(viewport.width);
      expect(requested.every((address) => address.startsWith(base)), requested.join(' ')).toBe(true);
      await screenshot(page, `screens-${engine}-branded-${device}`);
      expect(problems).toEqual([]);
      await page.context().close();
    }
  });
});
