// The merchant dashboard in Chromium, as a merchant uses it: sign up, make a key, add an endpoint, watch a charge's
// delivery fail and retry it, in three languages, on a laptop and on a phone, by keyboard.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { browserAvailable, launchBrowser, openWatched, screenshot } from '../support/browser.js';
import { engine, startService, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';
import { linkIn } from '../support/mailbox.js';
import { logoPng } from '../support/png.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { fiscalizeAll } from '../support/receipts.js';

let service: TestService;
let receiver: Receiver;
let browser: Browser;
let base: string;

const PASSWORD = 'correct horse battery staple';

describe.runIf(browserAvailable())('the merchant dashboard, in Chromium', () => {
  beforeAll(async () => {
    service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
    base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    receiver = await startReceiver();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await service?.stop();
  });

  const shot = (page: Page, name: string) => screenshot(page, `dashboard-${engine}-${name}`);

  const open = (options: { width: number; locale: string }) => openWatched(browser, base, options);

  /**
   * The sign-up form's answer, then its mail's link opened, the password chosen and the account made, as a merchant
   * does from their inbox.
   */
  async function confirmSignUp(page: Page, email: string, labels: { password: string; button: string }, screenshot?: string): Promise<void> {
    await page.locator('p[role="status"]').waitFor();
    if (screenshot) await shot(page, screenshot);
    const path = linkIn(await service.mailbox.next(email), '/dashboard/signup/confirm/');
    await page.goto(`${base}${path}`);
    await page.getByLabel(labels.password).fill(PASSWORD);
    if (screenshot) await shot(page, `${screenshot}-confirm`);
    await page.getByRole('button', { name: labels.button }).click();
    // The account starts on its getting-started page, with its first test key shown this once.
    expect(await page.locator('#test-key').textContent()).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    if (screenshot) await shot(page, `${screenshot}-started`);
    await page.locator('nav.sections a[href="/dashboard/overview"]').click();
    await expect.poll(() => page.url()).toBe(`${base}/dashboard/overview`);
  }

  async function deliver(): Promise<void> {
    for (let round = 0; round < 5; round++) if ((await service.webhooks.deliverDue(10)) === 0) return;
  }

  it('signs up, creates a key, adds an endpoint, and retries a failed delivery until it is delivered', async () => {
    const { context, page, problems } = await open({ width: 1280, locale: 'en-US' });
    await page.goto(`${base}/dashboard/signup`);
    await shot(page, 'signup');
    const email = `merchant-${Date.now()}@example.uz`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Business name').fill('Chorsu Market');
    await page.getByRole('button', { name: 'Create account' }).click();
    await confirmSignUp(page, email, { password: 'Password', button: 'Create account' }, 'signup-check-email');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    await shot(page, 'overview-empty');
    expect(await page.getByText('You are viewing test data').isVisible()).toBe(true);

    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.locator('#new-key').textContent())!;
    expect(key).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    await expect.poll(() => page.getByRole('button', { name: 'Roll key' }).count()).toBe(2); // the key made at sign-up, and this one
    await shot(page, 'key-created');

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/shop`);
    await page.getByLabel('Description').fill('Order fulfilment');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.locator('#secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await shot(page, 'endpoint-added');

    // A charge made with the key over the API; the receiver fails it.
    receiver.behaviour = 'fail';
    const card = await bindCard(service, key, '8600000000000007');
    const intent = (await charge(service, key, { amount: 1_500_000, card })).body;
    await deliver();
    await page.reload();
    const delivery = page.locator('li.delivery').first();
    expect(await delivery.locator('code').first().textContent()).toBe('payment_intent.succeeded');
    expect(await delivery.getByText('HTTP 500').isVisible()).toBe(true);
    expect(await delivery.locator('pre.excerpt').textContent()).toBe('no');
    expect(await delivery.getByText('Pending').isVisible()).toBe(true);
    await shot(page, 'delivery-failed');

    receiver.behaviour = 'ok';
    await delivery.getByRole('button', { name: 'Retry now' }).click();
    await page.getByText('The delivery will be attempted again within seconds.').waitFor();
    await deliver();
    await page.reload();
    const retried = page.locator('li.delivery').first();
    expect(await retried.getByText('Delivered').isVisible()).toBe(true);
    expect(await retried.locator('ol.attempts li').count()).toBe(2);
    expect(await retried.getByRole('button', { name: 'Retry now' }).count()).toBe(0);
    const received = receiver.received.filter((request) => request.path === '/shop');
    expect(received.map((request) => JSON.parse(request.body).data.id)).toEqual([intent.id, intent.id]);
    await shot(page, 'delivery-retried');

    // "Send test event" reaches the endpoint too.
    await page.getByRole('button', { name: 'Send test event' }).click();
    await deliver();
    expect(receiver.received.at(-1)!.headers['tolov-event-type']).toBe('webhook_endpoint.test');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows the overview, filters payments by status and day, opens one with its timeline, refunds it, and finds the refund in the list and the CSV', async () => {
    const { context, page, problems } = await open({ width: 1280, locale: 'en-US' });
    await page.goto(`${base}/dashboard/signup`);
    const email = `lists-${Date.now()}@example.uz`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Business name').fill('Samarkand Silk');
    await page.getByRole('button', { name: 'Create account' }).click();
    await confirmSignUp(page, email, { password: 'Password', button: 'Create account' });
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.locator('#new-key').textContent())!;
    await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key, body: { url: `${receiver.url}/silk` } });
    const good = await bindCard(service, key, '8600000000000007', { customerRef: 'nodira' });
    const declined = await bindCard(service, key, '8600000000000015', { customerRef: 'nodira' });
    for (const [card, amount] of [[good, 45_000_000], [declined, 1_990_000], [good, 12_500_00]] as const) await charge(service, key, { amount, card });
    await deliver();

    await page.getByRole('link', { name: 'Overview' }).click();
    await page.locator('#activity-chart canvas').waitFor();
    expect(await page.locator('.tile-value').nth(3).textContent()).toBe('66.7%');
    expect(await page.locator('.tile-value').nth(2).textContent()).toBe('462,500.00 UZS');
    await shot(page, 'overview');

    await page.getByRole('link', { name: 'Payments', exact: true }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(3);
    await page.getByLabel('Status').selectOption('SUCCEEDED');
    const today = new Date().toISOString().slice(0, 10);
    await page.getByLabel('From').fill(today);
    await page.getByLabel('To').fill(today);
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('from')).toBe(today);
    await expect.poll(() => page.locator('tbody tr').count()).toBe(2);
    await shot(page, 'payments-filtered');

    // The bigger payment: its page, its timeline with the delivery, and a refund confirmed in a dialog.
    await page.locator('tbody tr', { hasText: '450,000.00 UZS' }).getByRole('link').first().click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toMatch(/^Payment pi_/);
    const intent = (await page.getByRole('heading', { level: 1 }).textContent())!.split(' ')[1]!;
    await page.locator('.timeline').getByText('payment_intent.succeeded').waitFor();
    await page.locator('.timeline').getByText('Delivered').waitFor();
    await shot(page, 'payment-detail');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Refund the full amount' }).click();
    await page.getByText('The refund is made').waitFor();
    expect(await page.getByRole('button', { name: 'Refund the full amount' }).count()).toBe(0);
    await shot(page, 'payment-refunded');

    await page.getByRole('link', { name: 'Refunds' }).click();
    await page.locator('tbody tr').first().getByText(intent).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(1);
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: /Export CSV/ }).click();
    const csv = await (await download).createReadStream().then((stream) => new Response(stream as unknown as ReadableStream).text());
    expect(csv.split('\r\n')[1]).toMatch(new RegExp(`^re_\\w+,[^,]+,450000\\.00,SUCCEEDED,${intent},$`));

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/dashboard/payments?q=nodira`);
    expect(await page.locator('tbody tr').count()).toBe(3);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await shot(page, 'payments-phone');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('flags a failed fiscal receipt on the overview, lists it with its reason, and opens its payment at the receipt, in English and on an Uzbek phone', async () => {
    const { context, page, problems } = await open({ width: 1280, locale: 'en-US' });
    await page.goto(`${base}/dashboard/signup`);
    const email = `receipts-${Date.now()}@example.uz`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Business name').fill('Rishton Sopol');
    await page.getByRole('button', { name: 'Create account' }).click();
    await confirmSignUp(page, email, { password: 'Password', button: 'Create account' });
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.locator('#new-key').textContent())!;
    const card = await bindCard(service, key, '8600000000000007');
    const line = (title: string, price: number, code: string) => ({ title, price, count: 3, code, packageCode: '1505709', vatPercent: 12 });
    const sold = (await charge(service, key, { amount: 3 * 4_500_000, card, receipt: { items: [line('Lagan, 40 sm', 4_500_000, '10399001001000000')] } })).body;
    const refused = (await charge(service, key, { amount: 3 * 1_200_000, card, receipt: { items: [line('Piyola', 1_200_000, '00000000000000000')] } })).body;
    await service.call({ method: 'POST', url: '/v1/refunds', key, idempotencyKey: `refund-${sold.id}`, body: { paymentIntent: sold.id } });
    await fiscalizeAll(service);

    await page.getByRole('link', { name: 'Overview' }).click();
    const flag = page.locator('.notice.warning');
    expect(await flag.textContent()).toContain('Fiscal receipts not registered in the last 30 days: 1.');
    await shot(page, 'receipts-overview-flag');
    await flag.getByRole('link', { name: 'See them' }).click();
    expect(await page.getByLabel('Status').inputValue()).toBe('FAILED');
    const row = page.locator('tbody tr').first();
    await row.getByText('The fiscal module refused an item’s IKPU code').waitFor();
    expect(await page.locator('tbody tr').count()).toBe(1);
    await shot(page, 'receipts-failed');
    await page.getByRole('link', { name: 'Clear' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(3);
    await shot(page, 'receipts-list');

    // The row's id opens its payment at that receipt, which stands out; the timeline names the receipt of each event.
    await page.locator('tbody tr', { hasText: 'Return' }).getByRole('link').first().click();
    await expect.poll(() => new URL(page.url()).hash).toMatch(/^#rcpt_/);
    const target = page.locator('section.receipt:target');
    expect(await target.getByRole('heading').textContent()).toMatch(/^Return receipt rcpt_/);
    await target.getByText('Fiscalized', { exact: true }).waitFor();
    await expect.poll(() => page.locator('.timeline').getByRole('link', { name: 'Sale receipt' }).count()).toBe(1);
    await expect.poll(() => page.locator('.timeline').getByRole('link', { name: 'Return receipt' }).count()).toBe(1);
    await shot(page, 'receipts-payment');
    await page.goto(`${base}/dashboard/payments/${refused.id}`);
    expect(await page.locator('.receipt-note.failed').isVisible()).toBe(true);
    await shot(page, 'receipts-payment-failed');

    // The same pages on an Uzbek phone: nothing wider than the screen, the current section in sight.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Oʻzbekcha' }).click();
    for (const [name, path] of [['overview', '/dashboard/overview'], ['list', '/dashboard/receipts'], ['payment', `/dashboard/payments/${sold.id}`]] as const) {
      await page.goto(`${base}${path}`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(390);
      const inSight = await page.locator('nav.sections [aria-current="page"]').evaluate((link) => {
        const [box, row] = [link.getBoundingClientRect(), link.parentElement!.getBoundingClientRect()];
        return box.left >= row.left && box.right <= row.right;
      });
      expect(inSight, name).toBe(true);
      await shot(page, `receipts-phone-uz-${name}`);
    }
    await page.goto(`${base}/dashboard/overview`);
    expect(await page.locator('.notice.warning').textContent()).toContain('Oxirgi 30 kunda fiskallashtirilmagan cheklar: 1.');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('reads in Uzbek and Russian, on a 390 px phone, and logs in by keyboard', async () => {
    const { context, page, problems } = await open({ width: 390, locale: 'uz-UZ' });
    const email = `phone-${Date.now()}@example.uz`;
    await page.goto(`${base}/dashboard/signup`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Tolov akkauntini yarating');
    await page.getByLabel('Elektron pochta').fill(email);
    await page.getByLabel('Biznes nomi').fill("Samarqand Non");
    await page.getByRole('button', { name: 'Akkaunt yaratish' }).click();
    await confirmSignUp(page, email, { password: 'Parol', button: 'Akkaunt yaratish' }, 'phone-uz-signup-check-email');
    await page.getByRole('link', { name: 'Vebhuklar' }).click();
    await shot(page, 'phone-uz-webhooks');
    // Nothing wider than the phone.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    await page.getByRole('link', { name: 'Русский' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Вебхуки');
    await shot(page, 'phone-ru-webhooks');
    await page.getByRole('button', { name: 'Выйти' }).click();
    await expect.poll(() => page.url()).toBe(`${base}/dashboard/login`);
    // The choice is remembered.
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Вход в Tolov');

    // By keyboard alone: the email field, then the password, then the button.
    await page.getByLabel('Электронная почта').focus();
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Войти');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.url()).toBe(`${base}/dashboard/overview`);
    await page.locator('#activity-chart canvas').waitFor();
    await shot(page, 'phone-ru-overview');
    expect(problems).toEqual([]);
    await context.close();
  });

  it("lets an owner brand the payment pages with a name, a colour and a logo file, previewed as buyers see them, on a phone", async () => {
    const { context, page, problems } = await open({ width: 390, locale: 'ru-RU' });
    await page.goto(`${base}/dashboard/signup`);
    const email = `brand-${Date.now()}@example.uz`;
    await page.getByLabel('Электронная почта').fill(email);
    await page.getByLabel('Название бизнеса').fill('Kulol Uyi LLC');
    await page.getByRole('button', { name: 'Создать аккаунт' }).click();
    await confirmSignUp(page, email, { password: 'Пароль', button: 'Создать аккаунт' });
    await page.getByRole('link', { name: 'Оформление' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Оформление');
    expect(await page.locator('#brand-preview p').textContent()).toBe('Для Kulol Uyi LLC');
    await shot(page, 'phone-ru-branding-before');

    await page.getByLabel('Название для покупателей').fill('Kulol Uyi');
    expect(await page.getByLabel('Фирменный зелёный Tolov').isChecked()).toBe(true);
    // Picking a colour unticks Tolov's own.
    await page.getByLabel('Цвет', { exact: true }).fill('#7c2d12');
    expect(await page.getByLabel('Фирменный зелёный Tolov').isChecked()).toBe(false);
    await page.getByLabel('Логотип').setInputFiles({ name: 'kulol-uyi.png', mimeType: 'image/png', buffer: logoPng([124, 45, 18]) });
    await page.getByRole('button', { name: 'Сохранить оформление' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Сохранено: новые страницы оплаты сразу получат это оформление.');
    expect(await page.locator('#brand-preview p').textContent()).toBe('Для Kulol Uyi');
    expect(await page.getByRole('img', { name: 'Кнопка цвета #7c2d12' }).count()).toBe(1);
    // The logo is served by Tolov and drawn.
    const logo = page.getByRole('img', { name: 'Логотип Kulol Uyi' });
    await expect.poll(() => logo.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth)).toBe(150);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot(page, 'phone-ru-branding-saved');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('lets an owner invite a viewer, who sees the webhooks and payments but no secret and no button that changes them, and whose direct refund is refused', async () => {
    const owner = await open({ width: 1280, locale: 'en-US' });
    await owner.page.goto(`${base}/dashboard/signup`);
    const ownerEmail = `owner-${Date.now()}@example.uz`;
    await owner.page.getByLabel('Email').fill(ownerEmail);
    await owner.page.getByLabel('Business name').fill('Tashkent Books');
    await owner.page.getByRole('button', { name: 'Create account' }).click();
    await confirmSignUp(owner.page, ownerEmail, { password: 'Password', button: 'Create account' });
    await owner.page.getByRole('link', { name: 'Webhooks' }).click();
    await owner.page.getByLabel('Endpoint URL').fill(`${receiver.url}/books`);
    await owner.page.getByRole('button', { name: 'Add endpoint' }).click();
    await owner.page.getByRole('link', { name: 'API keys' }).click();
    await owner.page.getByRole('button', { name: 'Create key' }).click();
    const key = (await owner.page.locator('#new-key').textContent())!;
    const intent = (await charge(service, key, { amount: 310_000, card: await bindCard(service, key, '8600000000000007') })).body.id as string;
    await owner.page.getByRole('link', { name: 'Team' }).click();
    const viewerEmail = `viewer-${Date.now()}@example.uz`;
    await owner.page.getByLabel('Email').fill(viewerEmail);
    await owner.page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await owner.page.getByRole('button', { name: 'Send invitation' }).click();
    expect(await owner.page.getByRole('status').textContent()).toBe(`Invitation sent to ${viewerEmail}. The link in it works for 7 days.`);
    const link = `${base}${linkIn(await service.mailbox.next(viewerEmail), '/dashboard/invite/')}`;
    await shot(owner.page, 'team-invited');

    const viewer = await open({ width: 1280, locale: 'en-US' });
    await viewer.page.goto(link);
    await viewer.page.getByLabel('Password').fill(PASSWORD);
    await viewer.page.getByRole('button', { name: 'Join the team' }).click();
    await viewer.page.getByRole('link', { name: 'Webhooks' }).click();
    await viewer.page.getByRole('link', { name: `${receiver.url}/books` }).click();
    await viewer.page.getByRole('heading', { name: 'Delivery log' }).waitFor();
    for (const name of ['Send test event', 'Disable', 'Delete endpoint', 'Reveal secret', 'Roll secret']) {
      expect(await viewer.page.getByRole('button', { name }).count(), name).toBe(0);
    }
    expect(await viewer.page.getByRole('link', { name: 'API keys' }).count()).toBe(0);
    expect(await viewer.page.content()).not.toContain('whsec_');
    await shot(viewer.page, 'viewer-endpoint');

    // The payment's page without its refund button; the refund posted directly is refused, and nothing is refunded.
    await viewer.page.getByRole('link', { name: 'Payments', exact: true }).click();
    await viewer.page.getByRole('link', { name: intent }).click();
    await viewer.page.getByRole('heading', { name: 'Timeline' }).waitFor();
    expect(await viewer.page.getByRole('button', { name: 'Refund the full amount' }).count()).toBe(0);
    /** The refund form posted straight from a session, with the page's form token: the status it answers. */
    const postRefund = async (from: Page) => {
      const csrf = (await from.locator('input[name="_csrf"]').first().getAttribute('value'))!;
      const posted = await from.request.post(`${base}/dashboard/payments/${intent}/refund`, {
        form: { _csrf: csrf, idempotencyKey: '00000000-0000-4000-8000-0000000000bb' },
        headers: { origin: base },
        maxRedirects: 0,
      });
      return posted.status();
    };
    const refunded = async () => (await service.call({ method: 'GET', url: `/subscribe/v1/charges/${intent}`, key })).body.amountRefunded;
    expect(await postRefund(viewer.page)).toBe(403);
    expect(await refunded()).toBe(0);
    await shot(viewer.page, 'viewer-payment');
    // The same post from the owner's session goes through: the viewer was refused for the role, not the form.
    await owner.page.goto(`${base}/dashboard/payments/${intent}`);
    expect(await postRefund(owner.page)).toBe(303);
    expect(await refunded()).toBe(310_000);
    await owner.page.goto(`${base}/dashboard/team`);

    await owner.page.getByRole('link', { name: 'Audit log' }).click();
    await owner.page.getByText('team.joined').waitFor();
    await shot(owner.page, 'audit-log');
    await owner.page.getByRole('link', { name: 'Account security' }).click();
    await owner.page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    await owner.page.locator('figure.qr svg').waitFor();
    await shot(owner.page, 'second-factor-setup');
    expect([...owner.problems, ...viewer.problems]).toEqual([]);
    await owner.context.close();
    await viewer.context.close();
  });
});
