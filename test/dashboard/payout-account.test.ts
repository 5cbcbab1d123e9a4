// The payout account in the dashboard: shown masked to everyone, set only by an owner with the second factor (a fresh
// authenticator code, from a session that proved it at log-in), audited and announced once per setting; a change of
// an account already set holds payouts for a day, said on every page of the mode; no API key can change it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeNow } from '../../src/modules/accounts/second-factor.js';
import { accountKeyValid } from '../../src/modules/payouts/account-number.js';
import { escapeHtml } from '../../src/web/html.js';
import { MESSAGES } from '../../src/web/dashboard/i18n.js';
import { startService, type TestService } from '../support/harness.js';
import { validAccount } from '../support/payouts.js';
import { DashboardClient, freshCode as nextFreshCode, nextCode, ownerWithSecondFactor as signUpOwner, uniqueEmail, wrongCodeOf } from './client.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => service.stop());

const PASSWORD = 'correct horse battery';
const PATH = '/dashboard/payout-account';
const DAY_MS = 24 * 3600 * 1000;
const { en, ru, uz } = MESSAGES;
/** A message as the page writes it (escaped), with its parameters. */
const said = (text: string, params: Record<string, string> = {}) => escapeHtml(text.replace(/\{(\w+)\}/g, (_, name: string) => params[name]!));

type Account = { bankMfo: string; accountNumber: string; tin: string; holderName: string };
/** The contract's example: MFO 00440 with this account is valid; with its 9th digit changed, it is not. */
const FIRST: Account = { bankMfo: '00440', accountNumber: '20208000505368522001', tin: '301234567', holderName: '"Chorsu Market" MChJ' };
const BAD_CHECK_DIGIT = '20208000605368522001';

const SECOND: Account = { bankMfo: '00873', accountNumber: validAccount('00873', '7788'), tin: '301234567', holderName: '"Chorsu Market" MChJ' };

interface Owner {
  client: DashboardClient;
  email: string;
  seed: string;
  /** A test key of the owner's product. */
  key: string;
}

/** A new account's owner who turned the second factor on, with a test key of their product. */
async function ownerWithSecondFactor(): Promise<Owner> {
  const owner = await signUpOwner(service);
  const key = /id="new-key">(sk_test_\w+)</.exec((await owner.client.post('/dashboard/api-keys', {})).html)![1]!;
  return { ...owner, key };
}

const freshCode = (owner: Owner) => nextFreshCode(service, owner);

/** Posts the page's form as its owner fills it in: a new form (a new idempotency key) each time. */
const save = (client: DashboardClient, account: Account, code: string, options: { csrf?: string | null; origin?: string } = {}) =>
  client.post(PATH, { ...account, code, idempotencyKey: randomUUID() }, options);

const apiAccount = (key: string) => service.call({ method: 'GET', url: '/v1/payout_account', key });
const announced = async (key: string) => (await service.call({ method: 'GET', url: '/v1/events?type=payout_account.updated', key })).body.data as Array<{ type: string; data: Record<string, unknown> }>;

/** The rows of the account's audit log (as its owner reads it) that record `action`. */
async function auditRows(owner: Owner, action: string): Promise<string[]> {
  const log = (await owner.client.get('/dashboard/team/audit')).html;
  return log.split('<tr>').filter((row) => row.includes(`<code>${action}</code>`));
}

/** A member of the owner's account with `role`, signed in. */
async function member(owner: Owner, role: 'developer' | 'viewer'): Promise<DashboardClient> {
  const email = uniqueEmail(role);
  expect((await owner.client.post('/dashboard/team/invite', { email, role })).status).toBe(201);
  const path = await owner.client.invitationFor(email);
  const client = new DashboardClient(service);
  expect((await client.post(path, { password: PASSWORD })).location).toBe('/dashboard');
  return client;
}

/** Opens live mode for the owner's product (as the operator does): a live key. */
async function goLive(owner: Owner): Promise<string> {
  const [product] = await service.db.query<{ id: string }>(
    'SELECT p.id FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1',
    [owner.email],
  );
  expect((await service.admin('POST', `/admin/v1/products/${product!.id}/live`)).status).toBe(200);
  const live = await service.admin('POST', `/admin/v1/products/${product!.id}/keys`, { mode: 'live' });
  expect(live.status).toBe(201);
  return live.body.secret as string;
}

const banner = (html: string) => /<div class="hold-banner"[\s\S]*?<\/div>/.exec(html)?.[0];

