// Two-step payments in the dashboard, in Chromium: a hold made through the API is captured in part from its page once
// the confirmation is accepted (dismissed, nothing happens), and another hold is canceled; on a 390 px phone in Russian
// and Uzbek too, an amount above the hold said at its field first. Screenshots: test/artifacts/dashboard-hold-*.png.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/web/dashboard/context.js';
import { browserAvailable, launchBrowser, openWatched, screenshot } from '../support/browser.js';
import { bindCard } from '../support/binding.js';
import { startService, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';
import { DashboardClient, uniqueEmail } from './client.js';

const PHONE_WIDTH = 390;

let service: TestService;
let browser: Browser;
let base: string;
let session: string;
let key: string;
let card: string;

const shot = (page: Page, name: string) => screenshot(page, `dashboard-hold-${name}`);
const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
/** An element's text, its numbers' no-break spaces (ru, uz) as plain ones. */
const textOf = async (page: Page, selector: string) => ((await page.locator(selector).first().textContent()) ?? '').replace(/[\u00a0\u202f]/g, ' ').trim();
/** The value of the payment's field `label`. */
const fieldValue = (page: Page, label: string) => textOf(page, `dl.fields dt:text-is("${label}") + dd`);

/** A hold of `amount` tiyin made through the API, with a description the page shows: its id. */
async function hold(amount: number, description: string): Promise<string> {
  const reply = await charge(service, key, { amount, card, capture: 'manual', description });
  expect(reply.body.status).toBe('REQUIRES_CAPTURE');
  return reply.body.id as string;
}

const statusOf = async (id: string) => (await service.call({ method: 'GET', url: `/subscribe/v1/charges/${id}`, key })).body;

/** Presses `button` and accepts its confirmation, expecting it to say `asks`. */
async function confirmed(page: Page, button: string, asks: RegExp): Promise<void> {
  page.once('dialog', (dialog) => {
    expect(dialog.message()).toMatch(asks);
    void dialog.accept();
  });
  await page.getByRole('button', { name: button, exact: true }).click();
}

describe.runIf(browserAvailable())('two-step payments in the dashboard, in Chromium', () => {
  beforeAll(async () => {
    service = await startService();
    base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
    const owner = new DashboardClient(service);
    await owner.signUp(uniqueEmail(), undefined, 'Tez Yetkazib');
    session = owner.cookies.get(SESSION_COOKIE)!;
    key = /sk_test_[0-9A-Za-z]{32}/.exec((await owner.post('/dashboard/api-keys', {})).html)![0];
    card = await bindCard(service, key, '8600000000000007');
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('captures part of a hold once confirmed, and cancels another, on a laptop', async () => {
    const id = await hold(15_000_000, 'Delivery #77, priced when weighed');
    const { context, page, problems } = await openWatched(browser, base, { width: 1280, locale: 'en-US', cookies: [{ name: SESSION_COOKIE, value: session }] });
    await page.goto(`${base}/dashboard/payments?status=REQUIRES_CAPTURE`);
    await shot(page, 'list-en');
    await page.getByRole('link', { name: id }).click();
    expect(await fieldValue(page, 'Status')).toBe('Held for capture');
    expect(await fieldValue(page, 'Held on the card')).toBe('150,000.00 UZS');
    const amount = page.getByLabel('Amount to capture, UZS');
    expect(await amount.inputValue()).toBe('150,000');
    await shot(page, 'held-en');

    await amount.fill('120 000');
    // Dismissed, nothing is captured.
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: 'Capture', exact: true }).click();
    expect((await statusOf(id)).status).toBe('REQUIRES_CAPTURE');
    await confirmed(page, 'Capture', /^Capture the amount entered from the buyer’s card\? What is left of the 150,000\.00\sUZS held goes back/);
    await expect.poll(() => textOf(page, '[role="status"]')).toBe('Captured 120,000.00 UZS: the payment has succeeded.');
    expect(await fieldValue(page, 'Status')).toBe('Succeeded');
    expect(await fieldValue(page, 'Amount')).toBe('120,000.00 UZS');
    expect(await fieldValue(page, 'Held on the card')).toBe('150,000.00 UZS, of which 30,000.00 UZS went back to the card');
    expect(await page.getByRole('button', { name: 'Cancel the hold' }).count()).toBe(0);
    await shot(page, 'captured-en');

    const other = await hold(4_500_000, 'Delivery #78, called off');
    await page.goto(`${base}/dashboard/payments/${other}`);
    await confirmed(page, 'Cancel the hold', /^Cancel the hold\? All 45,000\.00\sUZS goes back to the buyer’s card/);
    await expect.poll(() => textOf(page, '[role="status"]')).toBe('The hold is canceled: 45,000.00 UZS is back on the buyer’s card.');
    expect(await fieldValue(page, 'Status')).toBe('Canceled');
    expect(await fieldValue(page, 'Held on the card')).toBe('45,000.00 UZS, all of it back on the card');
    await shot(page, 'released-en');
    expect((await statusOf(other)).status).toBe('CANCELED');
    expect(problems).toEqual([]);
    await context.close();
  });

  it.each([
    ['ru', 'ru-RU', { amount: 'Сумма списания, сум', capture: 'Списать', cancel: 'Снять блокировку', status: 'Статус', held: 'Заблокировано на карте' }, 'Введите не больше 150 000,00 сум'],
    ['uz', 'uz-UZ', { amount: 'Yechib olinadigan summa, soʻm', capture: 'Yechib olish', cancel: 'Band qilishni bekor qilish', status: 'Holat', held: 'Kartada band qilingan' }, 'Koʻpi bilan 150 000,00 soʻm kiriting'],
  ])('on a 390 px phone in %s: an amount above the hold said at its field, then a part captured; another hold canceled', async (lang, locale, words, tooMuch) => {
    const id = await hold(15_000_000, `Yetkazib berish #${lang}-1`);
    const { context, page, problems } = await openWatched(browser, base, { width: PHONE_WIDTH, locale, cookies: [{ name: SESSION_COOKIE, value: session }] });
    await page.goto(`${base}/dashboard/payments/${id}`);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await shot(page, `held-phone-${lang}`);

    await page.getByLabel(words.amount).fill('150 000,01');
    await confirmed(page, words.capture, /150\s000,00/);
    await page.locator('#capture-amount-error').waitFor();
    expect(await textOf(page, '#capture-amount-error')).toMatch(new RegExp(`^${tooMuch}`));
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('capture-amount');
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await shot(page, `too-much-phone-${lang}`);

    await page.getByLabel(words.amount).fill('99 500,50');
    await confirmed(page, words.capture, /150\s000,00/);
    await page.getByRole('status').waitFor();
    expect(await fieldValue(page, words.status)).toMatch(/^(Успешно|Muvaffaqiyatli)$/);
    expect(await fieldValue(page, words.held)).toMatch(/^150 000,00 (сум|soʻm), .*50 499,50/);
    expect(await statusOf(id)).toMatchObject({ status: 'SUCCEEDED', amount: 9_950_050 });
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await shot(page, `captured-phone-${lang}`);

    const other = await hold(2_000_000, `Yetkazib berish #${lang}-2`);
    await page.goto(`${base}/dashboard/payments/${other}`);
    await confirmed(page, words.cancel, /20\s000,00/);
    await page.getByRole('status').waitFor();
    expect((await statusOf(other)).status).toBe('CANCELED');
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await shot(page, `released-phone-${lang}`);
    expect(problems).toEqual([]);
    await context.close();
  });
});
