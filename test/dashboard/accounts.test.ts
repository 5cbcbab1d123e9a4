// Sign-up, log-in and sessions of the dashboard, through its pages as a browser posts them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/harness.js';
import { DashboardClient, uniqueEmail } from './client.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => service.stop());

const PASSWORD = 'correct horse battery';
const count = async (sql: string, params: unknown[] = []) => (await service.db.query<{ n: number }>(sql, params))[0]!.n;

describe('sign-up', () => {
  it('makes an account, its owner and a test-only product, and signs the owner in', async () => {
    const client = new DashboardClient(service);
    const email = uniqueEmail();
    const signed = await client.signUp(email.toUpperCase(), PASSWORD, 'Chorsu Market');
    expect(signed.status).toBe(303);
    expect(signed.location).toBe('/dashboard');
    expect(String(signed.headers['set-cookie'])).toMatch(/tolov_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; SameSite=Lax; HttpOnly/);
    const [product] = await service.db.query<{ name: string; live_enabled: boolean; keys: number }>(
      `SELECT p.name, p.live_enabled, (SELECT count(*)::int FROM api_keys k WHERE k.product_id = p.id) AS keys
         FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1 AND m.role = 'owner'`,
      [email],
    );
    expect(product).toEqual({ name: 'Chorsu Market', live_enabled: false, keys: 0 });
    const payments = await client.get('/dashboard/payments');
    expect(payments.status).toBe(200);
    expect(payments.html).toContain('Chorsu Market');
    expect(payments.html).toContain(email);
  });

  it('refuses bad input with the reason, changing nothing', async () => {
    const users = await count('SELECT count(*)::int AS n FROM users');
    const client = new DashboardClient(service);
    const cases: Array<[Record<string, string>, string]> = [
      [{ email: 'not-an-email', password: PASSWORD, businessName: 'Shop' }, 'Enter an email address'],
      [{ email: uniqueEmail(), password: 'short', businessName: 'Shop' }, 'must be 10 to 200 characters'],
      [{ email: uniqueEmail(), password: PASSWORD, businessName: '' }, 'Enter your business name'],
      [{ email: uniqueEmail(), password: PASSWORD, businessName: 'x'.repeat(201) }, 'Enter your business name'],
    ];
    for (const [fields, message] of cases) {
      const page = await client.post('/dashboard/signup', fields);
      expect(page.status, JSON.stringify(fields)).toBe(400);
      expect(page.html).toContain(message);
    }
    expect(await count('SELECT count(*)::int AS n FROM users')).toBe(users);
  });

  it('refuses an email that has an account, keeping the form filled in', async () => {
    const email = uniqueEmail();
    expect((await new DashboardClient(service).signUp(email)).status).toBe(303);
    const again = await new DashboardClient(service).signUp(email, PASSWORD, 'Second Shop');
    expect(again.status).toBe(409);
    expect(again.html).toContain('An account with this email exists already');
    expect(again.html).toContain('value="Second Shop"');
    expect(await count('SELECT count(*)::int AS n FROM users WHERE email = $1', [email])).toBe(1);
  });
});

describe('log-in and sessions', () => {
  it('logs in with the password, and not with another', async () => {
    const email = uniqueEmail();
    await new DashboardClient(service).signUp(email);
    const client = new DashboardClient(service);
    const wrong = await client.post('/dashboard/login', { email, password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain('The email or the password is wrong');
    const unknown = await client.post('/dashboard/login', { email: uniqueEmail('nobody'), password: PASSWORD });
    expect(unknown.status).toBe(401);
    expect(unknown.html).toContain('The email or the password is wrong');
    const right = await client.post('/dashboard/login', { email, password: PASSWORD });
    expect(right.status).toBe(303);
    expect((await client.get('/dashboard/payments')).status).toBe(200);
  });

  it('never takes a session token planted before log-in (fixation)', async () => {
    const email = uniqueEmail();
    await new DashboardClient(service).signUp(email);
    const client = new DashboardClient(service);
    const planted = 'A'.repeat(43);
    client.cookies.set('tolov_session', planted);
    await client.post('/dashboard/login', { email, password: PASSWORD });
    const token = client.cookies.get('tolov_session');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(token).not.toBe(planted);
    const attacker = new DashboardClient(service);
    attacker.cookies.set('tolov_session', planted);
    expect((await attacker.get('/dashboard/payments')).location).toBe('/dashboard/login');
  });

  it('ends the session at log-out, in the database: the old cookie opens nothing', async () => {
    const client = new DashboardClient(service);
    await client.signUp(uniqueEmail());
    const token = client.cookies.get('tolov_session')!;
    const out = await client.post('/dashboard/logout', {});
    expect(out.status).toBe(303);
    expect(out.location).toBe('/dashboard/login');
    expect(client.cookies.has('tolov_session')).toBe(false);
    const replayed = new DashboardClient(service);
    replayed.cookies.set('tolov_session', token);
    const page = await replayed.get('/dashboard/api-keys');
    expect(page.status).toBe(303);
    expect(page.location).toBe('/dashboard/login');
    expect(await count('SELECT count(*)::int AS n FROM dashboard_sessions WHERE revoked_at IS NOT NULL AND user_id = (SELECT user_id FROM dashboard_sessions ORDER BY created_at DESC LIMIT 1)')).toBe(1);
  });

  it('throttles password guessing per account, across addresses, with a clear message', async () => {
    const email = uniqueEmail();
    await new DashboardClient(service).signUp(email);
    for (let attempt = 0; attempt < 10; attempt++) {
      const guess = await new DashboardClient(service).post('/dashboard/login', { email, password: `guess number ${attempt}` });
      expect(guess.status).toBe(401);
    }
    // Even the right password is refused until the window ends.
    const refused = await new DashboardClient(service).post('/dashboard/login', { email, password: PASSWORD });
    expect(refused.status).toBe(429);
    expect(refused.html).toMatch(/Too many failed log-ins to this account\. For its safety, try again in 1[45] min/);
    await service.db.query(`UPDATE users SET login_window_start = now() - interval '16 minutes' WHERE email = $1`, [email]);
    expect((await new DashboardClient(service).post('/dashboard/login', { email, password: PASSWORD })).status).toBe(303);
  });

  it('throttles failed log-ins per client address', async () => {
    // 20 failures from one address, on any accounts, then that address waits; others do not.
    const emails = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const email = uniqueEmail();
        await new DashboardClient(service).signUp(email);
        return email;
      }),
    );
    const client = new DashboardClient(service);
    let refusedAt = -1;
    for (let attempt = 0; attempt < 25 && refusedAt < 0; attempt++) {
      const page = await client.post('/dashboard/login', { email: emails[attempt % 3]!, password: `wrong password ${attempt}` });
      if (page.status === 429) {
        refusedAt = attempt;
        expect(page.html).toMatch(/Too many failed log-ins from your network\. Try again in \d+ s/);
      }
    }
    expect(refusedAt).toBe(20);
    const elsewhere = await new DashboardClient(service).post('/dashboard/login', { email: emails[0]!, password: PASSWORD });
    expect(elsewhere.status).toBe(303);
  });
});