describe('setting the payout account', () => {
  it('the first time holds nothing, is announced once with the account masked, audited, and read masked by the API', async () => {
    const owner = await ownerWithSecondFactor();
    const empty = await owner.client.get(PATH);
    expect(empty.html).toContain(said(en.payoutAccountNone));
    expect(empty.html).toContain(said(en.setPayoutAccount));
    expect((await apiAccount(owner.key)).status).toBe(404);

    // Typed as a bank's details print it, in groups of four.
    const saved = await save(owner.client, { ...FIRST, accountNumber: '2020 8000 5053 6852 2001' }, await freshCode(owner));
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`${PATH}?done=saved`);
    const shown = await owner.client.get(saved.location!);
    expect(shown.html).toContain(said(en.payoutAccountSaved));
    expect(shown.html).toMatch(/<dd class="masked">.*2001<\/dd>/);
    expect(shown.html).toContain('<dd>00440</dd>');
    expect(shown.html).toContain(`<dd>${said(FIRST.holderName)}</dd>`);
    expect(shown.html).toContain(said(en.payoutsNotHeld));
    expect(shown.html).toContain(said(en.changePayoutAccount));
    expect(shown.html).not.toContain(FIRST.accountNumber);
    expect(shown.html).not.toContain('5053 6852');
    expect(banner(shown.html)).toBeUndefined();

    const api = await apiAccount(owner.key);
    expect(api.status).toBe(200);
    expect(api.body).toMatchObject({ object: 'payout_account', bankMfo: '00440', accountLast4: '2001', tin: FIRST.tin, holderName: FIRST.holderName, payoutsHeldUntil: null, livemode: false });
    expect(api.text).not.toContain(FIRST.accountNumber);

    const events = await announced(owner.key);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ object: 'payout_account', id: api.body.id, bankMfo: '00440', accountLast4: '2001', payoutsHeldUntil: null });
    expect(JSON.stringify(events)).not.toContain(FIRST.accountNumber);

    const [row, ...more] = await auditRows(owner, 'payout_account.updated');
    expect(more).toHaveLength(0);
    expect(row).toContain(owner.email);
    expect(row).toContain('00440 ••••2001');
  });

  it('to another account holds payouts for 24 hours, said on every page of the mode, until the test helper ends it', async () => {
    const owner = await ownerWithSecondFactor();
    expect((await save(owner.client, FIRST, await freshCode(owner))).status).toBe(303);
    const before = Date.now();
    expect((await save(owner.client, SECOND, await freshCode(owner))).status).toBe(303);

    const api = (await apiAccount(owner.key)).body;
    expect(api).toMatchObject({ bankMfo: '00873', accountLast4: '7788' });
    const heldMs = Date.parse(api.payoutsHeldUntil as string);
    expect(heldMs).toBeGreaterThanOrEqual(before + DAY_MS - 5_000);
    expect(heldMs).toBeLessThanOrEqual(Date.now() + DAY_MS + 5_000);
    expect(await announced(owner.key)).toHaveLength(2);

    // Every page, every member: the one who did not make the change is the one who must see it.
    const viewer = await member(owner, 'viewer');
    for (const [client, path] of [[owner.client, '/dashboard/overview'], [owner.client, '/dashboard/payments'], [viewer, '/dashboard/webhooks'], [viewer, PATH]] as const) {
      const shown = banner((await client.get(path)).html);
      expect(shown, path).toContain(said(en.payoutHoldTitle));
      expect(shown, path).toContain(`until ${new Date(heldMs).toISOString().replace('T', ' ').slice(0, 19)} UTC`);
      expect(shown, path).toContain(`href="${PATH}"`);
    }
    const page = (await owner.client.get(PATH)).html;
    expect(page).toContain(said(en.payoutsHeldUntil, { until: `${new Date(heldMs).toISOString().replace('T', ' ').slice(0, 19)} UTC` }));
    expect(page).toContain(said(en.payoutAccountChangedAt));

    const released = await service.call({ method: 'POST', url: '/v1/test_helpers/payout_account/release_hold', key: owner.key });
    expect(released.status).toBe(200);
    expect(released.body.payoutsHeldUntil).toBeNull();
    expect((await apiAccount(owner.key)).body.payoutsHeldUntil).toBeNull();
    expect(banner((await owner.client.get('/dashboard/overview')).html)).toBeUndefined();

    const live = await goLive(owner);
    expect((await service.call({ method: 'POST', url: '/v1/test_helpers/payout_account/release_hold', key: live })).status).toBe(404);
  });

  it('to the same account again holds nothing new, and is announced again', async () => {
    const owner = await ownerWithSecondFactor();
    expect((await save(owner.client, FIRST, await freshCode(owner))).status).toBe(303);
    expect((await save(owner.client, { ...FIRST, holderName: 'Chorsu Market MChJ' }, await freshCode(owner))).status).toBe(303);
    expect((await apiAccount(owner.key)).body).toMatchObject({ payoutsHeldUntil: null, holderName: 'Chorsu Market MChJ' });
    expect(banner((await owner.client.get(PATH)).html)).toBeUndefined();

    // During a hold, the changed account set again keeps the hold as it was: it neither ends nor lengthens it.
    expect((await save(owner.client, SECOND, await freshCode(owner))).status).toBe(303);
    const held = (await apiAccount(owner.key)).body.payoutsHeldUntil as string;
    expect((await save(owner.client, SECOND, await freshCode(owner))).status).toBe(303);
    expect((await apiAccount(owner.key)).body.payoutsHeldUntil).toBe(held);
    expect(await announced(owner.key)).toHaveLength(4);
  });
});

