// Every page a merchant or a buyer sees says everything in the page's language: statuses (the API's value kept in an
// attribute for engineers), numbers written as Intl writes them in that language, and Uzbek in its own letters — oʻ
// and gʻ with U+02BB, the tutuq belgisi with U+02BC, never a straight quote or a typographer's ‘ or ’.
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeMail, type AccountMail, type MailLang } from '../../src/modules/accounts/mail-texts.js';
import { codeNow } from '../../src/modules/accounts/second-factor.js';
import { accountKeyValid } from '../../src/modules/payouts/account-number.js';
import { ORDER_STATUSES } from '../../src/modules/orders/schema.js';
import { INTENT_STATUSES } from '../../src/modules/payments/schema.js';
import { RECEIPT_STATUSES, RECEIPT_TYPES } from '../../src/modules/receipts/schema.js';
import { STATEMENT_TYPES } from '../../src/modules/ledger/schema.js';
import { PAYOUT_STATUSES } from '../../src/modules/payouts/schema.js';
import { LANGUAGE_NAMES, MESSAGES, type MessageKey } from '../../src/web/dashboard/i18n.js';
import { bindCard, createBinding } from '../support/binding.js';
import { idem, startService, type TestService } from '../support/harness.js';
import { charge, chargeCard } from '../support/payments.js';
import { fiscalizeAll } from '../support/receipts.js';
import { makeAvailable, setPayoutAccount } from '../support/payouts.js';
import { DashboardClient, turnOnSecondFactor, uniqueEmail } from '../dashboard/client.js';

// The pages' own script, served as written (no types): the shape this test relies on.
const TEXTS_MODULE: string = '../../src/web/assets/i18n.js';
const { textsFor, LANGUAGES } = (await import(TEXTS_MODULE)) as { textsFor: (language: string) => Record<string, unknown>; LANGUAGES: Record<string, string> };

const LOCALES = { uz: 'uz-UZ', ru: 'ru-RU', en: 'en-US' } as const;
type Lang = keyof typeof LOCALES;

