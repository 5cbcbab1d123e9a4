// The console's accounts: the first operator made with the operator token and no other, the mandatory second factor,
// log-in and its throttling as the dashboard's, and sessions that never stand for a merchant's (nor the reverse).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeNow } from '../../src/modules/accounts/second-factor.js';
import { DashboardClient, uniqueEmail } from '../dashboard/client.js';
import { startService, type TestService } from '../support/harness.js';
import { firstAdmin, logIn, OperatorClient, PASSWORD, type Operator } from './client.js';

let service: TestService;
let admin: Operator;

beforeAll(async () => {
  service = await startService();
  admin = await firstAdmin(service);
});
afterAll(() => service?.stop());

describe('the first operator', () => {
  it('is made once with the operator token: the next are invited from the console', async () => {
    const again = await service.admin('POST', '/admin/v1/operators', { email: uniqueEmail('second'), password: PASSWORD, role: 'admin' });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('INVALID_STATE');
    const listed = await service.admin('GET', '/admin/v1/operators');
    expect(listed.body.data).toEqual([expect.objectContaining({ object: 'operator', email: admin.email, role: 'admin', secondFactor: true })]);
  });

  it('refuses a body that is no operator, and changes nothing', async () => {
    for (const body of [{ email: 'not-an-email', password: PASSWORD }, { email: uniqueEmail(), password: 'short' }, { email: uniqueEmail(), password: PASSWORD, role: 'owner' }]) {
      const refused = await service.admin('POST', '/admin/v1/operators', body);
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('VALIDATION_ERROR');
    }
    expect((await service.admin('GET', '/admin/v1/operators')).body.data).toHaveLength(1);
  });

  it('is an admin: the token cannot make a console that no one could staff', async () => {
    const refused = await service.admin('POST', '/admin/v1/operators', { email: uniqueEmail('support'), password: PASSWORD, role: 'support' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_ERROR', param: 'role' });
  });

  it('is recorded in the audit log, as the operator token made it', async () => {
    const log = await service.admin('GET', '/admin/v1/audit_log');
    const created = log.body.data.find((entry: { action: string }) => entry.action === 'operator.created');
    expect(created).toMatchObject({ object: 'operator_audit_entry', operator: null, via: 'api', detail: `${admin.email} as admin` });
    expect(log.body.data.map((entry: { action: string }) => entry.action)).toContain('operator.second_factor_enabled');
  });
});

describe('logging in', () => {
  it('asks for the second factor every time, and opens the console once it is proved', async () => {
    const client = new OperatorClient(service);
    const password = await client.post('/operator/login', { email: admin.email, password: PASSWORD });
    expect(password.location).toBe('/operator/login/verify');
    // The password alone opens nothing.
    expect((await client.get('/operator/activations')).location).toBe('/operator/login');
    await service.db.query('UPDATE users SET totp_last_step = NULL WHERE email = $1', [admin.email]);
    const wrong = await client.post('/operator/login/verify', { code: codeNow(admin.seed) === '000000' ? '111111' : '000000' });
    expect(wrong.status).toBe(401);
    const right = await client.post('/operator/login/verify', { code: codeNow(admin.seed) });
    expect(right.location).toBe('/operator');
    expect((await client.get('/operator')).location).toBe('/operator/activations');
  });

  it('answers a wrong password and an unknown e-mail alike, and a merchant login as unknown', async () => {
    const client = new OperatorClient(service);
    const wrong = await client.post('/operator/login', { email: admin.email, password: 'not the password' });
    const unknown = await client.post('/operator/login', { email: uniqueEmail('nobody'), password: PASSWORD });
    const merchant = new DashboardClient(service);
    const merchantEmail = uniqueEmail('merchant');
    await merchant.signUp(merchantEmail, PASSWORD);
    const asMerchant = await client.post('/operator/login', { email: merchantEmail, password: PASSWORD });
    for (const page of [wrong, unknown, asMerchant]) {
      expect(page.status).toBe(401);
      expect(page.html).toContain('The email or the password is wrong.');
    }
    // And the operator's password opens no dashboard.
    const dashboard = await new DashboardClient(service).post('/dashboard/login', { email: admin.email, password: PASSWORD });
    expect(dashboard.status).toBe(401);
  });

  it('cannot be reset through the dashboard: its password-reset form mails an operator nothing', async () => {
    const merchantEmail = uniqueEmail('forgetful');
    await new DashboardClient(service).signUp(merchantEmail, PASSWORD);
    const asked = await new DashboardClient(service).post('/dashboard/password/forgot', { email: admin.email });
    expect(asked.status).toBe(200);
    await new DashboardClient(service).post('/dashboard/password/forgot', { email: merchantEmail });
    // The merchant's link comes, after the operator's request: that one was answered alike and sent nothing.
    await service.mailbox.next(merchantEmail, /new password|Новый пароль|yangi parol/i);
    expect(service.mailbox.to(admin.email).map((mail) => mail.subject)).toEqual([]);
  });

  it('is throttled per e-mail as the dashboard is: past the free failures, a wait', async () => {
    const client = new OperatorClient(service);
    const email = uniqueEmail('guessed');
    let last = { status: 0, headers: {} as Record<string, unknown> };
    for (let attempt = 0; attempt < 15 && last.status !== 429; attempt++) {
      client.address = `10.250.0.${attempt + 1}`;
      last = await client.post('/operator/login', { email, password: `guess ${attempt}` });
    }
    expect(last.status).toBe(429);
    expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('a session without the second factor', () => {
  it('opens only the set-up, whatever page it asks for', async () => {
    const client = new OperatorClient(service);
    // A session of the admin's login before its second factor existed cannot be made again: one is made by hand here.
    const { token } = await sessionWithoutSecondFactor();
    client.cookies.set('tolov_operator', token);
    for (const path of ['/operator', '/operator/activations', '/operator/products', '/operator/checks', '/operator/audit']) {
      expect((await client.get(path)).location, path).toBe('/operator/second-factor');
    }
    const posted = await client.post('/operator/operators/invite', { email: uniqueEmail(), role: 'support' });
    expect(posted.status).toBe(403);
  });
});

describe('sessions of the console and of the dashboard', () => {
  it('never stand for each other', async () => {
    const operatorToken = admin.client.cookies.get('tolov_operator')!;
    const asDashboard = new DashboardClient(service);
    asDashboard.cookies.set('tolov_session', operatorToken);
    expect((await asDashboard.get('/dashboard/overview')).location).toBe('/dashboard/login');

    const merchant = new DashboardClient(service);
    await merchant.signUp(uniqueEmail('owner'), PASSWORD);
    const merchantToken = merchant.cookies.get('tolov_session')!;
    const asConsole = new OperatorClient(service);
    asConsole.cookies.set('tolov_operator', merchantToken);
    expect((await asConsole.get('/operator/activations')).location).toBe('/operator/login');
  });

  it('are cookies of their own paths', async () => {
    const client = new OperatorClient(service);
    const page = await client.get('/operator/login');
    const cookies = ([] as string[]).concat((page.headers['set-cookie'] as string[] | string | undefined) ?? []);
    expect(cookies.some((line) => /^tolov_form=.*Path=\/operator;.*HttpOnly/.test(line))).toBe(true);
    const signedIn = await new OperatorClient(service).post('/operator/login', { email: admin.email, password: PASSWORD }, { csrf: await client.csrf() });
    expect(signedIn.status).toBe(403); // another client's form token
  });

  it('refuse a form from another origin, or without its token', async () => {
    await logIn(service, admin.client, admin);
    const csrf = await admin.client.csrf();
    expect((await admin.client.post('/operator/logout', {}, { csrf, origin: 'https://evil.example' })).status).toBe(403);
    expect((await admin.client.post('/operator/logout', {}, { csrf: null })).status).toBe(403);
    expect((await admin.client.get('/operator/activations')).status).not.toBe(303);
  });

  it('give a new session at every log-in: a planted cookie never becomes one', async () => {
    const client = new OperatorClient(service);
    const planted = 'a'.repeat(43);
    client.cookies.set('tolov_operator', planted);
    await logIn(service, client, admin);
    expect(client.cookies.get('tolov_operator')).not.toBe(planted);
    const logout = await client.post('/operator/logout', {});
    expect(logout.location).toBe('/operator/login');
    expect((await client.get('/operator/activations')).location).toBe('/operator/login');
  });
});

/** A session of the admin's login that proved only the password, as a login without a second factor gets. */
async function sessionWithoutSecondFactor(): Promise<{ token: string }> {
  const { createHash, randomBytes } = await import('node:crypto');
  const token = randomBytes(32).toString('base64url');
  await service.db.query(
    `INSERT INTO dashboard_sessions (token_hash, user_id, account_id, csrf_token, expires_at)
     SELECT $1, id, NULL, $2, now() + interval '1 hour' FROM users WHERE email = $3`,
    [createHash('sha256').update(token).digest(), randomBytes(32).toString('base64url'), admin.email],
  );
  return { token };
}

describe('the operator token’s actions', () => {
  it('are each recorded in the audit log with what they did, never a secret', async () => {
    const made = await service.admin('POST', '/admin/v1/products', { name: 'Audited shop' });
    const productId = made.body.id as string;
    const key = await service.admin('POST', `/admin/v1/products/${productId}/keys`, { mode: 'test' });
    await service.admin('POST', `/admin/v1/keys/${key.body.id}/revoke`);
    await service.admin('POST', `/admin/v1/products/${productId}/branding`, { displayName: 'Audited' });
    await service.admin('POST', `/admin/v1/products/${productId}`, { feeBps: 120 });
    await service.admin('POST', `/admin/v1/products/${productId}/suspend`, { reason: 'Documents requested' });
    await service.admin('POST', `/admin/v1/products/${productId}/resume`);
    const log = (await service.admin('GET', `/admin/v1/audit_log?target=${productId}`)).body.data as Array<Record<string, unknown>>;
    expect(log.map((entry) => [entry.action, entry.detail, entry.via, entry.operator])).toEqual([
      ['product.resumed', null, 'api', null],
      ['product.suspended', 'Documents requested', 'api', null],
      ['product.updated', 'feeBps = 120', 'api', null],
      ['product.branding_changed', null, 'api', null],
      ['api_key.revoked', key.body.id, 'api', null],
      ['api_key.created', `${key.body.id} (test)`, 'api', null],
      ['product.created', 'Audited shop', 'api', null],
    ]);
    expect(JSON.stringify(log)).not.toContain(key.body.secret);
    expect(JSON.stringify(log)).not.toContain(made.body.keys.test);
  });

  it('leave nothing when refused: no change, no entry', async () => {
    const newest = async () => (await service.admin('GET', '/admin/v1/audit_log')).body.data[0].id as string;
    const before = await newest();
    expect((await service.admin('POST', '/admin/v1/products/prod_nothing/suspend', { reason: 'x' })).status).toBe(404);
    expect((await service.admin('POST', '/admin/v1/keys/key_nothing/revoke')).status).toBe(404);
    expect(await newest()).toBe(before);
  });
});
