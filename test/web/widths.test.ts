// Every page a merchant and a buyer see, on a 390 px phone and a 1,280 px laptop, in Uzbek, Russian and English (the
// first two write longer words): nothing wider than the screen, no table cell cut off or pushed out of sight, the
// request log's times on at most two lines, the phone's payments, receipts, statement and payouts showing what a
// merchant looks for, and the chart's bars whole. The payout account was changed, so every signed-in page carries the
// hold's banner, and its form is seen refused too. A full-page screenshot of each is saved to be looked at.
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard, createBinding, submitCard, submitCode, TEST_CODE } from '../support/binding.js';
import { browserAvailable, launchBrowser, screenshot } from '../support/browser.js';
import { idem, startService, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { fiscalizeAll } from '../support/receipts.js';
import { DashboardClient, turnOnSecondFactor, uniqueEmail } from '../dashboard/client.js';
import { codeNow } from '../../src/modules/accounts/second-factor.js';
import { accountKeyValid } from '../../src/modules/payouts/account-number.js';
import { SESSION_COOKIE } from '../../src/web/dashboard/context.js';
import { MESSAGES, type Lang } from '../../src/web/dashboard/i18n.js';

const LANGS: Lang[] = ['uz', 'ru', 'en'];
const WIDTHS = [390, 1280] as const;
const PHONE = 390;

let service: TestService;
let receiver: Receiver;
let browser: Browser;
let base: string;
let session: string;
/** The pages to visit: a name for the screenshot, and the path. */
let signedPages: Array<[string, string]>;
let hostedPages: Array<[string, string]>;

/** The fiscal lines of the refunded payment: long titles, a discount, goods on commission, shipping; 12,345,678.90 so'm. */
const KITCHEN_RECEIPT = {
  items: [
    { title: 'Qozon, 12 litr, choʻyan, qopqogʻi bilan (Oʻzbekistonda ishlab chiqarilgan)', price: 450_000_000, count: 2, code: '10399001001000000', packageCode: '1505709', vatPercent: 12, discount: 15_432_110 },
    { title: 'Pichoqlar toʻplami', price: 300_000_000, count: 1, code: '04901001001000000', packageCode: '1510911', vatPercent: 0, commissionTin: '123456789' },
  ],
  shipping: { title: 'Yetkazib berish, Samarqand', price: 50_000_000, code: '10112006002000000', packageCode: '1209779', vatPercent: 12 },
};
/** Lines the test fiscal module refuses (an item code of seventeen zeros): the overview flags the failed receipt. */
const REFUSED_RECEIPT = { items: [{ title: 'Piyola, 200 dona', price: 310_000_000, count: 1, code: '00000000000000000', packageCode: '1', vatPercent: 12 }] };

/**
 * A merchant's month: cards of two networks, paid, declined, pending and refunded payments with their fiscal receipts
 * (one the fiscal module refused), orders, a failing endpoint.
 */
async function fill(key: string): Promise<{ refunded: string; order: string; endpoint: string; payout: string }> {
  receiver.behaviour = 'fail';
  const endpoint = await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key, idempotencyKey: idem(), body: { url: `${receiver.url}/tolov/webhooks/payments`, description: 'Buyurtmalarni yetkazib berish tizimi' } });
  const uzcard = await bindCard(service, key, '8600000000000007', { customerRef: 'nodira.karimova@example.uz' });
  const humo = await bindCard(service, key, '9860000000000000', { customerRef: 'customer-000184-samarqand' });
  const declined = await bindCard(service, key, '8600000000000015', { customerRef: 'jasur-t' });
  const unclear = await bindCard(service, key, '8600000000000031', { customerRef: 'dilnoza' });
  const made: string[] = [];
  const charges: Array<[string, number, string]> = [
    [uzcard, 1_234_567_890, 'Oshxona jihozlari to‘plami, 3 dona (yetkazib berish bilan)'],
    [humo, 450_000_000, 'Подписка «Премиум» на 12 месяцев'],
    [declined, 1_990_000, 'Two kilos of apricots'],
    [unclear, 12_500_000, 'Atlas ko‘ylak'],
    [uzcard, 310_000_000, 'Choyxona uchun 200 dona piyola'],
  ];
  const receipts: Record<number, unknown> = { 1_234_567_890: KITCHEN_RECEIPT, 310_000_000: REFUSED_RECEIPT };
  for (const [card, amount, description] of charges) {
    const body = { amount, card, description, metadata: { orderNumber: 'SM-2024-000184', channel: 'telegram-bot' }, receipt: receipts[amount] };
    made.push((await charge(service, key, body, `charge-${card}-${amount}-7f3c9a2e-5b1d-4c8e-9f0a-1e2d3c4b5a69`)).body.id);
  }
  // Earlier days of the month, for the chart: payments moved back by some days, with their statement rows; the one
  // that succeeded days ago is settled, so that the statement has available and pending rows.
  for (const [index, days] of [[1, 3], [2, 12], [4, 29]] as const) {
    await service.db.query(`UPDATE payment_intents SET created_at = created_at - $2 * interval '1 day', succeeded_at = succeeded_at - $2 * interval '1 day' WHERE id = $1`, [made[index], days]);
    await service.db.query(`UPDATE balance_transactions SET created_at = created_at - $2 * interval '1 day' WHERE source = $1`, [made[index], days]);
  }
  await service.payments.settle(86_400, 10);
  // Paid out before the refund, which then leaves the balance negative.
  const payout = await payouts(key);
  await service.call({ method: 'POST', url: '/v1/refunds', key, idempotencyKey: `refund-${made[0]}`, body: { paymentIntent: made[0] } });
  await fiscalizeAll(service);
  const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 15_000_000, customerRef: 'customer-000184-samarqand', description: 'Ikki kilo o‘rik va bir quti shaftoli' } });
  await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 990_000, description: 'Cancelled before payment' } });
  await service.call({ method: 'POST', url: '/merchant/v1/orders', key, body: { amount: -1 } });
  for (let round = 0; round < 5; round++) if ((await service.webhooks.deliverDue(20)) === 0) break;
  return { refunded: made[0]!, order: order.body.id, endpoint: endpoint.body.id, payout };
}