describe('the second factor at the change', () => {
  it('refuses a wrong code in the page’s language, changes nothing, and shows the owners the attempt', async () => {
    const owner = await ownerWithSecondFactor();
    owner.client.lang = 'uz';
    const refused = await save(owner.client, FIRST, wrongCodeOf(owner));
    expect(refused.status).toBe(401);
    expect(refused.html).toContain('<html lang="uz">');
    expect(refused.html).toContain(said(uz.payoutCodeWrong));
    expect(refused.html).toMatch(new RegExp(`<p class="field-error" id="payout-code-error">${said(uz.payoutCodeWrongField)}</p>`));
    // What was typed comes back, but for the account number, which no page shows once typed: its field, in focus, says so.
    expect(refused.html).toContain('name="bankMfo" value="00440"');
    expect(refused.html).toMatch(/name="accountNumber" value=""[^>]*aria-invalid="true" autofocus>/);
    expect(refused.html).toContain(`<p class="field-error" id="payout-accountNumber-error">${said(uz.accountNumberAgain)}</p>`);
    expect(refused.html).not.toContain(FIRST.accountNumber);
    expect((await apiAccount(owner.key)).status).toBe(404);
    expect(await announced(owner.key)).toHaveLength(0);
    const [row] = await auditRows(owner, 'payout_account.update_refused');
    expect(row).toContain(owner.email);
    expect(row).toContain('00440 ••••2001');
  });

  it('takes each code once: the code of a change, sent again in its time step, changes nothing', async () => {
    const owner = await ownerWithSecondFactor();
    const code = await freshCode(owner);
    expect((await save(owner.client, FIRST, code)).status).toBe(303);
    const again = await save(owner.client, SECOND, code);
    expect(again.status).toBe(401);
    expect(again.html).toContain(said(en.payoutCodeWrong));
    expect((await apiAccount(owner.key)).body).toMatchObject({ bankMfo: '00440', accountLast4: '2001', payoutsHeldUntil: null });
    expect(await announced(owner.key)).toHaveLength(1);
  });

  it('slows guessing as at log-in: past the limit even the right code waits, said with the time to come back', async () => {
    const owner = await ownerWithSecondFactor();
    owner.client.lang = 'ru';
    const wrong = new Set([codeNow(owner.seed), nextCode(owner.seed), codeNow(owner.seed, Date.now() - 30_000)]);
    const codes = Array.from({ length: 12 }, (_, n) => String(100_000 + n * 7919)).filter((code) => !wrong.has(code));
    const pages = await Promise.all(codes.map((code) => save(owner.client, FIRST, code)));
    // Five at once, then turns 0 and 10 s after the sixth; a turn more than 10 s away is refused. The last turn is due
    // exactly at the longest wait, so whether it is waited for or refused depends on the milliseconds between them.
    const checked = pages.filter((page) => page.status === 401).length;
    expect(checked).toBeGreaterThanOrEqual(6);
    expect(checked).toBeLessThanOrEqual(7);
    const throttled = pages.filter((page) => page.status === 429);
    expect(throttled).toHaveLength(codes.length - checked);
    expect(Number(throttled[0]!.headers['retry-after'])).toBeGreaterThan(0);
    expect(throttled[0]!.html).toMatch(/Слишком много попыток\. Повторите через \d+ (с|мин)\./);
    const asked = Date.now();
    const right = await save(owner.client, FIRST, await freshCode(owner));
    if (checked === 7) {
      // Every turn within the longest wait is taken: the right code is refused, and nothing changed.
      expect(right.status).toBe(429);
      expect((await apiAccount(owner.key)).status).toBe(404);
    } else {
      // The seventh turn was refused, so the next is due at the longest wait: the right code is checked only after it.
      expect(right.status).toBe(303);
      expect(Date.now() - asked).toBeGreaterThanOrEqual(9_000);
    }
  }, 60_000);

  it('is needed: an owner without it is told to turn it on, and a direct POST changes nothing', async () => {
    const email = uniqueEmail('no-factor');
    const client = new DashboardClient(service);
    await client.signUp(email);
    const key = /id="new-key">(sk_test_\w+)</.exec((await client.post('/dashboard/api-keys', {})).html)![1]!;
    const shown = await client.get(PATH);
    expect(shown.html).toContain(said(en.payoutNeedsSecondFactor));
    expect(shown.html).toContain('<a href="/dashboard/account">');
    expect(shown.html).not.toContain('name="accountNumber"');
    const posted = await client.post(PATH, { ...FIRST, code: '123456', idempotencyKey: randomUUID() });
    expect(posted.status).toBe(403);
    expect(posted.html).toContain(said(en.payoutSecondFactorRefused));
    expect((await apiAccount(key)).status).toBe(404);
    expect(await announced(key)).toHaveLength(0);
  });

  it('is needed at log-in too: a session that did not prove it gets no form, and its right code changes nothing', async () => {
    const owner = await ownerWithSecondFactor();
    await service.db.query('UPDATE dashboard_sessions SET second_factor = false WHERE token_hash = sha256($1::bytea)', [Buffer.from(owner.client.cookies.get('tolov_session')!)]);
    const shown = await owner.client.get(PATH);
    expect(shown.html).toContain(said(en.payoutNeedsProof));
    expect(shown.html).toContain('<a href="/dashboard/account">');
    expect(shown.html).not.toContain('name="accountNumber"');
    const posted = await save(owner.client, FIRST, await freshCode(owner));
    expect(posted.status).toBe(403);
    expect(posted.html).toContain(said(en.payoutSecondFactorRefused));
    expect((await apiAccount(owner.key)).status).toBe(404);
  });
});

