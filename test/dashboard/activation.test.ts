// Going live in the dashboard: the activation request's status for every member in each state (not submitted, under
// review, approved, rejected with the operator's reason, live mode opened without a request); the owner's form, with a
// fresh authenticator code as for the payout account, each field's mistake said at it before the code is spent; the
// operator's queue, approval (live mode on, the live payout account the request's) and rejection, then a corrected
// request. In Chromium: the whole way from the form to a live payment at the bank simulator, and a 390 px phone.
import type { Browser, Page as BrowserPage } from 'playwright-core';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/web/html.js';
import { MESSAGES, type Lang } from '../../src/web/dashboard/i18n.js';
import { SESSION_COOKIE } from '../../src/web/dashboard/context.js';
import { when } from '../../src/web/dashboard/layout.js';
import { browserAvailable, launchBrowser, openWatched, screenshot } from '../support/browser.js';
import { engine, idem, type TestService } from '../support/harness.js';
import { bindLiveCard, startLive, type Live } from '../support/live.js';
import { receiptFor } from '../support/receipts.js';
import { DashboardClient, freshCode as nextFreshCode, ownerWithSecondFactor as signUpOwner, uniqueEmail, wrongCodeOf } from './client.js';

let live: Live;
let service: TestService;
beforeAll(async () => {
  live = await startLive();
  service = live.service;
});
afterAll(async () => live.stop());

const PATH = '/dashboard/activation';
const PASSWORD = 'correct horse battery';
const { en, ru, uz } = MESSAGES;
/** A message as the page writes it (escaped), with its parameters. */
const said = (text: string, params: Record<string, string> = {}) => escapeHtml(text.replace(/\{(\w+)\}/g, (_, name: string) => params[name]!));

type Request = Record<'legalName' | 'tin' | 'legalAddress' | 'website' | 'category' | 'bankMfo' | 'accountNumber' | 'holderTin' | 'holderName', string>;
/** A request as an owner fills it in: the shop's Telegram link typed without https://, the account the business's own. */
const REQUEST: Request = {
  legalName: '«Chorsu Market» MChJ',
  tin: '301234567',
  legalAddress: 'Toshkent sh., Chilonzor tumani, Bunyodkor koʻchasi, 12-uy',
  website: 't.me/chorsumarket',
  category: 'retail',
  bankMfo: '00440',
  accountNumber: '20208000505368522001',
  holderTin: '',
  holderName: '',
};
const BAD_CHECK_DIGIT = '20208000605368522001';

interface Owner {
  client: DashboardClient;
  email: string;
  seed: string;
  productId: string;
}

const productOf = async (email: string) =>
  (await service.db.query<{ id: string }>('SELECT p.id FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1', [email]))[0]!.id;

/** A new account's owner who turned the second factor on, with their product's id. */
async function ownerWithSecondFactor(name = 'activation'): Promise<Owner> {
  const owner = await signUpOwner(service, name);
  return { ...owner, productId: await productOf(owner.email) };
}

const freshCode = (owner: Owner) => nextFreshCode(service, owner);

/** Posts the page's form: a new form (a new idempotency key) each time. */
const submit = (client: DashboardClient, request: Partial<Request>, code: string) => client.post(PATH, { ...request, code, idempotencyKey: randomUUID() });

/** A member of the owner's account with `role`, signed in. */
async function member(owner: Owner, role: 'developer' | 'viewer'): Promise<DashboardClient> {
  const email = uniqueEmail(role);
  expect((await owner.client.post('/dashboard/team/invite', { email, role })).status).toBe(201);
  const path = await owner.client.invitationFor(email);
  const client = new DashboardClient(service);
  expect((await client.post(path, { password: PASSWORD })).location).toBe('/dashboard');
  return client;
}

const operatorView = (productId: string) => service.admin('GET', `/admin/v1/products/${productId}/activation`);
const approve = (productId: string) => service.admin('POST', `/admin/v1/products/${productId}/activation/approve`);
const reject = (productId: string, reason: string) => service.admin('POST', `/admin/v1/products/${productId}/activation/reject`, { reason });