/**
 * The owner turns the second factor on (their session proves it), sets the payout account and changes it: every page
 * then carries the hold's banner, and the payout account's page its form.
 */
async function changePayoutAccount(client: DashboardClient, email: string): Promise<void> {
  const seed = await turnOnSecondFactor(client);
  const changed = Array.from({ length: 10 }, (_, key) => `20208000${key}05368527788`).find((number) => accountKeyValid('00440', number))!;
  for (const accountNumber of ['20208000505368522001', changed]) {
    // Each change wants the app's next code: the step last used is forgotten, as if half a minute had passed.
    await service.db.query('UPDATE users SET totp_last_step = NULL WHERE email = $1', [email]);
    const holderName = '«Samarqand Ipak Yoʻli Savdo Uyi» masʼuliyati cheklangan jamiyati';
    const form = { bankMfo: '00440', accountNumber, tin: '301234567', holderName, code: codeNow(seed), idempotencyKey: randomUUID() };
    expect((await client.post('/dashboard/payout-account', form)).status).toBe(303);
  }
}

/** The payout account's form sent with a check digit that does not match and no holder: refused, each said at its field. */
async function refusePayoutForm(page: Page): Promise<void> {
  await page.fill('#payout-bankMfo', '00440');
  await page.fill('#payout-accountNumber', '2020 8000 6053 6852 2001');
  await page.fill('#payout-tin', '301234567');
  await page.fill('#payout-holderName', ' ');
  await page.fill('#payout-code', '000000');
  const answer = page.waitForResponse((response) => response.request().method() === 'POST');
  await page.locator('form.payout-form button[type="submit"]').click();
  expect((await answer).status()).toBe(400);
  await page.waitForLoadState();
}

/**
 * Payouts: a manual one, and the automatic one that pays it out with the rest, both paid; made while the hold is
 * lifted for a moment and put back as it was. Returns the automatic payout.
 */
