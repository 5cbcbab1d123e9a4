import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBinding } from '../support/binding.js';
import { browserAvailable, launchBrowser, openAsBuyer, screenshot } from '../support/browser.js';
import { engine, idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { reconcileNow } from '../support/payments.js';

let service: TestService;
let merchant: Merchant;
let browser: Browser;
let base: string;
const NBSP = '\u00a0';

describe.runIf(browserAvailable())('the hosted payment page, in Chromium', () => {
  beforeAll(async () => {
    service = await startService();
    merchant = await service.createMerchant({ name: 'Chorsu Market' });
    base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  const shot = (page: Page, name: string) => screenshot(page, `pay-${engine}-${name}`);

  async function openOrder(body: Record<string, unknown> = {}, prepare?: (page: Page) => Promise<unknown>) {
    const reply = await service.call({
      method: 'POST',
      url: '/merchant/v1/orders',
      key: merchant.test,
      idempotencyKey: idem(),
      body: { amount: 1_500_000, description: 'Two kilos of apricots', returnUrl: `${base}/healthz?from=payment`, ...body },
    });
    const order = reply.body;
    const { page, problems } = await openAsBuyer(browser, order.paymentUrl.replace(service.config.checkoutUrl, base), 'uz-UZ', { prepare });
    return { order, page, problems };
  }

  async function enterCard(page: Page, pan: string, labels = { pan: 'Karta raqami', expiry: 'Amal qilish muddati', phone: 'Kartaga ulangan telefon raqami' }) {
    await page.getByLabel(labels.pan).pressSequentially(pan);
    await page.getByLabel(labels.expiry).pressSequentially('1230');
    await page.getByLabel(labels.phone).fill('998901234567');
  }

  const readOrder = async (id: string) => (await service.call({ method: 'GET', url: `/merchant/v1/orders/${id}`, key: merchant.test })).body;

  it('lets a buyer pay in Uzbek and returns them to the shop', async () => {
    const { order, page, problems } = await openOrder();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Buyurtmani toʻlash');
    expect(await page.locator('#merchant').textContent()).toBe('Chorsu Market uchun');
    expect(await page.locator('#amount').textContent()).toBe(`15${NBSP}000,00 soʻm`);
    expect(await page.locator('.description').textContent()).toBe('Two kilos of apricots');
    expect(await page.locator('.time-left').textContent()).toMatch(/^Toʻlash uchun (29|30):\d\d qoldi$/);
    expect(await page.locator('#save-card').count()).toBe(0);
    // Nothing has gone wrong yet: the attempts left are not worth the buyer's attention.
    expect(await page.getByText(/marta karta kiritish/).count()).toBe(0);
    // An order that cannot save the card asks no consent.
    expect(await page.locator('.consent').count()).toBe(0);
    await shot(page, '1-card-uz');

    await enterCard(page, '8600000000000007');
    await page.getByRole('button', { name: 'Davom etish' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('SMS-kodni kiriting');
    await page.getByLabel('SMS-kod').fill('111111');
    await shot(page, '2-code-uz');
    await page.getByRole('button', { name: `15${NBSP}000,00 soʻm toʻlash` }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Toʻlov qabul qilindi');
    const paid = await readOrder(order.id);
    const receipt = await page.getByRole('region', { name: 'Chek' }).locator('dt, dd').allTextContents();
    expect(receipt).toEqual([
      'Doʻkon', 'Chorsu Market',
      'Summa', `15${NBSP}000,00 soʻm`,
      'Karta', 'Uzcard •••• 0007',
      'Sana', expect.stringMatching(/^\d{1,2}-(yanvar|fevral|mart|aprel|may|iyun|iyul|avgust|sentabr|oktabr|noyabr|dekabr) \d{4}, \d\d:\d\d$/),
      'Toʻlov raqami', paid.paymentIntent,
    ]);
    await shot(page, '3-paid-uz');
    await page.clock.fastForward(4_500);
    await page.waitForURL(`${base}/healthz?from=payment`);
    expect(paid.status).toBe('PAID');
    expect(problems).toEqual([]);
  });

  it('shows a refusal with its reason, in the language the buyer switches to, and again after a reload', async () => {
    const { order, page, problems } = await openOrder();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Buyurtmani toʻlash');
    await enterCard(page, '8600000000000015');
    await page.getByRole('button', { name: 'Davom etish' }).click();
    await page.getByLabel('SMS-kod').fill('111111');
    await page.getByRole('button', { name: /toʻlash$/ }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Toʻlov rad etildi');
    expect(await page.locator('.outcome p').first().textContent()).toBe('Kartada mablagʻ yetarli emas.');
    await page.getByRole('button', { name: 'English' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Payment refused');
    expect(await page.locator('.outcome p').first().textContent()).toBe('There is not enough money on the card.');
    expect(await page.locator('#amount').textContent()).toBe('UZS 15,000.00');
    expect(await page.getByRole('link', { name: 'Back to the shop' }).getAttribute('href')).toBe(`${base}/healthz?from=payment`);
    await shot(page, '4-refused-en');
    await page.reload();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Payment refused');
    expect(await page.locator('.outcome p').first().textContent()).toBe('There is not enough money on the card.');
    expect((await readOrder(order.id)).status).toBe('FAILED');
    expect(problems).toEqual([]);
  });

  it('closes after the fifth wrong code and says why, also after a reload', async () => {
    const { order, page, problems } = await openOrder();
    await page.getByRole('button', { name: 'English' }).click();
    await enterCard(page, '8600000000000007', { pan: 'Card number', expiry: 'Expiry date', phone: "Phone number linked to the card" });
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Enter the SMS code');
    expect(await page.getByText(/left\.$/).count()).toBe(0);
    for (let i = 0; i < 5; i++) {
      await page.getByLabel('SMS code').fill('000000');
      await page.getByRole('button', { name: /^Pay/ }).click();
      if (i < 4) await expect.poll(() => page.locator('.hint').last().textContent()).toBe(`${4 - i} ${i === 3 ? 'attempt' : 'attempts'} left.`);
    }
    await expect.poll(() => page.locator('h1').textContent()).toBe('No attempts left');
    await page.reload();
    await expect.poll(() => page.locator('h1').textContent()).toBe('No attempts left');
    expect(await page.getByRole('link', { name: 'Back to the shop' }).getAttribute('href')).toBe(`${base}/healthz?from=payment`);
    await shot(page, '5-attempts-used-up-en');
    expect(await readOrder(order.id)).toMatchObject({ status: 'FAILED', failureCode: 'TOO_MANY_ATTEMPTS' });
    expect(problems).toEqual([]);
  });

  it('saves the card when the buyer asks (Russian)', async () => {
    const { order, page, problems } = await openOrder({ customerRef: 'buyer-42', amount: 99_990_050 });
    await page.getByRole('button', { name: 'Русский' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Оплата заказа');
    expect(await page.locator('#amount').textContent()).toBe(`999${NBSP}900,50 сум`);
    await enterCard(page, '8600000000000007', { pan: 'Номер карты', expiry: 'Срок действия', phone: 'Телефон, привязанный к карте' });
    await page.getByLabel('Сохранить карту для следующих покупок').check();
    // Consent names who may charge the card later; the page says what is kept, which is not the card number.
    expect(await page.locator('.consent').textContent()).toContain('разрешаете магазину «Chorsu Market» списывать с неё оплату');
    expect(await page.locator('#secure').textContent()).toBe(
      'Данные карты передаются напрямую в банк. Мы храним только токен банка и маскированный номер: полный номер карты и SMS-код не сохраняются.',
    );
    await shot(page, '5-save-card-ru');
    await page.getByRole('button', { name: 'Продолжить' }).click();
    await page.getByLabel('Код из SMS').fill('111111');
    await page.getByRole('button', { name: `Оплатить 999${NBSP}900,50 сум` }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Оплата прошла');
    expect(await page.locator('.outcome').textContent()).toContain('Карта Uzcard •••• 0007 сохранена для следующих покупок.');
    await shot(page, '6-paid-saved-ru');
    const read = await readOrder(order.id);
    expect(read).toMatchObject({ status: 'PAID', saveCard: true, savedCard: expect.stringMatching(/^card_/) });
    expect(problems).toEqual([]);
  });

  it('can be paid with the keyboard alone, in a sensible focus order', async () => {
    const { order, page } = await openOrder({ customerRef: 'keyboard-buyer' });
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('pan');
    await page.keyboard.type('8600000000000007');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('expiry');
    await page.keyboard.type('1230');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('phone');
    // The country code stands fixed before the field: the buyer types the rest.
    await page.keyboard.type('901234567');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('save-card');
    await page.keyboard.press('Space');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('code');
    await page.keyboard.type('111111');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('h1').textContent()).toBe('Toʻlov qabul qilindi');
    expect(await readOrder(order.id)).toMatchObject({ status: 'PAID', saveCard: true });
  });

  /** The phone the page sends with the card, read from its request to the public card call. */
  const phoneSent = (page: Page) =>
    page
      .waitForRequest((request) => request.method() === 'POST' && request.url().endsWith('/card'))
      .then((request) => request.postDataJSON().phone as string);

  it('sends the documented number once, typed key by key with its country code, and pays', async () => {
    const { order, page, problems } = await openOrder();
    await page.getByLabel('Karta raqami').pressSequentially('8600000000000007');
    await page.getByLabel('Amal qilish muddati').pressSequentially('1230');
    const phone = page.getByLabel('Kartaga ulangan telefon raqami');
    await phone.pressSequentially('998901234567');
    // The code typed again after the page's own +998 is dropped as the buyer types.
    expect(await phone.inputValue()).toBe('90 123 45 67');
    expect(await page.locator('.affixed .prefix').textContent()).toBe('+998');
    await shot(page, '10-phone-typed-uz');
    const sent = phoneSent(page);
    await page.getByRole('button', { name: 'Davom etish' }).click();
    expect(await sent).toBe('998901234567');
    await expect.poll(() => page.locator('h1').textContent()).toBe('SMS-kodni kiriting');
    await page.getByLabel('SMS-kod').fill('111111');
    await page.getByRole('button', { name: /toʻlash$/ }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Toʻlov qabul qilindi');
    expect((await readOrder(order.id)).status).toBe('PAID');
    expect(problems).toEqual([]);
  });

  it('takes a whole number pasted as people write it, and keeps the caret where the buyer edits', async () => {
    const { page, problems } = await openOrder();
    await page.getByRole('button', { name: 'Русский' }).click();
    await enterCard(page, '8600000000000007', { pan: 'Номер карты', expiry: 'Срок действия', phone: 'Телефон, привязанный к карте' });
    const phone = page.getByLabel('Телефон, привязанный к карте');
    await phone.fill('');
    await phone.focus();
    await page.keyboard.insertText('+998 (90) 123-45-67');
    expect(await phone.inputValue()).toBe('90 123 45 67');
    await phone.fill('');
    await page.keyboard.insertText('+998 90 123-45-67');
    expect(await phone.inputValue()).toBe('90 123 45 67');
    expect(await phone.evaluate((input: HTMLInputElement) => input.selectionStart)).toBe('90 123 45 67'.length);
    // A digit fixed in the middle: the caret stays after it, not thrown to the end.
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Delete');
    await page.keyboard.type('1');
    expect(await phone.inputValue()).toBe('91 123 45 67');
    expect(await phone.evaluate((input: HTMLInputElement) => input.selectionStart)).toBe(2);
    await page.keyboard.press('Backspace');
    await page.keyboard.type('0');
    await shot(page, '11-phone-pasted-ru');
    const sent = phoneSent(page);
    await page.getByRole('button', { name: 'Продолжить' }).click();
    expect(await sent).toBe('998901234567');
    await expect.poll(() => page.locator('h1').textContent()).toBe('Введите код из SMS');
    expect(problems).toEqual([]);
  });

  it('refuses a phone that is not an Uzbek mobile number before the bank sees it, in the buyer\'s language', async () => {
    const { page, problems } = await openOrder();
    const cardCalls: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/card')) cardCalls.push(request.url());
    });
    await page.getByLabel('Karta raqami').pressSequentially('8600000000000007');
    await page.getByLabel('Amal qilish muddati').pressSequentially('1230');
    await page.getByLabel('Kartaga ulangan telefon raqami').pressSequentially('90123456');
    await page.getByRole('button', { name: 'Davom etish' }).click();
    const refusals = {
      uz: ['Oʻzbekcha', 'Oʻzbekiston mobil raqamini kiriting: +998 kodidan keyin 9 ta raqam'],
      ru: ['Русский', 'Введите узбекский мобильный номер: 9 цифр после +998'],
      en: ['English', 'Enter an Uzbek mobile number: 9 digits after +998'],
    };
    for (const [language, [button, refusal]] of Object.entries(refusals)) {
      await page.getByRole('button', { name: button }).click();
      await expect.poll(() => page.locator('#phone-error').textContent(), { message: language }).toBe(refusal);
      expect(await page.locator('#phone').getAttribute('aria-invalid')).toBe('true');
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await shot(page, `12-phone-refused-${language}`);
    }
    expect(cardCalls).toEqual([]);
    expect(problems).toEqual([]);
  });

  /**
   * Opens an order whose page's first look at the session is answered with the state of that moment, but only once
   * `release` is called; `answered` settles when the page has that answer.
   */
  async function openWithFirstLookHeld() {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let delivered = () => {};
    const answered = new Promise<void>((resolve) => (delivered = resolve));
    const opened = await openOrder({}, (page) =>
      page.route(/\/checkout\/v1\/sessions\/[^/]+$/, async (route) => {
        if (route.request().method() !== 'GET') return route.fallback();
        const answer = await route.fetch();
        void held.then(() => route.fulfill({ response: answer })).then(delivered);
      }),
    );
    const deliver = async () => {
      release();
      await answered;
      await opened.page.waitForLoadState('networkidle');
    };
    return { ...opened, deliver };
  }

  it('keeps the newest step when an older answer about the session arrives late', async () => {
    const { order, page, problems, deliver } = await openWithFirstLookHeld();
    await enterCard(page, '8600000000000007');
    await page.getByRole('button', { name: 'Davom etish' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('code');
    // The card step, read before the card was sent, arrives now.
    await deliver();
    expect(await page.locator('h1').textContent()).toBe('SMS-kodni kiriting');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('code');
    await page.keyboard.type('111111');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('h1').textContent()).toBe('Toʻlov qabul qilindi');
    expect((await readOrder(order.id)).status).toBe('PAID');
    expect(problems).toEqual([]);
  });

  it('keeps what the buyer is typing, and where, when an answer draws the page again mid-number', async () => {
    const { page, problems, deliver } = await openWithFirstLookHeld();
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('pan');
    await page.keyboard.type('86000000');
    await deliver();
    await page.keyboard.type('00000007');
    expect(await page.locator('#pan').inputValue()).toBe('8600 0000 0000 0007');
    expect(problems).toEqual([]);
  });

  it('keeps the phone being typed, and its caret, when an answer draws the page again mid-number', async () => {
    const { page, problems, deliver } = await openWithFirstLookHeld();
    await page.locator('#phone').focus();
    await page.keyboard.type('9989012');
    await deliver();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('phone');
    await page.keyboard.type('34567');
    expect(await page.locator('#phone').inputValue()).toBe('90 123 45 67');
    expect(problems).toEqual([]);
  });

  it('waits for the bank when its answer is unclear, then shows the outcome', async () => {
    const { order, page } = await openOrder({ returnUrl: undefined });
    await page.getByRole('button', { name: 'English' }).click();
    await enterCard(page, '8600000000000031', { pan: 'Card number', expiry: 'Expiry date', phone: 'Phone number linked to the card' });
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('SMS code').fill('111111');
    await page.getByRole('button', { name: /^Pay / }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Your bank is confirming the payment');
    await shot(page, '7-processing-en');
    await reconcileNow(service);
    await page.clock.fastForward(3_500);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Payment received');
    expect(await page.locator('.outcome .hint').textContent()).toBe('You can close this page now.');
    expect((await readOrder(order.id)).status).toBe('PAID');
  });

  it("speaks the browser's language the first time: Russian for ru-RU, English for en-GB, Uzbek for any other; a choice made on the page wins", async () => {
    const reply = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: idem(), body: { amount: 100 } });
    const url = reply.body.paymentUrl.replace(service.config.checkoutUrl, base);
    for (const [locale, heading] of [['ru-RU', 'Оплата заказа'], ['en-GB', 'Pay for your order'], ['de-DE', 'Buyurtmani toʻlash'], ['uz-Latn-UZ', 'Buyurtmani toʻlash']] as const) {
      const { page, problems } = await openAsBuyer(browser, url, locale);
      await expect.poll(() => page.locator('h1').textContent(), { message: locale }).toBe(heading);
      if (locale === 'ru-RU') {
        await page.getByRole('button', { name: 'English' }).click();
        await page.reload();
        await expect.poll(() => page.locator('h1').textContent()).toBe('Pay for your order');
      }
      expect(problems).toEqual([]);
      await page.context().close();
    }
  });

  it('takes only its own languages from ?lang=, never a name every object inherits', async () => {
    const reply = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: idem(), body: { amount: 100 } });
    for (const lang of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const url = `${reply.body.paymentUrl.replace(service.config.checkoutUrl, base)}?lang=${lang}`;
      const { page, problems } = await openAsBuyer(browser, url);
      await expect.poll(() => page.locator('h1').textContent()).toBe('Buyurtmani toʻlash');
      expect(problems).toEqual([]);
      await page.context().close();
    }
  });

  it('tells the buyer the order was canceled or has expired', async () => {
    const canceled = await openOrder();
    await service.call({ method: 'POST', url: `/merchant/v1/orders/${canceled.order.id}/cancel`, key: merchant.test });
    await canceled.page.reload();
    await expect.poll(() => canceled.page.locator('h1').textContent()).toBe('Buyurtma bekor qilingan');
    expect(await canceled.page.getByRole('link', { name: 'Doʻkonga qaytish' }).getAttribute('href')).toBe(`${base}/healthz?from=payment`);
    await shot(canceled.page, '8-canceled-uz');

    const expiring = await openOrder();
    await expect.poll(() => expiring.page.locator('h1').textContent()).toBe('Buyurtmani toʻlash');
    await service.db.query("UPDATE orders SET expires_at = now() WHERE id = $1", [expiring.order.id]);
    await service.db.query("UPDATE checkout_sessions SET expires_at = now() WHERE order_id = $1", [expiring.order.id]);
    await expiring.page.clock.fastForward(31 * 60 * 1000);
    await expect.poll(() => expiring.page.locator('h1').textContent()).toBe('Havolaning muddati tugagan');
    expect(await expiring.page.getByRole('link', { name: 'Doʻkonga qaytish' }).getAttribute('href')).toBe(`${base}/healthz?from=payment`);
    await shot(expiring.page, '9-expired-uz');
    expect((await readOrder(expiring.order.id)).status).toBe('EXPIRED');
    // After a reload the session calls answer 410, and the page still says whom and how much the link was for.
    await expiring.page.reload();
    await expect.poll(() => expiring.page.locator('h1').textContent()).toBe('Havolaning muddati tugagan');
    expect(await expiring.page.locator('#merchant').textContent()).toBe('Chorsu Market uchun');
    expect(await expiring.page.locator('#amount').textContent()).toBe(`15${NBSP}000,00 soʻm`);
    expect(await expiring.page.getByRole('link', { name: 'Doʻkonga qaytish' }).count()).toBe(1);
  });
});

describe('the payment page over HTTP', () => {
  it('answers 404 for a binding token or an unknown one, and serves strict headers', async () => {
    const local = await startService();
    try {
      const shop = await local.createMerchant();
      const order = (await local.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: idem(), body: { amount: 100 } })).body;
      const token = order.paymentUrl.split('/pay/')[1];
      const page = await local.call({ method: 'GET', url: `/pay/${token}` });
      expect(page.status).toBe(200);
      expect(String(page.headers['content-security-policy'])).toContain("default-src 'none'");
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect(page.text).not.toMatch(/sk_(test|live)_/);
      const binding = await createBinding(local, shop.test);
      expect((await local.call({ method: 'GET', url: `/pay/${binding.clientToken}` })).status).toBe(404);
      expect((await local.call({ method: 'GET', url: `/bind/${token}` })).status).toBe(404);
      expect((await local.call({ method: 'GET', url: '/pay/cs_unknown' })).status).toBe(404);
    } finally {
      await local.stop();
    }
  });

  it('gives the page the shop\'s address, escaped, only for the session the link names', async () => {
    const local = await startService();
    try {
      const shop = await local.createMerchant();
      const returnUrl = "https://shop.uz/back?a=1&b='x'";
      const body = { amount: 100, returnUrl };
      const order = (await local.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: idem(), body })).body;
      const token = order.paymentUrl.split('/pay/')[1];
      const page = await local.call({ method: 'GET', url: `/pay/${token}` });
      expect(page.text).toContain('<main class="sheet" data-return-url="https://shop.uz/back?a=1&amp;b=&#39;x&#39;" data-session="');
      // A link of the other kind learns nothing of the session.
      const wrongKind = await local.call({ method: 'GET', url: `/bind/${token}` });
      expect(wrongKind.status).toBe(404);
      expect(wrongKind.text).toContain('<main class="sheet">');
    } finally {
      await local.stop();
    }
  });

  it('writes what is paid into the first HTML, in the language the browser asks for, a remembered choice, or ?lang=', async () => {
    const local = await startService();
    try {
      const shop = await local.createMerchant({ name: 'Chorsu Market' });
      const body = { amount: 1_500_000, description: 'Two kilos of <apricots>', returnUrl: 'https://shop.uz/back' };
      const order = (await local.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: idem(), body })).body;
      const path = new URL(order.paymentUrl).pathname;
      const open = (headers: Record<string, string>, query = '') => local.call({ method: 'GET', url: `${path}${query}`, headers });
      const heading = (text: string) => /<h1 id="title">([^<]*)<\/h1>/.exec(text)?.[1];
      const language = (text: string) => /<html lang="(\w+)">/.exec(text)?.[1];

      const russian = await open({ 'accept-language': 'ru-RU,ru;q=0.9,en;q=0.8' });
      expect(language(russian.text)).toBe('ru');
      expect(heading(russian.text)).toBe('Оплата заказа');
      expect(russian.text).toContain('<title>Оплата заказа · Tolov</title>');
      expect(russian.text).toContain('<p class="merchant" id="merchant">Для Chorsu Market</p>');
      expect(russian.text).toContain(`<p class="amount" id="amount">15${NBSP}000,00 сум</p>`);
      expect(russian.text).toContain('<p class="description">Two kilos of &lt;apricots&gt;</p>');
      expect(russian.text).toMatch(/<p class="time-left" role="timer">На оплату осталось (29:5\d|30:00)<\/p>/);
      expect(russian.headers.vary).toBe('Accept-Language, Cookie');

      // The q order decides, not the order written; a language the pages do not speak is passed over; none: Uzbek.
      expect(language((await open({ 'accept-language': 'de-DE, ru;q=0.5, en;q=0.8' })).text)).toBe('en');
      expect(language((await open({ 'accept-language': 'de-DE,fr;q=0.9' })).text)).toBe('uz');
      expect(language((await open({})).text)).toBe('uz');
      // A choice made on a page is remembered in a cookie and wins over the browser; ?lang= wins over both.
      expect(language((await open({ 'accept-language': 'en', cookie: 'tolov_pay_lang=ru' })).text)).toBe('ru');
      expect(language((await open({ cookie: 'tolov_pay_lang=ru' }, '?lang=en')).text)).toBe('en');
      // A link's other query parameters (a shop's tracking tags) and a language the pages lack change nothing.
      const tagged = await open({}, '?utm_source=sms&lang=constructor');
      expect(tagged.status).toBe(200);
      expect(language(tagged.text)).toBe('uz');
      expect(heading(tagged.text)).toBe('Buyurtmani toʻlash');
    } finally {
      await local.stop();
    }
  });

  it('keeps the merchant and the amount on an expired link, with the way back to the shop, and explains an unknown one', async () => {
    const local = await startService();
    try {
      const shop = await local.createMerchant({ name: 'Chorsu Market' });
      const body = { amount: 250_000, returnUrl: 'https://shop.uz/back' };
      const order = (await local.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: idem(), body })).body;
      await local.db.query('UPDATE checkout_sessions SET expires_at = now() WHERE order_id = $1', [order.id]);
      const page = await local.call({ method: 'GET', url: new URL(order.paymentUrl).pathname, headers: { 'accept-language': 'en' } });
      expect(page.status).toBe(200);
      expect(page.text).toContain('<h1 id="title">This link has expired</h1>');
      expect(page.text).toContain('<p class="merchant" id="merchant">For Chorsu Market</p>');
      expect(page.text).toContain('<p class="amount" id="amount">UZS 2,500.00</p>');
      expect(page.text).not.toContain('time-left');
      expect(page.text).toContain('<p>Go back to the shop and try again.</p><a class="button" href="https://shop.uz/back">Back to the shop</a>');

      const unknown = await local.call({ method: 'GET', url: '/pay/cs_unknown', headers: { 'accept-language': 'ru' } });
      expect(unknown.status).toBe(404);
      expect(unknown.text).toContain('<h1 id="title">Ссылка не найдена</h1>');
      expect(unknown.text).not.toContain('data-session');
    } finally {
      await local.stop();
    }
  });
});
