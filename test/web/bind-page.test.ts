import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBinding } from '../support/binding.js';
import { browserAvailable, launchBrowser, openAsBuyer, screenshot } from '../support/browser.js';
import { engine, startService, type Merchant, type TestService } from '../support/harness.js';

let service: TestService;
let merchant: Merchant;
let browser: Browser;
let base: string;

describe.runIf(browserAvailable())('the hosted binding page, in Chromium', () => {
  beforeAll(async () => {
    service = await startService();
    merchant = await service.createMerchant({ name: 'Korzinka' });
    base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  const shot = (page: Page, name: string) => screenshot(page, `bind-${engine}-${name}`);

  async function openPage(returnUrl?: string) {
    const binding = await createBinding(service, merchant.test, returnUrl ? { returnUrl, customerRef: 'buyer-1' } : {});
    const { page, problems } = await openAsBuyer(browser, `${base}/bind/${binding.clientToken}`);
    return { binding, page, problems };
  }

  it('lets a buyer bind a card: mistype the code, resend, finish, and return to the shop', async () => {
    const { binding, page, problems } = await openPage(`${base}/healthz?from=binding`);

    // Uzbek by default, with the merchant's name.
    await expect.poll(() => page.locator('h1').textContent()).toBe('Kartani ulash');
    expect(await page.getAttribute('html', 'lang')).toBe('uz');
    await expect.poll(() => page.locator('#merchant').textContent()).toBe('Korzinka uchun');
    await shot(page, '1-card-uz');

    // Switch to English and fill the form as a buyer would, autofill attributes included.
    await page.getByRole('button', { name: 'English' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Link your card');
    expect(await page.locator('.consent').textContent()).toBe(
      'By saving the card you allow Korzinka to charge it for your future purchases. You can ask the shop to remove it at any time.',
    );
    expect(await page.getAttribute('#pan', 'autocomplete')).toBe('cc-number');
    expect(await page.getAttribute('#expiry', 'autocomplete')).toBe('cc-exp');
    expect(await page.getAttribute('#phone', 'autocomplete')).toBe('tel');
    await page.getByLabel('Card number').pressSequentially('8600000000000007');
    expect(await page.inputValue('#pan')).toBe('8600 0000 0000 0007');
    expect(await page.getAttribute('img.network', 'alt')).toBe('Uzcard');
    await page.getByLabel('Expiry date').pressSequentially('1230');
    expect(await page.inputValue('#expiry')).toBe('12/30');
    await page.getByLabel('Phone number linked to the card').fill('998901234567');
    // The page's own +998 stands before the field: the code in the number given is not kept twice.
    expect(await page.inputValue('#phone')).toBe('90 123 45 67');
    await shot(page, '2-card-filled-en');
    await page.getByRole('button', { name: 'Continue' }).click();

    // The code step.
    await expect.poll(() => page.locator('h1').textContent()).toBe('Enter the SMS code');
    expect(await page.locator('.lead').textContent()).toContain('Uzcard •••• 0007');
    expect(await page.getAttribute('#code', 'autocomplete')).toBe('one-time-code');
    const countdown = page.getByRole('button', { name: /new code in \d+ s/ });
    expect(await countdown.isDisabled()).toBe(true);
    // The number keeps its unit on its line.
    expect(await countdown.textContent()).toMatch(/new code in \d+\u00a0s$/);

    await page.getByLabel('SMS code').fill('123456');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => page.locator('#code-error').textContent()).toBe('The code is wrong');
    expect(await page.locator('.hint').last().textContent()).toBe('4 attempts left.');
    await shot(page, '3-wrong-code');

    // The resend countdown: let the server's cooldown pass and jump the page's clock past it.
    await service.db.query("UPDATE checkout_sessions SET code_sent_at = now() - interval '1 minute' WHERE token = $1", [binding.clientToken]);
    await page.clock.fastForward(31_000);
    const resend = page.getByRole('button', { name: 'Send the code again' });
    await expect.poll(() => resend.isEnabled()).toBe(true);
    await resend.click();
    await expect.poll(() => page.locator('.notice.info').textContent()).toBe('A new code is on its way.');
    await shot(page, '4-resent');

    await page.getByLabel('SMS code').fill('111111');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Card linked');
    await shot(page, '5-done');
    await page.clock.fastForward(4_500);
    await page.waitForURL(`${base}/healthz?from=binding`);

    const read = await service.call({ method: 'GET', url: `/subscribe/v1/card_bindings/${binding.id}`, key: merchant.test });
    expect(read.body).toMatchObject({ status: 'COMPLETED', card: expect.stringMatching(/^card_/) });
    expect(problems).toEqual([]);
  });

  it('shows a refused card inline and checks the number before sending it', async () => {
    const { page, problems } = await openPage();
    await page.getByRole('button', { name: 'Русский' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Привязка карты');

    await page.getByLabel('Номер карты').pressSequentially('8600000000000008');
    await page.getByLabel('Срок действия').pressSequentially('1230');
    await page.getByRole('button', { name: 'Продолжить' }).click();
    await expect.poll(() => page.locator('#pan-error').textContent()).toBe('В номере карты ошибка');
    // A typo caught on the page uses no attempt: the attempts left are told only after the bank refuses a card.
    expect(await page.getByText(/Можно ввести карту/).count()).toBe(0);

    await page.getByLabel('Номер карты').fill('');
    await page.getByLabel('Номер карты').pressSequentially('8600000000000023');
    await page.getByLabel('Телефон, привязанный к карте').fill('998 90 123 45 67');
    await page.getByRole('button', { name: 'Продолжить' }).click();
    await expect.poll(() => page.locator('.notice.error').textContent()).toBe('Банк не принял эту карту: она неактивна или заблокирована');
    expect(await page.locator('.hint').last().textContent()).toBe('Можно ввести карту ещё 2 раза.');
    await shot(page, '6-refused-ru');
    // The language choice is remembered on the next visit.
    await page.reload();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Привязка карты');
    expect(problems).toEqual([]);
  });

  it('explains an unknown or expired link', async () => {
    const context = await browser.newContext({ locale: 'uz-UZ' });
    context.setDefaultTimeout(5_000);
    const page = await context.newPage();
    const response = await page.goto(`${base}/bind/cbs_unknown000000000000000000000000000000000`);
    expect(response?.status()).toBe(404);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Havola topilmadi');

    const expired = await createBinding(service, merchant.test);
    await service.db.query("UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE token = $1", [expired.clientToken]);
    await page.goto(`${base}/bind/${expired.clientToken}?lang=en`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('This link has expired');
    await shot(page, '7-expired-en');
  });
});

describe('the hosted page over HTTP', () => {
  it('is served with a strict Content-Security-Policy and no referrer', async () => {
    const local = await startService();
    try {
      const shop = await local.createMerchant();
      const binding = await createBinding(local, shop.test);
      const reply = await local.call({ method: 'GET', url: `/bind/${binding.clientToken}` });
      expect(reply.status).toBe(200);
      expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
      const csp = String(reply.headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
      expect(reply.headers['referrer-policy']).toBe('no-referrer');
      expect(reply.text).not.toContain(binding.clientToken);
      expect(reply.text).not.toMatch(/<script>|style=|sk_(test|live)_/);
      for (const asset of ['checkout.js', 'capture.js', 'i18n.js', 'checkout.css', 'uzcard.svg', 'humo.svg', 'card.svg', 'favicon.svg']) {
        expect((await local.call({ method: 'GET', url: `/assets/${asset}` })).status).toBe(200);
      }
      expect((await local.call({ method: 'GET', url: '/assets/..%2Fpages.js' })).status).toBe(404);
      expect((await local.call({ method: 'GET', url: '/assets/missing.js' })).status).toBe(404);
    } finally {
      await local.stop();
    }
  });
});
