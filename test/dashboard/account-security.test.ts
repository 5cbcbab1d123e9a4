// The ways into an account that are not the log-in page: invitations (mailed to the invitee), a session made before
// the second factor, another mode's keys, a removed or demoted member's invitations, an owner made only with the acting
// owner's second factor, and the way back in by mail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/harness.js';
import { linkIn } from '../support/mailbox.js';
import { firstAdmin, PASSWORD as OPERATOR_PASSWORD } from '../operator/client.js';
import { DashboardClient, freshCode, nextCode, ownerWithSecondFactor, turnOnSecondFactor, uniqueEmail, wrongCodeOf, type SecondFactorOwner } from './client.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => service.stop());

const PASSWORD = 'correct horse battery';

/** Invites `email` from `owner`'s account (as an owner, with their code): the path of the link mailed to it. */
async function invite(owner: DashboardClient | SecondFactorOwner, email: string, role: 'owner' | 'developer' | 'viewer'): Promise<string> {
  const client = owner instanceof DashboardClient ? owner : owner.client;
  const form: Record<string, string> = { email, role };
  if (role === 'owner' && !(owner instanceof DashboardClient)) form.code = await freshCode(service, owner);
  expect((await client.post('/dashboard/team/invite', form)).status).toBe(201);
  return client.invitationFor(email);
}

/** `client`'s login turned into a second-factor owner: the second factor turned on, which its session thereby proved. */
async function withSecondFactor(client: DashboardClient, email: string): Promise<SecondFactorOwner> {
  return { client, email, seed: await turnOnSecondFactor(client) };
}

const userIdOf = async (email: string) => (await service.db.query<{ id: string }>('SELECT id FROM users WHERE email = $1', [email]))[0]!.id;

const auditOf = async (client: DashboardClient) => (await client.get('/dashboard/team/audit')).html;

describe('an invitation', () => {
  it('gives its maker no link, so no owner can make a login for an address, nor guess an existing login’s password', async () => {
    const victimEmail = uniqueEmail('victim');
    const victim = new DashboardClient(service);
    await victim.signUp(victimEmail);
    const seed = await turnOnSecondFactor(victim);
    const attacker = new DashboardClient(service);
    await attacker.signUp(uniqueEmail('attacker'));
    const page = await attacker.post('/dashboard/team/invite', { email: victimEmail, role: 'developer' });
    expect(page.html).not.toContain('/dashboard/invite/');
    // Even holding the link (the victim's mail), a password typed on it opens nothing: the login joins from its session.
    const path = await attacker.invitationFor(victimEmail);
    const holder = new DashboardClient(service);
    expect((await holder.post(path, { password: PASSWORD })).status).toBe(409);
    expect(holder.cookies.has('tolov_session')).toBe(false);

    // The victim, logged in with the second factor, joins with one button.
    const owner = new DashboardClient(service);
    expect((await owner.post('/dashboard/login', { email: victimEmail, password: PASSWORD })).location).toBe('/dashboard/login/verify');
    expect((await owner.post('/dashboard/login/verify', { code: nextCode(seed) })).location).toBe('/dashboard');
    expect((await owner.post(path, {})).location).toBe('/dashboard');
    // The session of the joined account proved the second factor as the old one did: it may turn it off.
    expect((await owner.post('/dashboard/account/second-factor/disable', { password: PASSWORD })).html).toContain('Two-factor authentication is off.');
  });

  it('makes a new login only for whoever reads the invited address, with a password chosen on the link', async () => {
    const owner = new DashboardClient(service);
    await owner.signUp(uniqueEmail('owner'));
    const email = uniqueEmail('newcomer');
    const path = await invite(owner, email, 'developer');
    const newcomer = new DashboardClient(service);
    expect((await newcomer.get(path)).html).toContain(`value="${email}" readonly`);
    expect((await newcomer.post(path, { password: 'short' })).status).toBe(400);
    expect((await newcomer.post(path, { password: PASSWORD })).location).toBe('/dashboard');
    expect((await new DashboardClient(service).post('/dashboard/login', { email, password: PASSWORD })).location).toBe('/dashboard');
  });
});