/** The API's statuses and codes, as they would leak onto a page untranslated: upper case, and in sentence case. */
const ENGLISH_WORDS = [
  ...new Set([
    ...INTENT_STATUSES, ...ORDER_STATUSES, ...RECEIPT_STATUSES, ...RECEIPT_TYPES.map((type) => type.toUpperCase()), ...PAYOUT_STATUSES,
    ...STATEMENT_TYPES.map((type) => type.toUpperCase()), 'AVAILABLE',
    'REFUNDED', 'CANCELLED', 'ACTIVE', 'BLOCKED', 'DELETED', 'DELIVERED', 'ENABLED', 'DISABLED', 'COMPLETED', 'AWAITING_CODE',
  ]),
].flatMap((word) => [word, word[0] + word.slice(1).toLowerCase().replaceAll('_', ' ')]);
const FAILURE_CODES = ['INSUFFICIENT_FUNDS', 'CARD_BLOCKED', 'PROCESSING_ERROR', 'INVALID_CODE', 'FISCAL_UNAVAILABLE', 'ACCOUNT_CLOSED'];
const ENGLISH = new RegExp(`(?<![\\p{L}_])(?:${[...ENGLISH_WORDS, ...FAILURE_CODES].join('|')})(?![\\p{L}_])`, 'u');
/** A letter, a quote that is not an Uzbek letter, a letter: where ʻ (oʻ, gʻ) or ʼ (maʼlumot) belongs. */
const WRONG_UZBEK_APOSTROPHE = /\p{L}['‘’`]\p{L}/u;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };
/** The text a reader sees: no attributes, no scripts, no code (ids, event types, API values shown as code), no addresses. */
const visibleText = (html: string) =>
  html
    .replace(/<(script|style|code|pre)\b[^>]*>[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#?\w+);/g, (whole, name: string) => ENTITIES[name] ?? whole)
    .replace(/\bhttps?:\/\/\S+/g, ' ')
    .replace(/[ \t\r\n]+/g, ' ');

const formatted = (lang: Lang, value: number, options: Intl.NumberFormatOptions) => new Intl.NumberFormat(LOCALES[lang], options).format(value);
const amountIn = (lang: Lang, tiyin: number) => formatted(lang, tiyin / 100, { minimumFractionDigits: 2, maximumFractionDigits: 2 });

let service: TestService;
let key: string;
const seeded = { receiptPayments: [] as string[], payments: [] as string[], orders: [] as string[], endpoints: [] as string[], payouts: [] as string[], refundedPayment: '', amounts: [] as number[], tokens: [] as string[], bindToken: '' };

const api = async (method: 'POST' | 'DELETE', url: string, body: Record<string, unknown> = {}) => {
  const reply = await service.call({ method, url, key, idempotencyKey: idem(), body });
  if (reply.status >= 300) throw new Error(`${method} ${url}: ${reply.text}`);
  return reply.body;
};

/** Payments in every status: charges that succeed and fail, the legacy pair's unconfirmed and canceled, one in flight. */
async function seedPayments(): Promise<void> {
  const good = await bindCard(service, key, '8600000000000007', { customerRef: 'mijoz-7' });
  const declined = await bindCard(service, key, '8600000000000015');
  const blocked = await bindCard(service, key, '8600000000000056');
  const unclear = await bindCard(service, key, '8600000000000031');
  const refundUnclear = await bindCard(service, key, '8600000000000064');
  for (const [card, amount] of [[good, 3_990_000], [good, 1_234_567_89], [good, 50_000], [declined, 70_000], [blocked, 80_000], [unclear, 90_000], [refundUnclear, 60_000]] as const) {
    seeded.payments.push((await charge(service, key, { amount, card })).body.id);
    seeded.amounts.push(amount);
  }
  const waiting = await api('POST', '/v1/payment_intents', { amount: 10_000, card: good });
  const canceled = await api('POST', '/v1/payment_intents', { amount: 20_000, card: good });
  await api('POST', `/v1/payment_intents/${canceled.id}/cancel`);
  seeded.payments.push(waiting.id, canceled.id);
  // Refunds: one done (its payment shows as refunded), one the bank has not answered yet, one the bank refused.
  seeded.refundedPayment = seeded.payments[2]!;
  await api('POST', '/v1/refunds', { paymentIntent: seeded.refundedPayment });
  await api('POST', '/v1/refunds', { paymentIntent: seeded.payments[6] });
  const refused = await api('POST', '/v1/refunds', { paymentIntent: seeded.payments[1] });
  await service.db.query(`UPDATE refunds SET status = 'FAILED', failure_code = 'PROCESSING_ERROR', reconcile_after = NULL WHERE id = $1`, [refused.id]);
  // Saved cards: active ones above, one deleted by the merchant, one the bank blocked.
  await api('DELETE', `/subscribe/v1/cards/${declined}`);
  await service.db.query(`UPDATE cards SET status = 'BLOCKED' WHERE id = $1`, [blocked]);
}

/**
 * Fiscal receipts in every status and of both types: a sale fiscalized and refunded (its return fiscalized too), one
 * the test module refuses (FAILED: the overview flags it), and one still PENDING.
 */
async function seedReceipts(): Promise<void> {
  const card = await bindCard(service, key, '8600000000000007');
  const lines = (code: string, price: number) => ({ items: [{ title: 'Atlas koʻylak', price, count: 2, code, packageCode: '1505709', vatPercent: 12, discount: 1_000 }], shipping: { title: 'Yetkazib berish', price: 5_000_00, code: '10112006002000000', packageCode: '1209779', vatPercent: 12 } });
  const sold = (await charge(service, key, { amount: 2 * 123_456_78 - 1_000 + 5_000_00, card, receipt: lines('10399001001000000', 123_456_78) })).body.id as string;
  await api('POST', '/v1/refunds', { paymentIntent: sold });
  const refused = (await charge(service, key, { amount: 2 * 45_000_00 - 1_000 + 5_000_00, card, receipt: lines('00000000000000000', 45_000_00) })).body.id as string;
  await fiscalizeAll(service);
  const pending = (await charge(service, key, { amount: 2 * 9_900_00 - 1_000 + 5_000_00, card, receipt: lines('10399001001000000', 9_900_00) })).body.id as string;
  seeded.receiptPayments.push(sold, refused, pending);
}

/** Orders in every status, each through the API (paid, failed, expired and canceled as a buyer and a shop make them). */
async function seedOrders(): Promise<void> {
  const order = async (amount: number) => (await api('POST', '/merchant/v1/orders', { amount, description: 'Atlas', customerRef: 'mijoz-7' })) as { id: string; paymentUrl: string };
  const pending = await order(39_900_00);
  const paid = await order(15_000_00);
  await api('POST', `/v1/test_helpers/orders/${paid.id}/pay`);
  const failed = await order(25_000_00);
  await service.call({ method: 'POST', url: `/v1/test_helpers/orders/${failed.id}/pay`, key, body: { card: '8600000000000015' } });
  const expired = await order(12_000_00);
  await api('POST', `/v1/test_helpers/orders/${expired.id}/expire`);
  const canceled = await order(7_500_00);
  await api('POST', `/merchant/v1/orders/${canceled.id}/cancel`);
  const all = [pending, paid, failed, expired, canceled];
  seeded.orders.push(...all.map((one) => one.id));
  seeded.tokens.push(...all.map((one) => new URL(one.paymentUrl).pathname));
  seeded.bindToken = new URL((await createBinding(service, key)).url).pathname;
}

/** Two endpoints, one disabled, with deliveries pending, delivered and failed, and attempts that got no answer. */
async function seedWebhooks(): Promise<void> {
  const enabled = await api('POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks' });
  const disabled = await api('POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/other' });
  await service.call({ method: 'POST', url: `/v1/webhook_endpoints/${disabled.id}`, key, body: { status: 'disabled' } });
  seeded.endpoints.push(enabled.id, disabled.id);
  // Events made after the endpoints exist, so that each endpoint has deliveries.
  const late = await api('POST', '/merchant/v1/orders', { amount: 5_000_00 });
  await api('POST', `/v1/test_helpers/orders/${late.id}/pay`);
  const late2 = await api('POST', '/merchant/v1/orders', { amount: 6_000_00 });
  await api('POST', `/v1/test_helpers/orders/${late2.id}/pay`);
  // One attempt each: refused by the closed port, or not made to the disabled endpoint; their reasons are on the pages.
  await service.webhooks.deliverDue(100);
  const deliveries = await service.db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY seq', [enabled.id]);
  expect(deliveries.length).toBeGreaterThanOrEqual(3);
  await service.db.query(`UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL, attempts = 1 WHERE id = $1`, [deliveries[0]!.id]);
  await service.db.query(`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, attempts = 1 WHERE id = $1`, [deliveries[1]!.id]);
}

/**
 * The owner turns the second factor on (their session proves it), sets the payout account and changes it: its page
 * shows the account and the form, and every page the hold's banner.
 */
async function seedPayoutAccount(email: string): Promise<void> {
  const seed = await turnOnSecondFactor(owner);
  const changed = Array.from({ length: 10 }, (_, key) => `20208000${key}05368527788`).find((number) => accountKeyValid('00440', number))!;
  for (const accountNumber of ['20208000505368522001', changed]) {
    // Each change wants the app's next code: the step last used is forgotten, as if half a minute had passed.
    await service.db.query('UPDATE users SET totp_last_step = NULL WHERE email = $1', [email]);
    const form = { bankMfo: '00440', accountNumber, tin: '301234567', holderName: '«Oʻrik va Gʻallaorol» MChJ', code: codeNow(seed), idempotencyKey: crypto.randomUUID() };
    expect((await owner.post('/dashboard/payout-account', form)).status).toBe(303);
  }
}

/**
 * Payouts in every status: paid (the automatic one), canceled, failed (the bank refused the account), in transit (the
 * bank has not answered) and pending; then payouts held again, as the changed account holds them.
 */
async function seedPayouts(): Promise<void> {
  const [{ product_id: productId }] = (await service.db.query<{ product_id: string }>('SELECT product_id FROM payment_intents WHERE id = $1', [seeded.payments[0]])) as [{ product_id: string }];
  await setPayoutAccount(service, productId);
  await makeAvailable(service, key, 5_000_000);
  const payOut = async (amount: number) => (await api('POST', '/v1/payouts', { amount })).id as string;
  const canceled = await payOut(100_000);
  await api('POST', `/v1/payouts/${canceled}/cancel`);
  await setPayoutAccount(service, productId, { last4: '0002' });
  const failed = await payOut(200_000);
  await service.payouts.sendDue(100);
  await setPayoutAccount(service, productId, { last4: '0003' });
  const unclear = await payOut(300_000);
  await service.payouts.sendDue(100);
  await setPayoutAccount(service, productId);
  const paid = (await api('POST', '/v1/test_helpers/payouts/run')).id as string;
  await makeAvailable(service, key, 1_000_000);
  const pending = await payOut(400_000);
  await setPayoutAccount(service, productId, { held: true });
  seeded.payouts.push(paid, canceled, failed, unclear, pending);
  // Making money available settled every payment: one more keeps a pending row in the statement.
  await chargeCard(service, key, '8600000000000007', 70_000);
}

let owner: DashboardClient;
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
  owner = new DashboardClient(service);
  const email = uniqueEmail('localized');
  await owner.signUp(email);
  await seedPayoutAccount(email);
  key = /sk_test_[0-9A-Za-z]{32}/.exec((await owner.post('/dashboard/api-keys', {})).html)![0];
  await seedWebhooks();
  await seedPayments();
  await seedOrders();
  await seedReceipts();
  await seedPayouts();
});
afterAll(async () => service.stop());