describe('who may change it, and how', () => {
  it('shows it masked to developers and viewers, with no form, and refuses their POST', async () => {
    const owner = await ownerWithSecondFactor();
    expect((await save(owner.client, FIRST, await freshCode(owner))).status).toBe(303);
    for (const role of ['developer', 'viewer'] as const) {
      const client = await member(owner, role);
      const shown = await client.get(PATH);
      expect(shown.status, role).toBe(200);
      expect(shown.html, role).toMatch(/<dd class="masked">.*2001<\/dd>/);
      expect(shown.html, role).toContain(said(en.payoutOwnersOnly));
      expect(shown.html, role).not.toContain('name="accountNumber"');
      expect(shown.html, role).not.toContain(FIRST.accountNumber);
      expect(shown.html, role).toContain(`<a href="${PATH}" aria-current="page">`);
      const posted = await save(client, SECOND, await freshCode(owner));
      expect(posted.status, role).toBe(403);
      expect(posted.html, role).toContain(said(en.forbidden));
    }
    expect((await apiAccount(owner.key)).body).toMatchObject({ bankMfo: '00440', accountLast4: '2001', payoutsHeldUntil: null });
    expect(await announced(owner.key)).toHaveLength(1);
  });

  it('takes a form only with its token, from this origin, and spends no code on one refused', async () => {
    const owner = await ownerWithSecondFactor();
    const code = await freshCode(owner);
    expect((await save(owner.client, FIRST, code, { csrf: null })).status).toBe(403);
    expect((await save(owner.client, FIRST, code, { csrf: 'x'.repeat(43) })).status).toBe(403);
    expect((await save(owner.client, FIRST, code, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await apiAccount(owner.key)).status).toBe(404);
    expect((await save(owner.client, FIRST, code, { origin: new URL(service.config.checkoutUrl).origin })).status).toBe(303);
  });

  it('names each bad field next to it, in the page’s language, and spends no code', async () => {
    const owner = await ownerWithSecondFactor();
    owner.client.lang = 'ru';
    const code = await freshCode(owner);
    const bad = await save(owner.client, { bankMfo: '440', accountNumber: '2020800050536852', tin: '30123456X', holderName: ' ' }, code.slice(0, 5));
    expect(bad.status).toBe(400);
    expect(bad.html).toContain(said(ru.payoutFieldsInvalid));
    const errors: Array<[string, string]> = [
      ['bankMfo', ru.bankMfoInvalid],
      ['accountNumber', ru.accountNumberInvalid],
      ['tin', ru.tinInvalid],
      ['holderName', said(ru.holderNameInvalid, { max: '200' })],
      ['code', ru.payoutCodeFormat],
    ];
    for (const [name, text] of errors) {
      expect(bad.html, name).toContain(`<p class="field-error" id="payout-${name}-error">${said(text)}</p>`);
      expect(bad.html, name).toMatch(new RegExp(`name="${name}"[^>]*aria-describedby="payout-${name}-error payout-${name}-hint" aria-invalid="true"`));
    }
    expect((await apiAccount(owner.key)).status).toBe(404);
    expect((await save(owner.client, FIRST, code)).status).toBe(303);
  });

  it('refuses an account whose check digit does not match its bank, on the account number, spending no code', async () => {
    const owner = await ownerWithSecondFactor();
    const code = await freshCode(owner);
    const bad = await save(owner.client, { ...FIRST, accountNumber: BAD_CHECK_DIGIT }, code);
    expect(bad.status).toBe(400);
    expect(bad.html).toContain(`<p class="field-error" id="payout-accountNumber-error">${said(en.accountNumberCheckDigit, { mfo: '00440' })}</p>`);
    expect(bad.html).not.toContain('id="payout-bankMfo-error"');
    expect(bad.html).not.toContain(BAD_CHECK_DIGIT);
    // The same digits are an account of no other bank either: the MFO is part of the key.
    expect(accountKeyValid('00873', FIRST.accountNumber)).toBe(false);
    expect((await apiAccount(owner.key)).status).toBe(404);
    expect((await save(owner.client, FIRST, code)).status).toBe(303);
  });

  it('keeps test and live apart: each mode has its own account, its own hold and its own banner', async () => {
    const owner = await ownerWithSecondFactor();
    const live = await goLive(owner);
    expect((await save(owner.client, FIRST, await freshCode(owner))).status).toBe(303);
    expect((await save(owner.client, SECOND, await freshCode(owner))).status).toBe(303);
    expect((await apiAccount(live)).status).toBe(404);

    expect((await owner.client.post('/dashboard/mode', { mode: 'live' })).status).toBe(303);
    const livePage = await owner.client.get(PATH);
    expect(livePage.html).toContain(said(en.payoutAccountCurrentLive));
    expect(livePage.html).toContain(said(en.payoutAccountNone));
    expect(banner(livePage.html)).toBeUndefined();
    expect((await save(owner.client, FIRST, await freshCode(owner))).status).toBe(303);
    expect((await apiAccount(live)).body).toMatchObject({ bankMfo: '00440', accountLast4: '2001', livemode: true, payoutsHeldUntil: null });
    expect(await announced(live)).toHaveLength(1);

    expect((await apiAccount(owner.key)).body).toMatchObject({ bankMfo: '00873', accountLast4: '7788', livemode: false });
    expect((await apiAccount(owner.key)).body.payoutsHeldUntil).not.toBeNull();
    expect(await announced(owner.key)).toHaveLength(2);
    expect((await owner.client.post('/dashboard/mode', { mode: 'test' })).status).toBe(303);
    expect(banner((await owner.client.get('/dashboard/overview')).html)).toContain(said(en.payoutHoldTitle));
  });

  it('cannot be changed with an API key: there is no route for it', async () => {
    const owner = await ownerWithSecondFactor();
    expect((await save(owner.client, FIRST, await freshCode(owner))).status).toBe(303);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const tried = await service.call({ method, url: '/v1/payout_account', key: owner.key, idempotencyKey: randomUUID(), body: SECOND });
      expect(tried.status, method).toBe(404);
    }
    expect((await apiAccount(owner.key)).body).toMatchObject({ bankMfo: '00440', accountLast4: '2001', payoutsHeldUntil: null });
    expect(await announced(owner.key)).toHaveLength(1);
  });
});