describe('CSRF and origin', () => {
  it('refuses a state-changing POST without the form token, or with another session’s, changing nothing', async () => {
    const client = new DashboardClient(service);
    await client.signUp(uniqueEmail());
    const other = new DashboardClient(service);
    await other.signUp(uniqueEmail());
    const keys = await count('SELECT count(*)::int AS n FROM api_keys');
    for (const csrf of [null, '', 'x'.repeat(43), await other.csrf()]) {
      const page = await client.post('/dashboard/api-keys', {}, { csrf });
      expect(page.status).toBe(403);
      expect(page.html).toContain('Not allowed');
    }
    expect(await count('SELECT count(*)::int AS n FROM api_keys')).toBe(keys);
    expect((await client.post('/dashboard/api-keys', {})).status).toBe(201);
  });

  it('refuses a POST from another origin, even with the token', async () => {
    const client = new DashboardClient(service);
    await client.signUp(uniqueEmail());
    const page = await client.post('/dashboard/api-keys', {}, { origin: 'https://evil.example' });
    expect(page.status).toBe(403);
  });

  it('refuses a log-in form posted without the form cookie’s token (login CSRF)', async () => {
    const email = uniqueEmail();
    await new DashboardClient(service).signUp(email);
    const page = await new DashboardClient(service).post('/dashboard/login', { email, password: PASSWORD }, { csrf: null });
    expect(page.status).toBe(403);
  });
});

describe('live mode', () => {
  it('stays off until the operator enables it, and the switch says why', async () => {
    const client = new DashboardClient(service);
    const email = uniqueEmail();
    await client.signUp(email);
    const before = await client.get('/dashboard/api-keys');
    expect(before.html).toContain('Live mode opens once Tolov has verified your business');
    expect(before.html).toMatch(/<button type="button" disabled aria-describedby="live-off">Switch to live mode<\/button>/);
    // Asking anyway changes nothing.
    await client.post('/dashboard/mode', { mode: 'live' });
    expect((await client.get('/dashboard/api-keys')).html).toContain('Test mode');

    const [{ id }] = (await service.db.query<{ id: string }>(
      `SELECT p.id FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1`,
      [email],
    )) as [{ id: string }];
    const enabled = await service.admin('POST', `/admin/v1/products/${id}/live`);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ id, object: 'product', liveEnabled: true });
    expect((await service.admin('POST', '/admin/v1/products/prod_missing/live')).status).toBe(404);

    await client.post('/dashboard/mode', { mode: 'live' });
    const live = await client.get('/dashboard/api-keys');
    expect(live.html).toContain('Live mode');
    expect(live.html).not.toContain('You are viewing test data');
    const created = await client.post('/dashboard/api-keys', {});
    expect(created.html).toMatch(/sk_live_[0-9A-Za-z]{32}/);
  });
});

describe('over https', () => {
  it('marks the session cookie Secure', async () => {
    const secure = await startService({ TOLOV_CHECKOUT_URL: 'https://pay.example.uz' });
    try {
      const signed = await new DashboardClient(secure).signUp(uniqueEmail());
      expect(signed.status).toBe(303);
      expect(String(signed.headers['set-cookie'])).toMatch(/tolov_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; SameSite=Lax; HttpOnly; Secure/);
    } finally {
      await secure.stop();
    }
  });
});