/** Every dashboard page of the seeded account, its lists filtered by each status too. */
function dashboardPaths(): string[] {
  const filtered = [
    ...INTENT_STATUSES.map((status) => `/dashboard/payments?status=${status}`),
    ...ORDER_STATUSES.map((status) => `/dashboard/orders?status=${status}`),
    ...[...RECEIPT_STATUSES.map((status) => `status=${status}`), ...RECEIPT_TYPES.map((type) => `type=${type}`)].map((query) => `/dashboard/receipts?${query}`),
    ...STATEMENT_TYPES.map((type) => `/dashboard/statement?type=${type}`),
    ...PAYOUT_STATUSES.map((status) => `/dashboard/payouts?status=${status}`),
  ];
  const lists = ['overview', 'start', 'payments', 'orders', 'refunds', 'statement', 'payouts', 'receipts', 'cards', 'events', 'logs', 'webhooks', 'api-keys', 'branding', 'payout-account', 'activation', 'team', 'team/audit', 'account'].map((path) => `/dashboard/${path}`);
  return [
    ...lists,
    ...filtered,
    ...[...seeded.payments, ...seeded.receiptPayments].map((id) => `/dashboard/payments/${id}`),
    ...seeded.orders.map((id) => `/dashboard/orders/${id}`),
    ...seeded.endpoints.map((id) => `/dashboard/webhooks/${id}`),
    ...seeded.payouts.flatMap((id) => [`/dashboard/payouts/${id}`, `/dashboard/statement?payout=${id}`]),
    '/dashboard/payments?from=2026-02-30',
  ];
}

