// The ways into an account that are not the log-in page: an invitation to an existing user's e-mail, a session made
// before the second factor, another mode's keys, a removed member's invitations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeNow } from '../../src/modules/accounts/second-factor.js';
import { startService, type TestService } from '../support/harness.js';
import { linkIn } from '../support/mailbox.js';
import { DashboardClient, uniqueEmail } from './client.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => service.stop());

const PASSWORD = 'correct horse battery';
const nextCode = (seed: string) => codeNow(seed, Date.now() + 30_000);
const inviteLinkIn = (html: string) => new URL(/<code id="invite-link">([^<]+)<\/code>/.exec(html)![1]!).pathname;

/** Turns the second factor on from `client`'s session; the seed. */
async function enableSecondFactor(client: DashboardClient): Promise<string> {
  const setup = await client.post('/dashboard/account/second-factor/begin', {});
  const seed = /<code id="seed">([A-Z2-7]+)<\/code>/.exec(setup.html)![1]!;
  const sealed = /name="seed" value="([^"]+)"/.exec(setup.html)![1]!;
  expect((await client.post('/dashboard/account/second-factor/enable', { seed: sealed, code: codeNow(seed) })).status).toBe(200);
  return seed;
}

const auditOf = async (client: DashboardClient) => (await client.get('/dashboard/team/audit')).html;

describe('an invitation to an existing user', () => {
  it('checks the password as a log-in does, slowed past ten failures, and never skips the second factor', async () => {
    const victimEmail = uniqueEmail('victim');
    const victim = new DashboardClient(service);
    await victim.signUp(victimEmail);
    await enableSecondFactor(victim);
    const attacker = new DashboardClient(service);
    await attacker.signUp(uniqueEmail('attacker'));
    const path = inviteLinkIn((await attacker.post('/dashboard/team/invite', { email: victimEmail, role: 'owner' })).html);

    const guesser = new DashboardClient(service);
    for (let attempt = 0; attempt < 10; attempt++) expect((await guesser.post(path, { password: `guess number ${attempt}` })).status).toBe(401);
    // The victim's e-mail has failed ten times: further guesses wait their turn (0, 1, then 2 s later).
    const started = Date.now();
    for (let attempt = 10; attempt < 13; attempt++) expect((await guesser.post(path, { password: `guess number ${attempt}` })).status).toBe(401);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);

    // The right password opens only the second factor's page; that session opens nothing else.
    const joined = await new DashboardClient(service).post(path, { password: PASSWORD });
    expect(joined.location).toBe('/dashboard/login/verify');
    const thief = new DashboardClient(service);
    thief.cookies.set('tolov_session', /tolov_session=([^;]+)/.exec(String(joined.headers['set-cookie']))![1]!);
    expect((await thief.get('/dashboard/account')).location).toBe('/dashboard/login');
    expect((await thief.post('/dashboard/account/second-factor/disable', { password: PASSWORD }, { csrf: 'x'.repeat(43) })).status).toBe(403);
    const [user] = await service.db.query<{ on: boolean }>('SELECT totp_sealed IS NOT NULL AS on FROM users WHERE email = $1', [victimEmail]);
    expect(user!.on).toBe(true);
  }, 60_000);
});

describe('the second factor', () => {
  it('is changed only from a session that proved it; turning it off is audited in every account of the user', async () => {
    const email = uniqueEmail();
    const before = new DashboardClient(service);
    await before.signUp(email);
    // A second account the user joins, whose owner sees the user's security changes in its log.
    const other = new DashboardClient(service);
    await other.signUp(uniqueEmail('other-owner'));
    const path = inviteLinkIn((await other.post('/dashboard/team/invite', { email, role: 'developer' })).html);
    expect((await new DashboardClient(service).post(path, { password: PASSWORD })).location).toBe('/dashboard');

    const owner = new DashboardClient(service);
    expect((await owner.post('/dashboard/login', { email, password: PASSWORD })).location).toBe('/dashboard');
    const seed = await enableSecondFactor(owner);

    // The session made before the factor existed proved nothing of it: no form, and a direct POST is refused.
    const page = await before.get('/dashboard/account');
    expect(page.html).toContain('To turn off two-factor authentication, first log in again with a code from your authenticator.');
    expect(page.html).not.toContain('second-factor/disable');
    expect((await before.post('/dashboard/account/second-factor/disable', { password: PASSWORD })).status).toBe(403);
    expect((await before.post('/dashboard/account/second-factor/enable', { seed: 'v1.x.y', code: nextCode(seed) })).status).toBe(400);

    const verified = new DashboardClient(service);
    await verified.post('/dashboard/login', { email, password: PASSWORD });
    expect((await verified.post('/dashboard/login/verify', { code: nextCode(seed) })).location).toBe('/dashboard');
    expect((await verified.post('/dashboard/account/second-factor/disable', { password: PASSWORD })).html).toContain('Two-factor authentication is off.');
    expect(await auditOf(before)).toContain('user.second_factor_disabled');
    expect(await auditOf(other)).toContain('user.second_factor_disabled');
    expect(await auditOf(other)).toContain('user.second_factor_enabled');
  });
});