async function payouts(key: string): Promise<string> {
  const held = (await service.call({ method: 'GET', url: '/v1/payout_account', key })).body as { id: string; payoutsHeldUntil: string };
  await service.db.query('UPDATE payout_accounts SET payouts_held_until = NULL WHERE id = $1', [held.id]);
  expect((await service.call({ method: 'POST', url: '/v1/payouts', key, idempotencyKey: idem(), body: { amount: 123_456_789 } })).status).toBe(201);
  const automatic = await service.call({ method: 'POST', url: '/v1/test_helpers/payouts/run', key });
  expect(automatic.status, automatic.text).toBe(201);
  await service.db.query('UPDATE payout_accounts SET payouts_held_until = $2 WHERE id = $1', [held.id, held.payoutsHeldUntil]);
  return automatic.body.id;
}

/** The hosted pages: an order to pay, one paid (its receipt), and a card to bind. */
async function hosted(key: string): Promise<Array<[string, string]>> {
  const open = await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 123_456_789, description: 'Oshxona jihozlari to‘plami, 3 dona', returnUrl: `${base}/healthz` } });
  const paid = await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 15_000_000, description: 'Atlas ko‘ylak' } });
  const paidToken = new URL(paid.body.paymentUrl).pathname.split('/').at(-1)!;
  await submitCard(service, paidToken, { pan: '8600000000000007' });
  await submitCode(service, paidToken, TEST_CODE);
  const binding = await createBinding(service, key, { customerRef: 'nodira.karimova@example.uz' });
  return [
    ['pay', new URL(open.body.paymentUrl).pathname],
    ['pay-paid', new URL(paid.body.paymentUrl).pathname],
    ['bind', `/bind/${binding.clientToken}`],
  ];
}

/**
 * Every visible table cell of the page: its column's heading, its text, how many lines it takes, and why it cannot be
 * read whole: its content spills out of it, or a frame that clips (a scrolling table's) hides part of it.
 */
function cellsOf(page: Page) {
  return page.evaluate(() => {
    const hiddenBy = (cell: Element): string | null => {
      if (cell.scrollWidth > cell.clientWidth + 1) return `content ${cell.scrollWidth} px in a ${cell.clientWidth} px cell`;
      const box = cell.getBoundingClientRect();
      if (box.left < -1 || box.right > document.documentElement.clientWidth + 1) return `outside the screen (${Math.round(box.left)}–${Math.round(box.right)} px)`;
      for (let frame = cell.parentElement; frame; frame = frame.parentElement) {
        if (getComputedStyle(frame).overflowX === 'visible') continue;
        const edge = frame.getBoundingClientRect();
        if (box.left < edge.left - 1 || box.right > edge.right + 1) return `cut by its ${frame.tagName.toLowerCase()}.${frame.className} (${Math.round(box.right)} > ${Math.round(edge.right)} px)`;
      }
      return null;
    };
    const lines = (cell: Element) => {
      const range = document.createRange();
      range.selectNodeContents(cell);
      return new Set([...range.getClientRects()].filter((rect) => rect.width > 0).map((rect) => Math.round(rect.bottom))).size;
    };
    // Headings kept for screen readers only (a phone's cards name each value instead) are not meant to be seen.
    const forScreenReaders = (cell: Element) => cell.closest('thead') !== null && cell.closest('thead')!.getBoundingClientRect().width <= 1;
    return [...document.querySelectorAll<HTMLTableCellElement>('td, th')]
      .filter((cell) => cell.checkVisibility() && !forScreenReaders(cell))
      .map((cell) => {
        const table = cell.closest('table')!;
        const heading = cell.tagName === 'TH' ? cell : table.tHead?.rows[0]?.cells[cell.cellIndex];
        return { heading: heading?.textContent?.trim() ?? '', text: cell.textContent!.trim(), lines: lines(cell), hidden: hiddenBy(cell), row: cell.closest('tbody') ? (cell.parentElement as HTMLTableRowElement).sectionRowIndex : -1 };
      });
  });
}