/** The client's pages in `lang`, picked as a person picks it (the switcher's ?lang=, remembered in a cookie). */
async function inLanguage(client: DashboardClient, lang: Lang): Promise<void> {
  expect((await client.get(`/dashboard/login?lang=${lang}`)).status).toBe(303);
}

/** What is wrong with a page's visible text in `lang`: English status words, numbers written the English way, Uzbek quotes. */
function problemsOf(lang: Exclude<Lang, 'en'>, html: string): string[] {
  const text = visibleText(html);
  const checks: Array<[string, RegExp | null]> = [
    ['English', ENGLISH],
    ['a number written the English way', /\d\.\d|\d,\d{3}(?!\d)/],
    // Intl writes 60,0 % in Russian (a no-break space before %) and 60,0% in Uzbek.
    [`a percentage not written as Intl writes it in ${lang}`, lang === 'uz' ? /\d\s%/ : /\d(?: |\u202f)?%/],
    ['a quote for ʻ or ʼ', lang === 'uz' ? WRONG_UZBEK_APOSTROPHE : null],
  ];
  return checks.flatMap(([what, pattern]) =>
    pattern ? [...text.matchAll(new RegExp(pattern.source, `${pattern.flags}g`))].map((found) => `${what} "${found[0]}": …${text.slice(Math.max(0, found.index - 40), found.index + 40)}…`) : [],
  );
}