/** The status card's badge, as the page writes it. */
const statusOn = (html: string) => /<h2 id="activation-status-title">[^<]*<span class="status s-(\w+)">([^<]*)<\/span>/.exec(html)?.slice(1, 3);
const hasForm = (html: string) => html.includes('id="activation-form-title"');
/** A field's value as the form shows it. */
const valueOn = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
const fieldError = (name: string, text: string) => `<p class="field-error" id="activation-${name}-error">${text}</p>`;

/** The rows of the account's audit log (as its owner reads it) that record `action`. */
async function auditRows(owner: Owner, action: string): Promise<string[]> {
  const log = (await owner.client.get('/dashboard/team/audit')).html;
  return log.split('<tr>').filter((row) => row.includes(`<code>${action}</code>`));
}

describe('the page before a request', () => {
  it('is reachable from the navigation, the disabled live switch’s explanation and Get started, and offers an owner the form', async () => {
    const owner = await ownerWithSecondFactor();
    const overview = (await owner.client.get('/dashboard/overview')).html;
    expect(overview).toContain(`<a href="/dashboard/start">${en.navStart}</a><a href="${PATH}">${en.navActivation}</a>`);
    expect(overview).toContain(`<p class="hint" id="live-off">${said(en.liveOffExplained)} <a href="${PATH}">${said(en.liveOffLink)}</a></p>`);
    expect((await owner.client.get('/dashboard/start')).html).toContain(`${said(en.startGoLiveText)} <a href="${PATH}">${en.navActivation}</a>`);

    const shown = await owner.client.get(PATH);
    expect(shown.status).toBe(200);
    expect(shown.html).toContain(`<a href="${PATH}" aria-current="page">`);
    expect(statusOn(shown.html)).toEqual(['not_submitted', en.activation_not_submitted]);
    expect(shown.html).toContain(said(en.activationNotSubmittedText));
    expect(hasForm(shown.html)).toBe(true);
    for (const name of ['legalName', 'tin', 'website', 'bankMfo', 'accountNumber', 'holderTin', 'holderName', 'code']) expect(shown.html, name).toContain(`name="${name}" value=""`);
    expect(shown.html).toMatch(/<textarea id="activation-legalAddress" name="legalAddress"[^>]*required[^>]*><\/textarea>/);
    // Every category, by its label, after an empty choice that asks for one.
    expect(shown.html).toContain(`<option value="">${said(en.categoryChoose)}</option><option value="retail">Retail</option><option value="food_and_drink">Food and drink</option>`);
    expect(shown.html).toContain('<option value="digital_goods">Digital goods and subscriptions</option><option value="other">Other</option></select>');
    // The holder's fields may be left empty (the business's are used); the others are required.
    expect(shown.html).toMatch(/name="holderTin" value=""(?![^>]*required)[^>]*>/);
    expect(shown.html).toMatch(/name="legalName" value=""[^>]*required/);
    expect((await operatorView(owner.productId)).status).toBe(404);
  });

  it('opens no form for an owner without the second factor, nor for one whose session did not prove it; their POST sends nothing', async () => {
    const email = uniqueEmail('no-factor');
    const client = new DashboardClient(service);
    await client.signUp(email);
    const shown = await client.get(PATH);
    expect(shown.html).toContain(said(en.activationNeedsSecondFactor));
    expect(shown.html).toContain('<a href="/dashboard/account">');
    expect(hasForm(shown.html)).toBe(false);
    const posted = await submit(client, REQUEST, '123456');
    expect(posted.status).toBe(403);
    expect(posted.html).toContain(said(en.activationSecondFactorRefused));
    expect((await operatorView(await productOf(email))).status).toBe(404);

    const owner = await ownerWithSecondFactor();
    await service.db.query('UPDATE dashboard_sessions SET second_factor = false WHERE token_hash = sha256($1::bytea)', [Buffer.from(owner.client.cookies.get(SESSION_COOKIE)!)]);
    expect((await owner.client.get(PATH)).html).toContain(said(en.payoutNeedsProof));
    const unproved = await submit(owner.client, REQUEST, await freshCode(owner));
    expect(unproved.status).toBe(403);
    expect(unproved.html).toContain(said(en.activationSecondFactorRefused));
    expect((await operatorView(owner.productId)).status).toBe(404);
  });

  it('shows developers and viewers the status with no form, and refuses their POST', async () => {
    const owner = await ownerWithSecondFactor();
    for (const role of ['developer', 'viewer'] as const) {
      const client = await member(owner, role);
      const shown = await client.get(PATH);
      expect(shown.status, role).toBe(200);
      expect(statusOn(shown.html), role).toEqual(['not_submitted', en.activation_not_submitted]);
      expect(shown.html, role).toContain(said(en.activationOwnersOnly));
      expect(hasForm(shown.html), role).toBe(false);
      const posted = await submit(client, REQUEST, await freshCode(owner));
      expect(posted.status, role).toBe(403);
      expect(posted.html, role).toContain(said(en.forbidden));
    }
    expect((await operatorView(owner.productId)).status).toBe(404);
  });
});