/** The chart's bars: each one's left and right edge in the plot, found in the canvas's pixels, and the plot's width. */
function barsOf(page: Page) {
  return page.evaluate(() => {
    const canvas = document.querySelector<HTMLCanvasElement>('#activity-chart canvas');
    if (!canvas) return null;
    const over = document.querySelector('#activity-chart .u-over')!.getBoundingClientRect();
    const frame = canvas.getBoundingClientRect();
    const scale = canvas.width / frame.width;
    // A row just above the plot's floor, clear of the payment count's line and points drawn on it for empty days.
    const y = Math.round((over.bottom - frame.top - 8) * scale);
    const left = Math.round((over.left - frame.left) * scale);
    const width = Math.round(over.width * scale);
    const row = canvas.getContext('2d')!.getImageData(left, y, width, 1).data;
    const bars: Array<{ left: number; right: number }> = [];
    for (let x = 0; x < width; x++) {
      const [r, g, b] = [row[4 * x]!, row[4 * x + 1]!, row[4 * x + 2]!];
      // The accent green, translucent over white: green well above red, above blue (the count's ink is bluish grey).
      const bar = g - r > 20 && g > b;
      const last = bars.at(-1);
      // A gap of a few pixels is the count's line crossing a bar, not the space between two days.
      if (bar && last && x - last.right <= 4) last.right = x;
      else if (bar) bars.push({ left: x, right: x });
    }
    return { bars, width };
  });
}

/** The chart's bars: three days with payments (the period's first day and today among them), each as wide as the others. */
async function chartProblems(page: Page): Promise<string[]> {
  const drawn = await barsOf(page);
  if (drawn === null) return ['overview: no chart drawn'];
  const { bars, width } = drawn;
  if (bars.length !== 3) return [`overview: bars at ${JSON.stringify(bars)} in ${width} px, but 3 days have payments`];
  const widest = Math.max(...bars.map((bar) => bar.right - bar.left));
  return bars
    .filter((bar) => bar.right - bar.left < widest - 1)
    .map((bar) => `overview: a bar is cut at the plot's edge (${bar.left}–${bar.right} px of ${width} px; whole ones are ${widest + 1} px wide)`);
}