describe('the selected mode', () => {
  it('keeps a test-mode page from rolling or revoking a live key', async () => {
    const email = uniqueEmail();
    const client = new DashboardClient(service);
    await client.signUp(email);
    const [{ id }] = (await service.db.query<{ id: string }>(
      'SELECT p.id FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1',
      [email],
    )) as [{ id: string }];
    expect((await service.admin('POST', `/admin/v1/products/${id}/live`)).status).toBe(200);
    const live = await service.admin('POST', `/admin/v1/products/${id}/keys`, { mode: 'live' });
    expect(live.status).toBe(201);
    const liveKeyId = live.body.id as string;

    expect((await client.post(`/dashboard/api-keys/${liveKeyId}/roll`, { overlapSeconds: '0' })).status).toBe(404);
    expect((await client.post(`/dashboard/api-keys/${liveKeyId}/revoke`, {})).status).toBe(404);
    expect((await service.call({ method: 'GET', url: '/v1/balance', key: live.body.secret as string })).status).toBe(200);
    const [key] = await service.db.query<{ revoked: boolean; expires: boolean }>('SELECT revoked_at IS NOT NULL AS revoked, expires_at IS NOT NULL AS expires FROM api_keys WHERE id = $1', [liveKeyId]);
    expect(key).toEqual({ revoked: false, expires: false });
  });
});

describe('removing a member', () => {
  it('revokes the invitations they sent and their other invitations to the account', async () => {
    const owner = new DashboardClient(service);
    await owner.signUp(uniqueEmail('owner'));
    const memberEmail = uniqueEmail('member');
    const first = inviteLinkIn((await owner.post('/dashboard/team/invite', { email: memberEmail, role: 'owner' })).html);
    const second = inviteLinkIn((await owner.post('/dashboard/team/invite', { email: memberEmail, role: 'viewer' })).html);
    const member = new DashboardClient(service);
    expect((await member.post(first, { password: PASSWORD })).location).toBe('/dashboard');
    const theirs = inviteLinkIn((await member.post('/dashboard/team/invite', { email: uniqueEmail('accomplice'), role: 'owner' })).html);
    const [{ id: memberId }] = (await service.db.query<{ id: string }>('SELECT id FROM users WHERE email = $1', [memberEmail])) as [{ id: string }];
    expect((await owner.post(`/dashboard/team/members/${memberId}/remove`, {})).location).toBe('/dashboard/team?done=removed');

    for (const path of [second, theirs]) {
      expect((await new DashboardClient(service).get(path)).status).toBe(404);
      expect((await new DashboardClient(service).post(path, { password: PASSWORD })).status).toBe(404);
    }
    const [row] = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.email = $1', [memberEmail]);
    expect(row!.n).toBe(0);
    // Invited anew by the owner, they may come back.
    const again = inviteLinkIn((await owner.post('/dashboard/team/invite', { email: memberEmail, role: 'viewer' })).html);
    expect((await new DashboardClient(service).get(again)).status).toBe(200);
  });
});