describe('the second factor', () => {
  it('is turned off only by a session that proved it; turning it on ends the others; each change is audited in every account', async () => {
    const email = uniqueEmail();
    const before = new DashboardClient(service);
    await before.signUp(email);
    // A second account the user joins, whose owner sees the user's security changes in its log.
    const other = new DashboardClient(service);
    await other.signUp(uniqueEmail('other-owner'));
    const path = await invite(other, email, 'developer');
    const member = new DashboardClient(service);
    expect((await member.post('/dashboard/login', { email, password: PASSWORD })).location).toBe('/dashboard');
    expect((await member.post(path, {})).location).toBe('/dashboard');

    const owner = new DashboardClient(service);
    expect((await owner.post('/dashboard/login', { email, password: PASSWORD })).location).toBe('/dashboard');
    const seed = await turnOnSecondFactor(owner);
    // The sessions made before it, which never proved it, ended.
    expect((await before.get('/dashboard/account')).location).toBe('/dashboard/login');
    expect((await member.get('/dashboard/account')).location).toBe('/dashboard/login');

    // A session that did not pass it (one that was open when this version of Tolov started) cannot turn it off.
    const verified = new DashboardClient(service);
    await verified.post('/dashboard/login', { email, password: PASSWORD });
    expect((await verified.post('/dashboard/login/verify', { code: nextCode(seed) })).location).toBe('/dashboard');
    await service.db.query('UPDATE dashboard_sessions SET second_factor = false WHERE token_hash = sha256($1::bytea)', [Buffer.from(verified.cookies.get('tolov_session')!)]);
    const refused = await verified.post('/dashboard/account/second-factor/disable', { password: PASSWORD });
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('First log in again with a code from your authenticator: this session did not pass it.');
    expect((await verified.post('/dashboard/account/password', { current: PASSWORD, password: 'a brand new passphrase' })).status).toBe(403);
    expect((await verified.post('/dashboard/account/second-factor/enable', { seed: 'v1.x.y', password: PASSWORD, code: nextCode(seed) })).status).toBe(400);

    expect((await owner.post('/dashboard/account/second-factor/disable', { password: PASSWORD })).html).toContain('Two-factor authentication is off.');
    expect(await auditOf(owner)).toContain('user.second_factor_disabled');
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
    const owner = await ownerWithSecondFactor(service);
    const memberEmail = uniqueEmail('member');
    const first = await invite(owner, memberEmail, 'owner');
    const second = await invite(owner, memberEmail, 'viewer');
    const member = new DashboardClient(service);
    expect((await member.post(first, { password: PASSWORD })).location).toBe('/dashboard');
    const memberOwner = await withSecondFactor(member, memberEmail);
    const theirs = await invite(memberOwner, uniqueEmail('accomplice'), 'owner');
    const removed = await owner.client.post(`/dashboard/team/members/${await userIdOf(memberEmail)}/remove`, { code: await freshCode(service, owner) });
    expect(removed.location).toBe('/dashboard/team?done=removed');

    for (const path of [second, theirs]) {
      expect((await new DashboardClient(service).get(path)).status).toBe(404);
      expect((await new DashboardClient(service).post(path, { password: PASSWORD })).status).toBe(404);
    }
    const [row] = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.email = $1', [memberEmail]);
    expect(row!.n).toBe(0);
    // In no account now, their login opens nothing at the log-in page.
    expect((await new DashboardClient(service).post('/dashboard/login', { email: memberEmail, password: PASSWORD })).status).toBe(401);
    // Invited anew by the owner, they come back by the link, with their password and then their second factor.
    const again = await invite(owner.client, memberEmail, 'viewer');
    const returning = new DashboardClient(service);
    const asked = await returning.get(again);
    expect(asked.status).toBe(200);
    expect(asked.html).toContain(`You have a Tolov login with ${memberEmail}, in no account now: enter its password to join.`);
    expect(asked.html).toContain('autocomplete="current-password"');
    const wrong = await returning.post(again, { password: 'not their password at all' });
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain('That password is not yours.');
    expect((await returning.post(again, { password: PASSWORD })).location).toBe('/dashboard/login/verify');
    expect((await returning.get('/dashboard/payments')).location).toBe('/dashboard/login');
    expect((await returning.post('/dashboard/login/verify', { code: await freshCode(service, memberOwner) })).location).toBe('/dashboard');
    expect((await owner.client.get('/dashboard/team')).html).toMatch(new RegExp(`${memberEmail}</td><td data-label="Role">Viewer</td>`));
    // Used once. (A login in an account is never joined by a password typed on a link: 'an invitation', above.)
    expect((await new DashboardClient(service).get(again)).status).toBe(404);
  });

  it("never lets an operator's login, which is in no account either, join by its password on a link", async () => {
    const admin = await firstAdmin(service);
    const owner = new DashboardClient(service);
    await owner.signUp(uniqueEmail('owner'));
    const path = await invite(owner, admin.email, 'viewer');
    expect((await new DashboardClient(service).get(path)).html).toContain(`You have a Tolov login with ${admin.email}: log in with it`);
    expect((await new DashboardClient(service).post(path, { password: OPERATOR_PASSWORD })).status).toBe(409);
    const [joined] = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memberships WHERE user_id = $1', [await userIdOf(admin.email)]);
    expect(joined!.n).toBe(0);
  });
});