describe.runIf(browserAvailable())('every page at a phone’s and a laptop’s width, in three languages', () => {
  beforeAll(async () => {
    service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
    base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    receiver = await startReceiver();
    browser = await launchBrowser();
    const client = new DashboardClient(service);
    const email = uniqueEmail('widths');
    await client.signUp(email, 'correct horse battery', 'Samarqand Ipak Yo‘li Savdo Uyi MChJ');
    const key = /id="new-key">(sk_test_\w+)</.exec((await client.post('/dashboard/api-keys', {})).html)![1]!;
    await client.post('/dashboard/api-keys', {});
    await client.post('/dashboard/team/invite', { email: 'aziza.rahimova.buxgalter@example.uz', role: 'viewer' });
    await changePayoutAccount(client, email);
    session = client.cookies.get(SESSION_COOKIE)!;
    const { refunded, order, endpoint, payout } = await fill(key);
    hostedPages = await hosted(key);
    signedPages = [
      ['start', '/dashboard/start'], ['overview', '/dashboard/overview'], ['payments', '/dashboard/payments'], ['payment', `/dashboard/payments/${refunded}`],
      ['orders', '/dashboard/orders'], ['order', `/dashboard/orders/${order}`], ['refunds', '/dashboard/refunds'], ['statement', '/dashboard/statement'],
      ['payouts', '/dashboard/payouts'], ['payout-detail', `/dashboard/payouts/${payout}`], ['receipts', '/dashboard/receipts'],
      ['cards', '/dashboard/cards'], ['events', '/dashboard/events'], ['webhooks', '/dashboard/webhooks'],
      ['endpoint', `/dashboard/webhooks/${endpoint}`], ['logs', '/dashboard/logs'], ['keys', '/dashboard/api-keys'],
      ['team', '/dashboard/team'], ['audit', '/dashboard/team/audit'], ['security', '/dashboard/account'], ['branding', '/dashboard/branding'],
      ['payout', '/dashboard/payout-account'], ['activation', '/dashboard/activation'],
    ];
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await service?.stop();
  });

  async function contextFor(lang: Lang, width: number, signed: boolean): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, deviceScaleFactor: 1, locale: `${lang}-UZ` });
    context.setDefaultTimeout(5_000);
    const cookies = [{ name: 'tolov_lang', value: lang, url: base }];
    await context.addCookies(signed ? [...cookies, { name: SESSION_COOKIE, value: session, url: base }] : cookies);
    return context;
  }

  /** Opens `path`, with every closed section (the chart's figures) opened, and saves its screenshot. */
  async function visit(page: Page, path: string, shot: string): Promise<void> {
    const answer = await page.goto(`${base}${path}`);
    expect(answer?.status(), path).toBeLessThan(400);
    if (path.startsWith('/pay/') || path.startsWith('/bind/')) await page.locator('#view > *').first().waitFor();
    if (path === '/dashboard/overview') await page.locator('#activity-chart canvas').waitFor().catch(() => undefined);
    await page.evaluate(() => document.querySelectorAll('details').forEach((details) => (details.open = true)));
    await screenshot(page, `widths-${shot}`);
  }

  /** What is wrong with the page as it is shown: each problem as a line. */
  async function problemsOf(page: Page, name: string, width: number, t: (typeof MESSAGES)[Lang]): Promise<string[]> {
    const problems: string[] = [];
    const wider = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    if (wider > 0) problems.push(`${name}: the page is ${wider} px wider than the screen`);
    const cells = await cellsOf(page);
    for (const cell of cells.filter((c) => c.hidden)) problems.push(`${name}: "${cell.heading}" cell "${cell.text.slice(0, 40)}" ${cell.hidden}`);
    if (name === 'logs' && width > PHONE) {
      for (const cell of cells.filter((c) => c.heading === t.when && c.row >= 0 && c.lines > 2)) problems.push(`logs: "${cell.text}" takes ${cell.lines} lines`);
    }
    const wanted: Record<string, string[]> = {
      payments: [t.status, t.amount, t.card, t.created],
      receipts: [t.receiptType, t.status, t.amount, t.vat, t.payment],
      statement: [t.transactionType, t.amount, t.fee, t.net, t.status, t.availableOn, t.source],
      payouts: [t.amount, t.status, t.payoutKind, t.arrivalDate, t.destination, t.created],
    };
    if (wanted[name] && width === PHONE) {
      const rows = new Set(cells.filter((c) => c.row >= 0).map((c) => c.row));
      for (const row of rows) {
        for (const heading of wanted[name]!) {
          const cell = cells.find((c) => c.row === row && c.heading === heading);
          if (!cell || cell.text === '' || cell.hidden) problems.push(`${name}: row ${row} does not show its ${heading} (${cell?.hidden ?? 'no cell'})`);
        }
      }
    }
    return problems;
  }

  for (const lang of LANGS) {
    for (const width of WIDTHS) {
      it(`${lang} at ${width} px: the dashboard's pages and the hosted pages fit`, async () => {
        const t = MESSAGES[lang];
        const problems: string[] = [];
        for (const [signed, pages] of [[true, signedPages], [false, [['login', '/dashboard/login'], ['signup', '/dashboard/signup'], ['forgot', '/dashboard/password/forgot'], ...hostedPages]]] as const) {
          const context = await contextFor(lang, width, signed);
          const page = await context.newPage();
          // A script that fails leaves a page half drawn: its errors are problems too.
          page.on('pageerror', (error) => problems.push(`${page.url()}: ${error.message}`));
          for (const [name, path] of pages) {
            await visit(page, path, `${name}-${width}-${lang}`);
            problems.push(...(await problemsOf(page, name, width, t)));
            if (name === 'overview') problems.push(...(await chartProblems(page)));
            if (name === 'payout') {
              await refusePayoutForm(page);
              await screenshot(page, `widths-payout-refused-${width}-${lang}`);
              problems.push(...(await problemsOf(page, 'payout-refused', width, t)));
            }
          }
          await context.close();
        }
        expect(problems).toEqual([]);
      }, 180_000);
    }
  }
});