describe('a way back in', () => {
  const NEW_PASSWORD = 'a brand new passphrase';

  it('resets a forgotten password by a single-use mail link that ends every session and still asks the second factor', async () => {
    const email = uniqueEmail();
    const owner = new DashboardClient(service);
    await owner.signUp(email);
    const seed = await enableSecondFactor(owner);

    // The same answer for an e-mail that has a login and for one that has not; only the first gets mail.
    const asked = async (address: string) => {
      const page = await new DashboardClient(service).post('/dashboard/password/forgot', { email: address });
      return { status: page.status, text: /<p class="card narrow" role="status">([^<]+)</.exec(page.html.replaceAll(address, 'EMAIL'))?.[1] };
    };
    const nobody = uniqueEmail('nobody');
    expect(await asked(nobody)).toEqual(await asked(email));
    expect(await asked(email)).toEqual({ status: 200, text: 'If a Tolov login has the e-mail EMAIL, we sent it a link. It works once, for 30 minutes.' });
    const mail = await service.mailbox.next(email, /Set a new password/);
    const link = linkIn(mail, '/dashboard/password/reset/');

    const stranger = new DashboardClient(service);
    expect((await stranger.get(link)).html).toContain('name="password"');
    expect((await stranger.post(link, { password: 'short' })).status).toBe(400);
    const reset = await stranger.post(link, { password: NEW_PASSWORD });
    expect(reset.location).toBe('/dashboard/login?done=reset');
    expect((await stranger.get('/dashboard/login?done=reset')).html).toContain('Your new password is set, and every session was ended.');
    expect((await new DashboardClient(service).post(link, { password: 'yet another passphrase' })).status).toBe(404);
    // The other link sent in the meantime died with the reset.
    const other = linkIn(await service.mailbox.next(email, /Set a new password/), '/dashboard/password/reset/');
    expect((await new DashboardClient(service).get(other)).status).toBe(404);
    expect(service.mailbox.to(nobody)).toEqual([]);

    expect((await owner.get('/dashboard/account')).location).toBe('/dashboard/login');
    expect((await new DashboardClient(service).post('/dashboard/login', { email, password: PASSWORD })).status).toBe(401);
    const back = new DashboardClient(service);
    expect((await back.post('/dashboard/login', { email, password: NEW_PASSWORD })).location).toBe('/dashboard/login/verify');
    expect((await back.post('/dashboard/login/verify', { code: nextCode(seed) })).location).toBe('/dashboard');
    expect((await service.mailbox.next(email, /password was changed/)).text).toContain(`The password of your Tolov login ${email} was changed`);
    expect(await auditOf(back)).toContain('user.password_changed');
  });

  it('refuses a reset link after its 30 minutes', async () => {
    const email = uniqueEmail();
    await new DashboardClient(service).signUp(email);
    await new DashboardClient(service).post('/dashboard/password/forgot', { email });
    const link = linkIn(await service.mailbox.next(email, /Set a new password/), '/dashboard/password/reset/');
    const [row] = await service.db.query<{ minutes: number }>(
      `SELECT round(extract(epoch FROM r.expires_at - r.created_at) / 60)::int AS minutes FROM password_resets r JOIN users u ON u.id = r.user_id WHERE u.email = $1`,
      [email],
    );
    expect(row!.minutes).toBe(30);
    await service.db.query(`UPDATE password_resets SET expires_at = now() - interval '1 second' WHERE user_id = (SELECT id FROM users WHERE email = $1)`, [email]);
    const client = new DashboardClient(service);
    expect((await client.get(link)).status).toBe(404);
    expect((await client.post(link, { password: NEW_PASSWORD })).status).toBe(404);
    expect((await new DashboardClient(service).post('/dashboard/login', { email, password: PASSWORD })).location).toBe('/dashboard');
  });

  it('changes the password after the current one; the user’s other sessions end and they are told by mail', async () => {
    const email = uniqueEmail();
    const here = new DashboardClient(service);
    await here.signUp(email);
    const elsewhere = new DashboardClient(service);
    expect((await elsewhere.post('/dashboard/login', { email, password: PASSWORD })).location).toBe('/dashboard');
    expect((await here.post('/dashboard/account/password', { current: 'not the password', password: NEW_PASSWORD })).status).toBe(401);
    expect((await here.post('/dashboard/account/password', { current: PASSWORD, password: 'short' })).status).toBe(400);
    const changed = await here.post('/dashboard/account/password', { current: PASSWORD, password: NEW_PASSWORD });
    expect(changed.status).toBe(200);
    expect(changed.html).toContain('Your password is changed, and your other sessions were ended.');
    expect((await here.get('/dashboard/account')).status).toBe(200);
    expect((await elsewhere.get('/dashboard/account')).location).toBe('/dashboard/login');
    expect((await new DashboardClient(service).post('/dashboard/login', { email, password: NEW_PASSWORD })).location).toBe('/dashboard');
    expect((await service.mailbox.next(email, /password was changed/)).subject).toBe('Your Tolov password was changed');
  });

  it('writes mail in the language of the page that caused it', async () => {
    const email = uniqueEmail();
    const client = new DashboardClient(service);
    client.lang = 'ru';
    expect((await client.post('/dashboard/signup', { email, password: PASSWORD, businessName: 'Чорсу' })).status).toBe(200);
    const mail = await service.mailbox.next(email);
    expect(mail.subject).toBe('Подтвердите почту, чтобы завершить создание аккаунта Tolov');
    expect(mail.text).toContain('для «Чорсу»');
  });
});
