// The whole activation in Chromium, as the people involved do it: the merchant's owner sends the request, an operator
// logs in to the console for the first time (setting up the second factor it requires), reviews and approves it; the
// owner switches to live mode, makes a live key and takes a live payment at the bank simulator. Then every console page,
// on a laptop and on a 390 px phone in each language, with screenshots.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeNow } from '../../src/modules/accounts/second-factor.js';
import { MESSAGES, type Lang } from '../../src/web/dashboard/i18n.js';
import { SESSION_COOKIE } from '../../src/web/dashboard/context.js';
import { browserAvailable, launchBrowser, openWatched, screenshot } from '../support/browser.js';
import { engine, idem, type TestService } from '../support/harness.js';
import { bindLiveCard, startLive, type Live } from '../support/live.js';
import { receiptFor } from '../support/receipts.js';
import { freshCode, ownerWithSecondFactor, SIGN_UP_PASSWORD, uniqueEmail } from '../dashboard/client.js';
import { PASSWORD } from './client.js';

const { en } = MESSAGES;
const LOCALES: Record<Lang, string> = { uz: 'uz-UZ', ru: 'ru-RU', en: 'en-US' };

describe.runIf(browserAvailable())('the operator console, in Chromium', () => {
  let live: Live;
  let service: TestService;
  let browser: Browser;
  let base: string;
  const operatorEmail = uniqueEmail('aziza');
  let seed = '';

  beforeAll(async () => {
    live = await startLive();
    service = live.service;
    base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
    const created = await service.admin('POST', '/admin/v1/operators', { email: operatorEmail, password: PASSWORD, role: 'admin' });
    expect(created.status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  const shot = (page: Page, name: string) => screenshot(page, `operator-${engine}-${name}`);
  const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  /** Logs in at the console: the password, then the code of the app's next step. */
  async function logIn(page: Page, t = en): Promise<void> {
    await page.goto(`${base}/operator/login`);
    await page.getByLabel(t.email).fill(operatorEmail);
    await page.getByLabel(t.password).fill(PASSWORD);
    await page.getByRole('button', { name: t.logIn }).click();
    await page.waitForURL('**/operator/login/verify');
    await service.db.query('UPDATE users SET totp_last_step = NULL WHERE email = $1', [operatorEmail]);
    await page.getByLabel(t.authenticationCode).fill(codeNow(seed));
    await page.getByRole('button', { name: t.verify }).click();
    await page.waitForURL('**/operator/activations');
  }

  it('the whole way: the request, the first log-in with its second factor, approval, live mode, a live key and a live payment', async () => {
    // The owner sends the request.
    const owner = await ownerWithSecondFactor(service, 'golive');
    const merchant = await openWatched(browser, base, { width: 1280, locale: 'en-US', cookies: [{ name: SESSION_COOKIE, value: owner.client.cookies.get(SESSION_COOKIE)! }] });
    await merchant.page.goto(`${base}/dashboard/activation`);
    const fields = {
      legalName: '«Chorsu Market» MChJ',
      tin: '301234567',
      legalAddress: 'Toshkent sh., Chilonzor tumani, Bunyodkor koʻchasi, 12-uy',
      website: 'https://t.me/chorsumarket',
      bankMfo: '00440',
      accountNumber: '20208000505368522001',
    };
    for (const [name, value] of Object.entries(fields)) await merchant.page.locator(`#activation-${name}`).fill(value);
    await merchant.page.locator('#activation-category').selectOption('retail');
    await merchant.page.locator('#activation-code').fill(await freshCode(service, owner));
    await merchant.page.locator('#activation-form-title ~ button[type="submit"]').click();
    await merchant.page.waitForURL('**/dashboard/activation?done=submitted');

    // The operator's first log-in: the console opens nothing before the second factor is set up.
    const console = await openWatched(browser, base, { width: 1280, locale: 'en-US' });
    const page = console.page;
    await page.goto(`${base}/operator/activations`);
    expect(new URL(page.url()).pathname).toBe('/operator/login');
    await shot(page, 'login');
    await page.getByLabel(en.email).fill(operatorEmail);
    await page.getByLabel(en.password).fill(PASSWORD);
    await page.getByRole('button', { name: en.logIn }).click();
    await page.waitForURL('**/operator/second-factor');
    await shot(page, 'second-factor-setup');
    seed = (await page.locator('#seed').textContent())!;
    await page.getByLabel(en.authenticationCode).fill(codeNow(seed));
    await page.getByRole('button', { name: en.turnOnSecondFactor }).click();
    await expect.poll(() => page.locator('#recovery-codes li').count()).toBe(10);
    await shot(page, 'second-factor-done');
    await page.getByRole('link', { name: en.opContinue }).click();
    await page.waitForURL('**/operator/activations');
    await shot(page, 'activations');

    // Review and approve.
    await page.getByRole('link', { name: fields.legalName }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain('Chorsu');
    await shot(page, 'activation-review');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: en.opReviewApprove }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toBe(en.opReviewApproved);
    await shot(page, 'activation-approved');

    // The owner goes live, makes a live key and takes a live payment at the bank simulator.
    await merchant.page.reload();
    await merchant.page.locator('.next-steps').getByRole('button', { name: en.switchToLive }).click();
    await expect.poll(() => merchant.page.locator('.mode-badge').textContent()).toBe(en.liveMode);
    await merchant.page.locator('.next-steps').getByRole('link', { name: en.navApiKeys }).click();
    // A live key is made after the owner's password.
    await merchant.page.getByLabel(en.passwordForLiveKey).fill(SIGN_UP_PASSWORD);
    await merchant.page.getByRole('button', { name: en.createKey }).click();
    const liveKey = (await merchant.page.locator('#new-key').textContent())!;
    expect(liveKey).toMatch(/^sk_live_/);
    const productId = (await service.admin('GET', '/admin/v1/activations?status=approved&limit=100')).body.data[0].product as string;
    const card = await bindLiveCard({ ...live, merchant: { productId, test: '', live: liveKey } }, '8600000000000007');
    const paid = await service.call({ method: 'POST', url: '/subscribe/v1/charges', key: liveKey, idempotencyKey: idem(), body: { amount: 1_500_000, card, receipt: receiptFor(1_500_000) } });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.body).toMatchObject({ status: 'SUCCEEDED', livemode: true });

    // The console finds that payment, and shows every page.
    await page.getByRole('link', { name: en.navOpSearch }).click();
    await shot(page, 'search');
    await page.getByLabel(en.supObjectId).fill(paid.body.id);
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/operator/search/${paid.body.id}`);
    expect(await page.getByText(paid.body.id).count()).toBeGreaterThan(0);
    await shot(page, 'search-payment');
    for (const [name, label] of [['products', en.navOpProducts], ['checks', en.navOpChecks], ['audit', en.navOpAudit], ['operators', en.navOpOperators]] as const) {
      await page.getByRole('link', { name: label, exact: true }).click();
      await page.waitForURL(`**/operator/${name}`);
      await shot(page, name);
    }
    await page.goto(`${base}/operator/products/${productId}`);
    await shot(page, 'product');
    expect(console.problems).toEqual([]);
    expect(merchant.problems).toEqual([]);
    await console.context.close();
    await merchant.context.close();
  }, 90_000);

  it.each(['uz', 'ru', 'en'] as const)('fits a 390 px phone in %s, and is used by keyboard', async (lang) => {
    const t = MESSAGES[lang];
    const { context, page, problems } = await openWatched(browser, base, { width: 390, locale: LOCALES[lang], cookies: [{ name: 'tolov_lang', value: lang }] });
    await logIn(page, t);
    for (const path of ['activations', 'products', 'search', 'checks', 'audit', 'operators']) {
      await page.goto(`${base}/operator/${path}`);
      expect(await overflow(page), `${path} is wider than the phone`).toBeLessThanOrEqual(0);
      await shot(page, `phone-${lang}-${path}`);
    }
    // The sections are reached by keyboard alone.
    await page.goto(`${base}/operator/activations`);
    await page.locator('nav.sections a').first().focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('href'))).toBe('/operator/products');
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});