describe('the dashboard in Uzbek and Russian', () => {
  it.each(['uz', 'ru'] as const)('in %s says every status, number and letter in the language, on every page', async (lang) => {
    await inLanguage(owner, lang);
    // A refund refused (the payment was refunded already): its reason comes back to the page in the page's language.
    const refusal = await owner.post(`/dashboard/payments/${seeded.refundedPayment}/refund`, { idempotencyKey: crypto.randomUUID() });
    const problems: string[] = [];
    for (const path of [...dashboardPaths(), refusal.location!]) {
      const page = await owner.get(path);
      expect([200, 400], path).toContain(page.status);
      expect(page.html, path).toContain(`<html lang="${lang}">`);
      problems.push(...problemsOf(lang, page.html).map((problem) => `${path}: ${problem}`));
    }
    // The payout account's form refused: what is wrong with each field comes back in the page's language too.
    const form = { bankMfo: '00440', accountNumber: '20208000605368522001', tin: '1', holderName: ' ', code: '1', idempotencyKey: crypto.randomUUID() };
    const refused = await owner.post('/dashboard/payout-account', form);
    expect(refused.status).toBe(400);
    expect(refused.html).toContain(MESSAGES[lang].payoutFieldsInvalid);
    problems.push(...problemsOf(lang, refused.html).map((problem) => `the payout account refused: ${problem}`));
    // The activation request refused, every field wrong: each said in the page's language.
    const request = { legalName: '', tin: '1', legalAddress: '', website: 'x', category: 'x', bankMfo: '1', accountNumber: '1', holderTin: '1', holderName: '\u0007', code: '1', idempotencyKey: crypto.randomUUID() };
    const activation = await owner.post('/dashboard/activation', request);
    expect(activation.status).toBe(400);
    expect(activation.html).toContain(MESSAGES[lang].activationFieldsInvalid);
    problems.push(...problemsOf(lang, activation.html).map((problem) => `the activation request refused: ${problem}`));
    // "Pay out now" refused: the amount unreadable, then the payouts held; each said in the page's language.
    for (const amount of ['abc', '100']) {
      const payOut = await owner.post('/dashboard/payouts', { amount, idempotencyKey: crypto.randomUUID() });
      expect([400, 409]).toContain(payOut.status);
      problems.push(...problemsOf(lang, payOut.html).map((problem) => `pay out ${amount} refused: ${problem}`));
    }
    expect(problems).toEqual([]);
  });

  it.each(['uz', 'ru'] as const)('in %s says why a webhook attempt got no answer', async (lang) => {
    await inLanguage(owner, lang);
    const log = visibleText((await owner.get(`/dashboard/webhooks/${seeded.endpoints[0]}`)).html);
    expect(log).toContain(MESSAGES[lang].attemptRefused);
    expect(log).not.toContain(MESSAGES.en.attemptRefused);
  });

  it.each(['uz', 'ru', 'en'] as const)('in %s keeps the API’s status for engineers, in the filter’s values and the badge’s title', async (lang) => {
    await inLanguage(owner, lang);
    const payments = (await owner.get('/dashboard/payments')).html;
    for (const status of INTENT_STATUSES) {
      const option = new RegExp(`<option value="${status}">([^<]+)</option>`).exec(payments)?.[1];
      expect(option, status).toBeDefined();
      if (lang !== 'en') expect(option, status).not.toMatch(ENGLISH);
      else expect(option, status).toMatch(/^[A-Z][a-z ]+$/);
    }
    expect(payments).toMatch(/<span class="status s-succeeded" title="SUCCEEDED">[^<]+<\/span>/);
    expect(payments).toMatch(/<span class="status s-refunded" title="SUCCEEDED">[^<]+<\/span>/);
    const receipts = (await owner.get('/dashboard/receipts')).html;
    for (const [value, word] of [...RECEIPT_STATUSES.map((status) => [status, MESSAGES[lang][`receipt_${status.toLowerCase() as Lowercase<typeof status>}`]]), ...RECEIPT_TYPES.map((type) => [type, MESSAGES[lang][`receiptType_${type}`]])]) {
      expect(receipts, value).toContain(`<option value="${value}">${word}</option>`);
    }
    for (const status of RECEIPT_STATUSES) expect(receipts, status).toContain(`<span class="status s-${status.toLowerCase()}" title="${status}">${MESSAGES[lang][`receipt_${status.toLowerCase() as Lowercase<typeof status>}`]}</span>`);
    expect(receipts).toContain(`<span title="return">${MESSAGES[lang].receiptType_return}</span>`);
    const statement = (await owner.get('/dashboard/statement')).html;
    for (const type of STATEMENT_TYPES) expect(statement, type).toContain(`<option value="${type}">${MESSAGES[lang][`balanceType_${type}`]}</option>`);
    for (const status of ['pending', 'available'] as const) {
      expect(statement, status).toContain(`<span class="status s-${status}" title="${status}">${MESSAGES[lang][`balance_${status}`]}</span>`);
    }
    for (const type of ['charge', 'refund'] as const) expect(statement, type).toContain(`<span title="${type}">${MESSAGES[lang][`balanceType_${type}`]}</span>`);
  });

  it.each(['uz', 'ru', 'en'] as const)('in %s writes amounts, counts and the success rate as Intl writes them', async (lang) => {
    await inLanguage(owner, lang);
    const payments = visibleText((await owner.get('/dashboard/payments')).html);
    for (const amount of seeded.amounts) expect(payments, `${amount}`).toContain(amountIn(lang, amount));
    // The statement's amounts too, a refund's negative one and a fee among them (1% of 500.00 so'm).
    const statement = visibleText((await owner.get(`/dashboard/statement?q=${seeded.refundedPayment}`)).html);
    expect(statement).toContain(amountIn(lang, 50_000));
    expect(statement).toContain(amountIn(lang, 500));
    const refunded = visibleText((await owner.get('/dashboard/statement?type=refund')).html);
    expect(refunded).toContain(amountIn(lang, -50_000));
    const [counts] = await service.db.query<{ succeeded: number; failed: number }>(
      `SELECT count(*) FILTER (WHERE status = 'SUCCEEDED')::int AS succeeded, count(*) FILTER (WHERE status = 'FAILED')::int AS failed
         FROM payment_intents WHERE livemode = false AND product_id = (SELECT product_id FROM payment_intents WHERE id = $1)`,
      [seeded.payments[0]],
    );
    const { succeeded, failed } = counts!;
    const overview = (await owner.get('/dashboard/overview')).html;
    const rate = formatted(lang, succeeded / (succeeded + failed), { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 });
    expect(overview).toContain(`<p class="tile-value">${rate}</p>`);
  });

  it.each(['uz', 'ru', 'en'] as const)('in %s draws the chart’s axes with the numbers of the page’s language, in a browser without its data', async (lang) => {
    await inLanguage(owner, lang);
    const overview = (await owner.get('/dashboard/overview')).html;
    const axes = await chartAxes(overview);
    // Whole or short ("40 ming", "40 тыс."), the axis writes a number as Intl does in the page's language.
    const either = (value: number) => [formatted(lang, value, {}), formatted(lang, value, { notation: 'compact', maximumFractionDigits: 2 })];
    const ticks = [0, 0.5, 20_000, 40_000, 1_250_000, 3_000_000_000];
    axes.amounts(ticks).forEach((label, index) => expect(either(ticks[index]!), label).toContain(label));
    // Days too: 27-okt, 27 окт., Oct 27 — not uPlot's English 10/27.
    const today = new Date().toISOString().slice(0, 10);
    expect(axes.days([Date.parse(`${today}T00:00:00Z`) / 1000])).toEqual([new Intl.DateTimeFormat(LOCALES[lang], { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(new Date(`${today}T00:00:00Z`))]);
  });
});

/** The data attributes of the chart's element, as the browser's dataset gives them. */
function chartDataset(html: string): Record<string, string> {
  const element = /<div class="chart" id="activity-chart"([^>]*)>/.exec(html)?.[1] ?? '';
  const dataset: Record<string, string> = {};
  for (const [, name, value] of element.matchAll(/ data-([\w-]+)="([^"]*)"/g)) {
    dataset[name!.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase())] = value!.replace(/&(#?\w+);/g, (whole, entity: string) => ENTITIES[entity] ?? whole);
  }
  return dataset;
}

/** The overview's script run on the page's chart element, with uPlot standing in: the axes it would draw. */
async function chartAxes(html: string): Promise<{ amounts: (ticks: number[]) => string[]; days: (ticks: number[]) => string[] }> {
  const script = (await service.app.inject({ method: 'GET', url: '/assets/overview.js' })).body;
  let options: { axes: Array<{ values?: (u: unknown, ticks: number[]) => string[] }> } | undefined;
  class UPlot {
    static tzDate = (date: Date) => date;
    static paths = { bars: () => () => null };
    constructor(given: typeof options) {
      options = given;
    }
    setSize(): void {}
  }
  const box = { dataset: chartDataset(html), clientWidth: 900, clientHeight: 280 };
  const style = { getPropertyValue: () => '', paddingLeft: '0px', paddingRight: '0px' };
  // The document's own language is left out: the chart takes its language from its element, as the page gives it.
  const document = { getElementById: () => box, documentElement: { lang: '' } };
  // Chromium has no Uzbek number data: its Intl writes every language's numbers as English ones.
  const englishOnly = { ...Intl, NumberFormat: function NumberFormat(_locale: string, options: Intl.NumberFormatOptions) { return new Intl.NumberFormat('en-US', options); } };
  vm.runInNewContext(script, { document, window: { uPlot: UPlot }, Intl: englishOnly, getComputedStyle: () => style, ResizeObserver: class { observe(): void {} } });
  const amountsAxis = options!.axes.find((axis) => (axis as { scale?: string }).scale === 'uzs')!;
  return { amounts: (ticks) => amountsAxis.values!(null, ticks), days: (ticks) => options!.axes[0]!.values!(null, ticks) };
}

describe('the hosted pages in Uzbek and Russian', () => {
  it.each(['uz', 'ru'] as const)('in %s say every state, amount and letter in the language', async (lang) => {
    const problems: string[] = [];
    for (const path of [...seeded.tokens, seeded.bindToken, '/pay/cs_unknown']) {
      const page = await service.call({ method: 'GET', url: `${path}?lang=${lang}` });
      expect(page.text, path).toContain(`<html lang="${lang}">`);
      problems.push(...problemsOf(lang, page.text).map((problem) => `${path}: ${problem}`));
    }
    const open = await service.call({ method: 'GET', url: `${seeded.tokens[0]}?lang=${lang}` });
    expect(visibleText(open.text)).toContain(amountIn(lang, 39_900_00));
    expect(problems).toEqual([]);
  });
});

describe('the words of every language', () => {
  /** Texts that are the same in every language: codes, and a unit Uzbek writes as English does (ms). */
  const SAME_EVERYWHERE = new Set<MessageKey>(['id', 'idempotencyKey', 'durationMs']);

  it('exist for every key in the three languages, each language its own', () => {
    const keys = Object.keys(MESSAGES.en) as MessageKey[];
    for (const lang of ['uz', 'ru'] as const) expect(Object.keys(MESSAGES[lang]).sort(), lang).toEqual([...keys].sort());
    const same = keys.filter((name) => !SAME_EVERYWHERE.has(name)).flatMap((name) => {
      const [uz, ru, en] = [MESSAGES.uz[name], MESSAGES.ru[name], MESSAGES.en[name]];
      return [uz === en ? `uz=en ${name}: ${uz}` : null, ru === en ? `ru=en ${name}: ${ru}` : null, uz === ru ? `uz=ru ${name}: ${uz}` : null].filter(Boolean);
    });
    expect(same).toEqual([]);
  });

  it('write Uzbek with oʻ, gʻ (U+02BB) and ʼ (U+02BC): in the dashboard, the hosted pages and the mail', () => {
    const wrong = (text: string) => WRONG_UZBEK_APOSTROPHE.test(text) || /[oOgG]ʼ/.test(text);
    const dashboard = Object.entries(MESSAGES.uz).filter(([, text]) => wrong(text));
    expect(dashboard).toEqual([]);
    expect(LANGUAGE_NAMES.uz).toBe('Oʻzbekcha');
    expect(LANGUAGES.uz).toBe('Oʻzbekcha');
    const pages = leaves(textsFor('uz')).filter((text) => wrong(text));
    expect(pages).toEqual([]);
    const mails = allMails('uz').filter((mail) => wrong(mail.subject) || wrong(mail.text));
    expect(mails).toEqual([]);
  });

  it('differ between the languages on the hosted pages and in the mail', () => {
    const [uz, ru, en] = (['uz', 'ru', 'en'] as const).map((lang) => leaves(textsFor(lang)));
    const same = en!.flatMap((text, index) => (text === uz![index] || text === ru![index] || uz![index] === ru![index] ? [`${text} | ${uz![index]} | ${ru![index]}`] : []));
    expect(same).toEqual([]);
    const mails = (['uz', 'ru', 'en'] as const).map((lang) => allMails(lang).map((mail) => mail.subject));
    expect(new Set(mails.flat()).size).toBe(mails.flat().length);
  });
});

/** Every text of the hosted pages, functions called with sample values, in a fixed order. */
function leaves(texts: Record<string, unknown>): string[] {
  return Object.keys(texts)
    .sort()
    .flatMap((name) => {
      const value = texts[name];
      if (typeof value === 'function') return [String((value as (...args: unknown[]) => unknown)('X', 2))];
      if (value !== null && typeof value === 'object') return leaves(value as Record<string, unknown>);
      return [String(value)];
    });
}

function allMails(lang: MailLang): Array<{ subject: string; text: string }> {
  const mails: AccountMail[] = [
    { kind: 'confirm_signup', link: 'https://tolov.uz/x', business: 'Chorsu' },
    { kind: 'invitation', link: 'https://tolov.uz/x', account: 'Chorsu', role: 'developer' },
    { kind: 'account_exists', login: 'https://tolov.uz/l', forgot: 'https://tolov.uz/f' },
    { kind: 'reset_password', link: 'https://tolov.uz/x' },
    { kind: 'password_changed', email: 'a@b.uz', forgot: 'https://tolov.uz/f' },
  ];
  return mails.map((mail) => composeMail(lang, mail));
}