describe('submitting', () => {
  it('sends the request: under review since then, shown to the team masked, in the operator’s queue, audited; a second one is refused', async () => {
    const owner = await ownerWithSecondFactor();
    const sent = await submit(owner.client, REQUEST, await freshCode(owner));
    expect(sent.status).toBe(303);
    expect(sent.location).toBe(`${PATH}?done=submitted`);

    const request = await operatorView(owner.productId);
    expect(request.status).toBe(200);
    // The link takes https://, and the holder's fields left empty take the business's.
    expect(request.body).toMatchObject({
      status: 'submitted',
      legalName: REQUEST.legalName,
      tin: REQUEST.tin,
      legalAddress: REQUEST.legalAddress,
      website: 'https://t.me/chorsumarket',
      category: 'retail',
      payoutAccount: { bankMfo: '00440', accountLast4: '2001', tin: REQUEST.tin, holderName: REQUEST.legalName },
      rejectionReason: null,
      decided: null,
    });

    const shown = await owner.client.get(sent.location!);
    expect(shown.html).toContain(said(en.activationSubmittedDone));
    expect(statusOn(shown.html)).toEqual(['submitted', en.activation_submitted]);
    expect(shown.html).toContain(said(en.activationSubmittedText, { since: when(request.body.submitted) }));
    expect(hasForm(shown.html)).toBe(false);
    expect(shown.html).toContain(`<dd class="masked">00440\u00a0••••\u00a02001</dd>`);
    expect(shown.html).toContain('<dd>Retail</dd>');
    expect(shown.html).toContain('<a href="https://t.me/chorsumarket" rel="noopener noreferrer">https://t.me/chorsumarket</a>');
    expect(shown.html).not.toContain(REQUEST.accountNumber);

    const viewer = await member(owner, 'viewer');
    const seen = (await viewer.get(PATH)).html;
    expect(statusOn(seen)).toEqual(['submitted', en.activation_submitted]);
    expect(seen).toContain(`<dd>${said(REQUEST.legalName)}</dd>`);
    expect(seen).not.toContain(REQUEST.accountNumber);

    const queue = await service.admin('GET', '/admin/v1/activations?status=submitted&limit=100');
    expect(queue.status).toBe(200);
    expect(queue.body.data.filter((one: { product: string }) => one.product === owner.productId)).toHaveLength(1);
    const [row, ...more] = await auditRows(owner, 'activation.submitted');
    expect(more).toHaveLength(0);
    expect(row).toContain(owner.email);

    // Under review, nothing can be sent again, and no code is spent on trying.
    const code = await freshCode(owner);
    const again = await submit(owner.client, { ...REQUEST, legalName: 'Another MChJ' }, code);
    expect(again.status).toBe(409);
    expect(again.html).toContain(said(en.activationRefusedUnderReview));
    expect((await operatorView(owner.productId)).body).toMatchObject({ legalName: REQUEST.legalName, submitted: request.body.submitted });
    // The code is still good: it confirms another change.
    const payoutAccount = { bankMfo: '00440', accountNumber: REQUEST.accountNumber, tin: REQUEST.tin, holderName: REQUEST.legalName, code, idempotencyKey: randomUUID() };
    expect((await owner.client.post('/dashboard/payout-account', payoutAccount)).status).toBe(303);
  });

  it('names each bad field next to it, in the page’s language, keeps what was typed but the account number, and spends no code', async () => {
    const owner = await ownerWithSecondFactor();
    owner.client.lang = 'ru';
    const code = await freshCode(owner);
    const bad = { legalName: ' ', tin: '30123456', legalAddress: '', website: 'chorsu market', category: 'casino', bankMfo: '440', accountNumber: '2020800050536852', holderTin: '12', holderName: 'A\u0007B' };
    const refused = await submit(owner.client, bad, code.slice(0, 5));
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('<html lang="ru">');
    expect(refused.html).toContain(said(ru.activationFieldsInvalid));
    const errors: Array<[string, string]> = [
      ['legalName', said(ru.legalNameInvalid, { max: '200' })],
      ['tin', said(ru.tinInvalid)],
      ['legalAddress', said(ru.legalAddressInvalid, { max: '500' })],
      ['website', said(ru.websiteInvalid)],
      ['category', said(ru.categoryInvalid)],
      ['bankMfo', said(ru.bankMfoInvalid)],
      ['accountNumber', said(ru.accountNumberInvalid)],
      ['holderTin', said(ru.tinInvalid)],
      ['holderName', said(ru.holderNameInvalid, { max: '200' })],
      ['code', said(ru.payoutCodeFormat)],
    ];
    for (const [name, text] of errors) {
      expect(refused.html, name).toContain(fieldError(name, text));
      expect(refused.html, name).toMatch(new RegExp(`name="${name}"[^>]*aria-describedby="activation-${name}-error activation-${name}-hint" aria-invalid="true"`));
    }
    // The first wrong field takes the focus; what was typed comes back, the account number excepted.
    expect(refused.html).toMatch(/name="legalName"[^>]*aria-invalid="true" autofocus>/);
    expect(refused.html.match(/autofocus/g)).toHaveLength(1);
    expect(valueOn(refused.html, 'website')).toBe('chorsu market');
    expect(valueOn(refused.html, 'bankMfo')).toBe('440');
    expect(valueOn(refused.html, 'accountNumber')).toBe('');
    expect(refused.html).not.toContain('2020800050536852');
    expect((await operatorView(owner.productId)).status).toBe(404);

    // The same code still works: nothing was spent.
    expect((await submit(owner.client, REQUEST, code)).status).toBe(303);
  });

  it('refuses an account whose check digit does not match its bank, on the account number, spending no code', async () => {
    const owner = await ownerWithSecondFactor();
    const code = await freshCode(owner);
    const refused = await submit(owner.client, { ...REQUEST, accountNumber: BAD_CHECK_DIGIT }, code);
    expect(refused.status).toBe(400);
    expect(refused.html).toContain(fieldError('accountNumber', said(en.accountNumberCheckDigit, { mfo: '00440' })));
    expect(refused.html).not.toContain('id="activation-bankMfo-error"');
    expect(refused.html).not.toContain(BAD_CHECK_DIGIT);
    expect(valueOn(refused.html, 'legalName')).toBe(escapeHtml(REQUEST.legalName));
    expect(refused.html).toContain('<option value="retail" selected>Retail</option>');
    expect((await operatorView(owner.productId)).status).toBe(404);
    expect((await submit(owner.client, REQUEST, code)).status).toBe(303);
  });

  it('refuses a wrong code in the page’s language, sends nothing, and shows the owners the attempt', async () => {
    const owner = await ownerWithSecondFactor();
    owner.client.lang = 'uz';
    const refused = await submit(owner.client, { ...REQUEST, holderName: 'Karimova Nodira' }, wrongCodeOf(owner));
    expect(refused.status).toBe(401);
    expect(refused.html).toContain('<html lang="uz">');
    expect(refused.html).toContain(said(uz.activationCodeWrong));
    expect(refused.html).toContain(fieldError('code', said(uz.payoutCodeWrongField)));
    expect(refused.html).toMatch(/name="accountNumber" value=""[^>]*aria-invalid="true" autofocus>/);
    expect(refused.html).toContain(fieldError('accountNumber', said(uz.accountNumberAgain)));
    expect(valueOn(refused.html, 'holderName')).toBe('Karimova Nodira');
    expect(refused.html).not.toContain(REQUEST.accountNumber);
    expect((await operatorView(owner.productId)).status).toBe(404);
    const [row] = await auditRows(owner, 'activation.submit_refused');
    expect(row).toContain(owner.email);
    expect(row).toContain('00440 ••••2001');
  });

  it('takes a form only with its token', async () => {
    const owner = await ownerWithSecondFactor();
    const code = await freshCode(owner);
    expect((await owner.client.post(PATH, { ...REQUEST, code, idempotencyKey: randomUUID() }, { csrf: null })).status).toBe(403);
    expect((await owner.client.post(PATH, { ...REQUEST, code, idempotencyKey: randomUUID() }, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await operatorView(owner.productId)).status).toBe(404);
  });
});

describe('the operator’s answer', () => {
  it('approved: live mode is on, the owner switches to it, makes a live key, and the live payout account is the request’s', async () => {
    const owner = await ownerWithSecondFactor();
    expect((await submit(owner.client, REQUEST, await freshCode(owner))).status).toBe(303);
    const approved = await approve(owner.productId);
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', decided: expect.any(String) });

    const shown = (await owner.client.get(PATH)).html;
    expect(statusOn(shown)).toEqual(['approved', en.activation_approved]);
    expect(shown).toContain(said(en.activationApprovedText, { when: when(approved.body.decided) }));
    expect(shown).toContain(said(en.activationStepPayouts, { account: '00440\u00a0••••\u00a02001' }));
    expect(hasForm(shown)).toBe(false);
    // The live switch is enabled now, at the top and among the next steps.
    expect(shown).not.toContain('id="live-off"');
    expect(shown).toMatch(/<form method="post" action="\/dashboard\/mode">.*<input type="hidden" name="mode" value="live"><button type="submit" class="primary">Switch to live mode<\/button><\/form>/s);

    const refused = await submit(owner.client, REQUEST, await freshCode(owner));
    expect(refused.status).toBe(409);
    expect(refused.html).toContain(said(en.activationRefusedLive));

    expect((await owner.client.post('/dashboard/mode', { mode: 'live' }, {})).status).toBe(303);
    expect((await owner.client.get(PATH)).html).toContain(said(en.activationStepSwitched));
    const created = await owner.client.post('/dashboard/api-keys', { idempotencyKey: randomUUID(), password: PASSWORD });
    const liveKey = /id="new-key">(sk_live_\w+)</.exec(created.html)?.[1];
    expect(liveKey, created.html.slice(0, 500)).toBeDefined();
    const account = await service.call({ method: 'GET', url: '/v1/payout_account', key: liveKey! });
    expect(account.status).toBe(200);
    expect(account.body).toMatchObject({ livemode: true, bankMfo: '00440', accountLast4: '2001', tin: REQUEST.tin, holderName: REQUEST.legalName, payoutsHeldUntil: null });
    const events = await service.call({ method: 'GET', url: '/v1/events?type=payout_account.updated', key: liveKey! });
    expect(events.body.data).toHaveLength(1);

    const developer = await member(owner, 'developer');
    expect(statusOn((await developer.get(PATH)).html)).toEqual(['approved', en.activation_approved]);
  });

  it('rejected: the reason on the page, the form prefilled but for the account number; corrected and submitted again', async () => {
    const owner = await ownerWithSecondFactor();
    expect((await submit(owner.client, { ...REQUEST, holderName: 'Karimova Nodira', holderTin: '412345678' }, await freshCode(owner))).status).toBe(303);
    const reason = 'The TIN does not match the <legal name>: check it against the registration certificate.';
    const rejected = await reject(owner.productId, reason);
    expect(rejected.status, rejected.text).toBe(200);

    const shown = (await owner.client.get(PATH)).html;
    expect(statusOn(shown)).toEqual(['rejected', en.activation_rejected]);
    expect(shown).toContain(said(en.activationRejectedText, { when: when(rejected.body.decided) }));
    expect(shown).toContain(`<blockquote class="reason">${escapeHtml(reason)}</blockquote>`);
    expect(shown).toContain(said(en.activationRejectedOwner));
    // The address that said "sent", opened again after the answer, says only the answer.
    expect((await owner.client.get(`${PATH}?done=submitted`)).html).not.toContain(said(en.activationSubmittedDone));
    expect(shown).toContain(said(en.activationFormTitleAgain));
    expect(valueOn(shown, 'legalName')).toBe(escapeHtml(REQUEST.legalName));
    expect(valueOn(shown, 'tin')).toBe(REQUEST.tin);
    expect(valueOn(shown, 'website')).toBe('https://t.me/chorsumarket');
    expect(valueOn(shown, 'bankMfo')).toBe('00440');
    expect(valueOn(shown, 'holderTin')).toBe('412345678');
    expect(valueOn(shown, 'holderName')).toBe('Karimova Nodira');
    expect(shown).toContain(`>${escapeHtml(REQUEST.legalAddress)}</textarea>`);
    expect(shown).toContain('<option value="retail" selected>Retail</option>');
    expect(valueOn(shown, 'accountNumber')).toBe('');
    expect(shown).toContain(`<p class="hint" id="activation-accountNumber-hint">${said(en.accountNumberSentEnding, { last4: '2001' })}</p>`);
    expect(shown).not.toContain(REQUEST.accountNumber);

    const viewer = await member(owner, 'viewer');
    const seen = (await viewer.get(PATH)).html;
    expect(seen).toContain(`<blockquote class="reason">${escapeHtml(reason)}</blockquote>`);
    expect(seen).toContain(said(en.activationRejectedOthers));
    expect(hasForm(seen)).toBe(false);

    const corrected = await submit(owner.client, { ...REQUEST, tin: '309876543', holderTin: '', holderName: '' }, await freshCode(owner));
    expect(corrected.status).toBe(303);
    expect((await operatorView(owner.productId)).body).toMatchObject({ status: 'submitted', tin: '309876543', rejectionReason: null, decided: null, payoutAccount: { tin: '309876543' } });
    expect(statusOn((await owner.client.get(PATH)).html)).toEqual(['submitted', en.activation_submitted]);
    const queue = (await service.admin('GET', '/admin/v1/activations?status=submitted&limit=100')).body.data as Array<{ product: string }>;
    expect(queue.map((one) => one.product)).toContain(owner.productId);
    const rejectedQueue = (await service.admin('GET', '/admin/v1/activations?status=rejected&limit=100')).body.data as Array<{ product: string }>;
    expect(rejectedQueue.map((one) => one.product)).not.toContain(owner.productId);
  });

  it('live mode opened by the operator without a request: nothing to request, and a POST sends nothing', async () => {
    const owner = await ownerWithSecondFactor();
    expect((await service.admin('POST', `/admin/v1/products/${owner.productId}/live`)).status).toBe(200);
    const shown = (await owner.client.get(PATH)).html;
    expect(statusOn(shown)).toEqual(['live', en.activation_live]);
    expect(shown).toContain(said(en.activationLiveText));
    expect(hasForm(shown)).toBe(false);
    const refused = await submit(owner.client, REQUEST, await freshCode(owner));
    expect(refused.status).toBe(409);
    expect(refused.html).toContain(said(en.activationRefusedLive));
    expect((await operatorView(owner.productId)).status).toBe(404);
  });
});

describe.runIf(browserAvailable())('in Chromium', () => {
  let browser: Browser;
  let base: string;
  beforeAll(async () => {
    base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => browser?.close());

  const LOCALES: Record<Lang, string> = { uz: 'uz-UZ', ru: 'ru-RU', en: 'en-US' };
  /** The operator's reason, written in the merchant's language. */
  const REASONS = {
    ru: 'Юридический адрес не совпадает со свидетельством о регистрации: укажите его так, как в свидетельстве.',
    uz: 'Yuridik manzil roʻyxatdan oʻtganlik guvohnomasidagidan farq qiladi: uni guvohnomadagidek yozing.',
  };
  const shot = (page: BrowserPage, name: string) => screenshot(page, `activation-${engine}-${name}`);
  const overflow = (page: BrowserPage) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  /** The owner's session in a browser at `width`, collecting the page's problems and any request to another host. */
  const open = (owner: Owner, width: number, lang: Lang = 'en') =>
    openWatched(browser, base, {
      width,
      locale: LOCALES[lang],
      cookies: [
        { name: SESSION_COOKIE, value: owner.client.cookies.get(SESSION_COOKIE)! },
        { name: 'tolov_lang', value: lang },
      ],
    });

  /** Sends the form as it stands and waits for the page that answers it. */
  async function send(page: BrowserPage): Promise<number> {
    const answer = page.waitForResponse((response) => response.request().method() === 'POST');
    await page.locator('#activation-form-title ~ button[type="submit"]').click();
    const status = (await answer).status();
    if (status === 303) await page.waitForURL(`**${PATH}?done=submitted`);
    await page.waitForLoadState();
    return status;
  }

  /** Fills the form by keyboard alone, from the legal name to the code, each field reached with Tab. */
  async function fillByKeyboard(page: BrowserPage, request: Request, code: string): Promise<void> {
    await page.locator('#activation-legalName').focus();
    for (const name of ['legalName', 'tin', 'legalAddress', 'website', 'category', 'bankMfo', 'accountNumber', 'holderTin', 'holderName', 'code'] as const) {
      expect(await page.evaluate(() => document.activeElement?.id)).toBe(`activation-${name}`);
      if (name === 'category') await page.keyboard.press('ArrowDown');
      else if (name === 'code') await page.keyboard.type(code);
      else await page.keyboard.type(request[name]);
      if (name !== 'code') await page.keyboard.press('Tab');
    }
  }

  it('the whole way: the form by keyboard, its mistakes, review, rejection, approval, live mode, a live key and a live payment', async () => {
    const owner = await ownerWithSecondFactor('browser');
    const { context, page, problems } = await open(owner, 1280);
    await page.goto(`${base}/dashboard/start`);
    await page.getByRole('link', { name: en.navActivation, exact: true }).last().click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(en.activationTitle);
    await shot(page, 'form');

    // A website with no host and an account whose check digit is wrong: said at their fields, the first in focus.
    await fillByKeyboard(page, { ...REQUEST, website: 'chorsu', accountNumber: BAD_CHECK_DIGIT }, await freshCode(owner));
    expect(await page.locator('#activation-category').inputValue()).toBe('retail');
    await page.keyboard.press('Enter');
    await page.locator('#activation-website-error').waitFor();
    expect(await page.locator('#activation-website-error').textContent()).toBe(en.websiteInvalid);
    expect(await page.locator('#activation-accountNumber-error').textContent()).toBe(en.accountNumberCheckDigit.replace('{mfo}', '00440'));
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('activation-website');
    await shot(page, 'field-errors');

    await page.locator('#activation-website').fill('https://t.me/chorsumarket');
    await page.locator('#activation-accountNumber').fill('2020 8000 5053 6852 2001');
    await page.locator('#activation-code').fill(await freshCode(owner));
    expect(await send(page)).toBe(303);
    expect(await page.getByRole('status').textContent()).toBe(en.activationSubmittedDone);
    expect(new URL(page.url()).pathname).toBe(PATH);
    await shot(page, 'submitted');

    expect((await reject(owner.productId, 'The legal address is not the one in the registration certificate: write it as the certificate does.')).status).toBe(200);
    await page.reload();
    expect(await page.locator('.reason').textContent()).toContain('registration certificate');
    await shot(page, 'rejected');
    await page.locator('#activation-legalAddress').fill('Toshkent shahri, Chilonzor tumani, Bunyodkor shoh koʻchasi, 12-uy');
    await page.locator('#activation-accountNumber').fill('20208000505368522001');
    await page.locator('#activation-code').fill(await freshCode(owner));
    expect(await send(page)).toBe(303);
    expect(await page.locator('.status').first().textContent()).toBe(en.activation_submitted);

    expect((await approve(owner.productId)).status).toBe(200);
    await page.reload();
    await shot(page, 'approved');
    await page.locator('.next-steps').getByRole('button', { name: en.switchToLive }).click();
    await expect.poll(async () => page.locator('.mode-badge').textContent()).toBe(en.liveMode);
    expect(new URL(page.url()).pathname).toBe(PATH);
    await page.locator('.next-steps').getByRole('link', { name: en.navApiKeys }).click();
    // A live key is made after the password.
    await page.getByLabel(en.passwordForLiveKey).fill(PASSWORD);
    await shot(page, 'live-key-password');
    await page.getByRole('button', { name: en.createKey }).click();
    const liveKey = (await page.locator('#new-key').textContent())!;
    expect(liveKey).toMatch(/^sk_live_/);

    // A live payment with that key, at the bank simulator: a card bound with its SMS code, then charged with its lines.
    const mine = { ...live, merchant: { productId: owner.productId, test: '', live: liveKey } };
    const card = await bindLiveCard(mine, '8600000000000007');
    const paid = await service.call({ method: 'POST', url: '/subscribe/v1/charges', key: liveKey, idempotencyKey: idem(), body: { amount: 1_500_000, card, receipt: receiptFor(1_500_000) } });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.body).toMatchObject({ status: 'SUCCEEDED', livemode: true });
    await page.goto(`${base}/dashboard/payments`);
    expect(await page.getByRole('link', { name: paid.body.id }).count()).toBe(1);
    await shot(page, 'live-payment');
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it.each(['ru', 'uz'] as const)('fits a 390 px phone in %s: the form, its mistakes, review, rejection and approval', async (lang) => {
    const owner = await ownerWithSecondFactor(`phone-${lang}`);
    const { context, page, problems } = await open(owner, 390, lang);
    const t = MESSAGES[lang];
    const fits = async (name: string) => {
      expect(await overflow(page), `${name} is wider than the phone`).toBeLessThanOrEqual(0);
      await shot(page, `phone-${lang}-${name}`);
    };
    await page.goto(`${base}${PATH}`);
    await fits('form');
    await fillByKeyboard(page, { ...REQUEST, website: 'chorsu', accountNumber: BAD_CHECK_DIGIT }, await freshCode(owner));
    expect(await send(page)).toBe(400);
    expect(await page.locator('#activation-website-error').textContent()).toBe(t.websiteInvalid);
    await fits('field-errors');
    await page.locator('#activation-website').fill('https://instagram.com/chorsu.market');
    await page.locator('#activation-accountNumber').fill(REQUEST.accountNumber);
    await page.locator('#activation-code').fill(await freshCode(owner));
    expect(await send(page)).toBe(303);
    await fits('submitted');
    expect((await reject(owner.productId, REASONS[lang])).status).toBe(200);
    await page.reload();
    await fits('rejected');
    await page.locator('#activation-accountNumber').fill(REQUEST.accountNumber);
    await page.locator('#activation-code').fill(await freshCode(owner));
    expect(await send(page)).toBe(303);
    expect((await approve(owner.productId)).status).toBe(200);
    await page.reload();
    expect(await page.locator('.status').first().textContent()).toBe(t.activation_approved);
    await fits('approved');
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});