describe('demoting an owner', () => {
  it('revokes the invitations they sent, so that they cannot make themselves an owner again', async () => {
    const owner = await ownerWithSecondFactor(service);
    const coOwnerEmail = uniqueEmail('co-owner');
    const coOwner = new DashboardClient(service);
    expect((await coOwner.post(await invite(owner, coOwnerEmail, 'owner'), { password: PASSWORD })).location).toBe('/dashboard');
    const spare = await invite(await withSecondFactor(coOwner, coOwnerEmail), uniqueEmail('spare'), 'owner');
    const demoted = await owner.client.post(`/dashboard/team/members/${await userIdOf(coOwnerEmail)}/role`, { role: 'viewer', code: await freshCode(service, owner) });
    expect(demoted.location).toBe('/dashboard/team?done=role');
    expect((await new DashboardClient(service).get(spare)).status).toBe(404);
  });
});

describe('who owns the account', () => {
  it('changes only with the acting owner’s second factor: a stolen session of an owner without it makes, unmakes and removes no owner', async () => {
    const owner = new DashboardClient(service);
    await owner.signUp(uniqueEmail('owner'));
    const viewerEmail = uniqueEmail('viewer');
    await new DashboardClient(service).post(await invite(owner, viewerEmail, 'viewer'), { password: PASSWORD });
    const coOwnerEmail = uniqueEmail('co-owner');
    await new DashboardClient(service).post(await invite(owner, coOwnerEmail, 'viewer'), { password: PASSWORD });
    // An owner made before owners needed the second factor.
    await service.db.query(`UPDATE memberships SET role = 'owner' WHERE user_id = $1`, [await userIdOf(coOwnerEmail)]);
    const attacker = uniqueEmail('attacker');
    const refusals = [
      await owner.post('/dashboard/team/invite', { email: attacker, role: 'owner' }),
      await owner.post(`/dashboard/team/members/${await userIdOf(viewerEmail)}/role`, { role: 'owner' }),
      await owner.post(`/dashboard/team/members/${await userIdOf(coOwnerEmail)}/role`, { role: 'viewer' }),
      await owner.post(`/dashboard/team/members/${await userIdOf(coOwnerEmail)}/remove`, {}),
      // A code sent by hand changes nothing either: this session never passed a second factor.
      await owner.post('/dashboard/team/invite', { email: attacker, role: 'owner', code: '123456' }),
    ];
    for (const refused of refusals) {
      expect(refused.status).toBe(403);
      expect(refused.html).toContain('Nothing was changed: adding, changing or removing an owner needs two-factor authentication, passed at log-in.');
      expect(refused.html).not.toContain('name="code"');
    }
    const [invited] = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM invitations WHERE email = $1', [attacker]);
    expect(invited!.n).toBe(0);
    const team = (await owner.get('/dashboard/team')).html;
    expect(team).toMatch(new RegExp(`${viewerEmail}</td><td data-label="Role">Viewer</td>`));
    expect(team).toMatch(new RegExp(`${coOwnerEmail}</td><td data-label="Role">Owner</td>`));
    // What needs no owner changes as before.
    expect((await owner.post(`/dashboard/team/members/${await userIdOf(viewerEmail)}/role`, { role: 'developer' })).location).toBe('/dashboard/team?done=role');
  });

  it('asks an owner with the second factor for a code on a page of its own, refuses a wrong one, and changes with the right one', async () => {
    const owner = await ownerWithSecondFactor(service);
    const email = uniqueEmail('new-owner');
    const asked = await owner.client.post('/dashboard/team/invite', { email, role: 'owner' });
    expect(asked.status).toBe(200);
    expect(asked.html).toContain('Confirm the change of owners');
    expect(asked.html).toContain(`Invite ${email} as an owner.`);
    expect(asked.html).toContain(`<input type="hidden" name="email" value="${email}">`);
    expect(asked.html).toContain('name="code"');

    const wrong = await owner.client.post('/dashboard/team/invite', { email, role: 'owner', code: wrongCodeOf(owner) });
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain('Nothing was changed: that code is not right, or was used already.');
    expect(wrong.html).toContain('name="code"');
    expect((await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM invitations WHERE email = $1', [email]))[0]!.n).toBe(0);

    const link = await invite(owner, email, 'owner');
    const newOwner = new DashboardClient(service);
    expect((await newOwner.post(link, { password: PASSWORD })).location).toBe('/dashboard');
    const id = await userIdOf(email);
    expect((await owner.client.get('/dashboard/team')).html).toMatch(new RegExp(`${email}</td><td data-label="Role">Owner</td>`));

    // Unmaking and removing an owner ask the same; a developer's change does not.
    const demote = await owner.client.post(`/dashboard/team/members/${id}/role`, { role: 'developer' });
    expect(demote.status).toBe(200);
    expect(demote.html).toContain(`Change the role of ${email} to Developer.`);
    expect(demote.html).toContain('<input type="hidden" name="role" value="developer">');
    expect((await owner.client.post(`/dashboard/team/members/${id}/role`, { role: 'developer', code: await freshCode(service, owner) })).location).toBe('/dashboard/team?done=role');
    expect((await owner.client.post(`/dashboard/team/members/${id}/role`, { role: 'viewer' })).location).toBe('/dashboard/team?done=role');
    expect((await owner.client.post(`/dashboard/team/members/${id}/role`, { role: 'owner', code: await freshCode(service, owner) })).location).toBe('/dashboard/team?done=role');
    const remove = await owner.client.post(`/dashboard/team/members/${id}/remove`, {});
    expect(remove.html).toContain(`Remove ${email}, an owner, from the account.`);
    expect((await owner.client.post(`/dashboard/team/members/${id}/remove`, { code: await freshCode(service, owner) })).location).toBe('/dashboard/team?done=removed');
    const audit = (await owner.client.get('/dashboard/team/audit')).html;
    expect(audit).toContain(`${email}: owner → developer`);
    expect(audit).toContain(`${email}: viewer → owner`);
  });
});

describe('a way back in', () => {
  const NEW_PASSWORD = 'a brand new passphrase';

  it('resets a forgotten password by a single-use mail link that ends every session and still asks the second factor', async () => {
    const email = uniqueEmail();
    const owner = new DashboardClient(service);
    await owner.signUp(email);
    const seed = await turnOnSecondFactor(owner);

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
    expect((await client.post('/dashboard/signup', { email, businessName: 'Чорсу' })).status).toBe(200);
    const mail = await service.mailbox.next(email);
    expect(mail.subject).toBe('Подтвердите почту, чтобы завершить создание аккаунта Tolov');
    expect(mail.text).toContain('для «Чорсу»');
  });
});
