// Sign-up, log-in and sessions of the dashboard, through its pages as a browser posts them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/harness.js';
import { linkIn } from '../support/mailbox.js';
import { DashboardClient, uniqueEmail } from './client.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => service.stop());

const PASSWORD = 'correct horse battery';
const count = async (sql: string, params: unknown[] = []) => (await service.db.query<{ n: number }>(sql, params))[0]!.n;

describe('sign-up', () => {
  it('makes an account, its owner, a test-only product and its first test key, shown once on the getting-started page', async () => {
    const client = new DashboardClient(service);
    const email = uniqueEmail();
    const signed = await client.signUp(email.toUpperCase(), PASSWORD, 'Chorsu Market');
    expect(signed.status).toBe(201);
    expect(signed.headers['cache-control']).toBe('no-store');
    expect(String(signed.headers['set-cookie'])).toMatch(/tolov_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; SameSite=Lax; HttpOnly/);
    expect(signed.html).toContain('<h1>Get started</h1>');
    const secret = /<code id="test-key">(sk_test_[0-9A-Za-z]+)<\/code>/.exec(signed.html)?.[1];
    expect(secret).toBeDefined();
    // The steps are written with the key and this Tolov's address, ready to paste.
    expect(signed.html).toContain(`${service.config.checkoutUrl}/merchant/v1/orders`);
    expect(signed.html).toContain(`-u ${secret}:`);
    const [product] = await service.db.query<{ name: string; live_enabled: boolean; keys: Array<{ livemode: boolean; last4: string }> }>(
      `SELECT p.name, p.live_enabled, (SELECT json_agg(json_build_object('livemode', k.livemode, 'last4', k.secret_last4)) FROM api_keys k WHERE k.product_id = p.id) AS keys
         FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1 AND m.role = 'owner'`,
      [email],
    );
    expect(product).toEqual({ name: 'Chorsu Market', live_enabled: false, keys: [{ livemode: false, last4: secret!.slice(-4) }] });
    // The key works at once, as the first step says.
    const body = { amount: 1500000, description: 'Order #1001', customerRef: 'customer-77', returnUrl: 'https://shop.example.uz/orders/1001' };
    const text = signed.html.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&amp;', '&');
    expect(text).toContain(`-H 'Idempotency-Key: order-1001' \\\n  -d '${JSON.stringify(body)}'`);
    const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: secret!, body, idempotencyKey: 'order-1001' });
    expect(order.status).toBe(201);
    expect(order.body).toMatchObject({ status: 'PENDING', livemode: false });
    // Later visits show the steps, never the secret again.
    const again = await client.get('/dashboard/start');
    expect(again.status).toBe(200);
    expect(again.html).toContain('<h1>Get started</h1>');
    expect(again.html).not.toContain(secret);
    expect(again.html).toContain('-u sk_test_…:');
    const keys = await client.get('/dashboard/api-keys');
    expect(keys.html).toContain(`sk_test_…${secret!.slice(-4)}`);
    expect(keys.html).not.toContain(secret);
    const payments = await client.get('/dashboard/payments');
    expect(payments.status).toBe(200);
    expect(payments.html).toContain('Chorsu Market');
    expect(payments.html).toContain(email);
  });

  it('refuses bad input with the reason, changing nothing', async () => {
    const users = await count('SELECT count(*)::int AS n FROM users');
    const client = new DashboardClient(service);
    const cases: Array<[Record<string, string>, string]> = [
      [{ email: 'not-an-email', businessName: 'Shop' }, 'Enter an email address'],
      // Only an address mail goes to as written: no names, lists or quotes that one mailbox could hide behind.
      [{ email: 'x<victim@example.uz>', businessName: 'Shop' }, 'Enter an email address'],
      [{ email: 'victim@example.uz;x.uz', businessName: 'Shop' }, 'Enter an email address'],
      [{ email: '"v"@example.uz', businessName: 'Shop' }, 'Enter an email address'],
      [{ email: 'victim@example.uz.', businessName: 'Shop' }, 'Enter an email address'],
      [{ email: uniqueEmail(), businessName: '' }, 'Enter your business name'],
      [{ email: uniqueEmail(), businessName: 'x'.repeat(201) }, 'Enter your business name'],
    ];
    for (const [fields, message] of cases) {
      const page = await client.post('/dashboard/signup', fields);
      expect(page.status, JSON.stringify(fields)).toBe(400);
      expect(page.html).toContain(message);
    }
    expect(await count('SELECT count(*)::int AS n FROM users')).toBe(users);
  });

  it('answers an e-mail that has a login exactly as a new one, and tells its owner by mail instead', async () => {
    const email = uniqueEmail();
    expect((await new DashboardClient(service).signUp(email)).status).toBe(201);
    const fresh = uniqueEmail('fresh');
    const answers = await Promise.all(
      [email, fresh].map(async (address) => {
        const page = await new DashboardClient(service).post('/dashboard/signup', { email: address, businessName: 'Second Shop' });
        return { status: page.status, text: page.html.replaceAll(address, 'EMAIL').replace(/name="_csrf" value="[^"]+"/g, '') };
      }),
    );
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]!.status).toBe(200);
    expect(answers[0]!.text).toContain('We sent a link to EMAIL.');
    const told = await service.mailbox.next(email, /You have a Tolov account already/);
    expect(linkIn(told, '/dashboard/password/forgot')).toBe('/dashboard/password/forgot');
    expect(await count('SELECT count(*)::int AS n FROM users WHERE email = $1', [email])).toBe(1);
    expect(await count('SELECT count(*)::int AS n FROM users WHERE email = $1', [fresh])).toBe(0);
  });

  it('makes the account only when the mail’s link is confirmed, once; opening the link changes nothing', async () => {
    const email = uniqueEmail();
    const client = new DashboardClient(service);
    expect((await client.post('/dashboard/signup', { email, businessName: 'Bukhara Silk' })).status).toBe(200);
    const mail = await service.mailbox.next(email);
    expect(mail.subject).toBe('Confirm your e-mail to finish your Tolov account');
    expect(mail.from).toContain('no-reply@127.0.0.1');
    const link = linkIn(mail, '/dashboard/signup/confirm/');
    const opened = await client.get(link);
    expect(opened.html).toContain(`Create the Tolov account of Bukhara Silk, with the login ${email}.`);
    expect(opened.html).toContain('Choose the password you will log in with.');
    expect(await count('SELECT count(*)::int AS n FROM users WHERE email = $1', [email])).toBe(0);
    expect((await client.post(link, { password: 'short' })).status).toBe(400);
    const confirmed = await client.post(link, { password: PASSWORD });
    expect(confirmed.status).toBe(201);
    expect(confirmed.html).toContain('<h1>Get started</h1>');
    expect((await client.get('/dashboard/payments')).html).toContain('Bukhara Silk');
    const again = new DashboardClient(service);
    expect((await again.get(link)).status).toBe(404);
    expect((await again.post(link, { password: PASSWORD })).status).toBe(404);
    expect(await count('SELECT count(*)::int AS n FROM users WHERE email = $1', [email])).toBe(1);
  });

  it('mails one address at most three links an hour, whoever asks, answering every request the same', async () => {
    const email = uniqueEmail('flooded');
    for (let n = 0; n < 4; n++) expect((await new DashboardClient(service).post('/dashboard/signup', { email, businessName: 'Shop' })).status).toBe(200);
    await service.mailbox.next(email);
    await expect.poll(() => service.mailbox.to(email).length).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(service.mailbox.to(email)).toHaveLength(3);
  });

  it('takes ten requests that mail a link, and hashes ten new passwords, an hour from one address', async () => {
    const client = new DashboardClient(service);
    const statuses = [];
    for (let n = 0; n < 11; n++) statuses.push((await client.post('/dashboard/signup', { email: uniqueEmail(), businessName: 'Shop' })).status);
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429]);
    // Eleven sign-ups asked from elsewhere, finished from one address: the eleventh password is not hashed.
    const links = [];
    for (let n = 0; n < 11; n++) {
      const email = uniqueEmail();
      await new DashboardClient(service).post('/dashboard/signup', { email, businessName: 'Shop' });
      links.push(linkIn(await service.mailbox.next(email), '/dashboard/signup/confirm/'));
    }
    const finisher = new DashboardClient(service);
    const finished = [];
    for (const link of links) finished.push((await finisher.post(link, { password: PASSWORD })).status);
    expect(finished).toEqual([...Array<number>(10).fill(201), 429]);
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

  /** Wrong passwords for `email`, each from a client (and address) of its own; their statuses. */
  const guesses = async (email: string, count: number) => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < count; attempt++) statuses.push((await new DashboardClient(service).post('/dashboard/login', { email, password: `guess number ${attempt}` })).status);
    return statuses;
  };

  it('slows guessing on an account instead of locking it: the right password gets in after ten wrong ones, and after more', async () => {
    const email = uniqueEmail();
    await new DashboardClient(service).signUp(email);
    expect(await guesses(email, 10)).toEqual(Array<number>(10).fill(401));
    expect((await new DashboardClient(service).post('/dashboard/login', { email, password: PASSWORD })).location).toBe('/dashboard');
    // Past ten failures a day, each further check waits its turn, ten seconds more than the last gap.
    expect(await guesses(email, 11)).toEqual(Array<number>(11).fill(401));
    const started = Date.now();
    const right = await new DashboardClient(service).post('/dashboard/login', { email, password: PASSWORD });
    expect(right.location).toBe('/dashboard');
    expect(Date.now() - started).toBeGreaterThanOrEqual(8_000);
  }, 60_000);

  it('answers an unknown e-mail exactly as a known one with a wrong password, and takes as long', async () => {
    const known = uniqueEmail();
    await new DashboardClient(service).signUp(known);
    const unknown = uniqueEmail('nobody');
    const answers = async (email: string) => {
      const client = new DashboardClient(service);
      client.address = '10.250.0.1';
      const pages = [];
      for (let attempt = 0; attempt < 3; attempt++) pages.push(await client.post('/dashboard/login', { email, password: `wrong password ${attempt}` }));
      return pages.map((page) => ({ status: page.status, notice: /<p class="notice error"[^>]*>([^<]+)</.exec(page.html)?.[1] }));
    };
    expect(await answers(unknown)).toEqual(await answers(known));
    expect((await answers(known))[0]).toEqual({ status: 401, notice: 'The email or the password is wrong.' });
    // An unknown e-mail costs a password check too: it is not answered faster.
    const timed = async (email: string) => {
      const started = performance.now();
      await new DashboardClient(service).post('/dashboard/login', { email, password: 'wrong password' });
      return performance.now() - started;
    };
    const knownTimes: number[] = [];
    const unknownTimes: number[] = [];
    for (let round = 0; round < 5; round++) {
      knownTimes.push(await timed(known));
      unknownTimes.push(await timed(unknown));
    }
    const median = (times: number[]) => times.sort((a, b) => a - b)[2]!;
    expect(median(unknownTimes)).toBeGreaterThan(median(knownTimes) * 0.5);
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
        expect(page.html).toMatch(/Too many attempts\. Try again in \d+ s\./);
        expect(Number(page.headers['retry-after'])).toBeGreaterThan(0);
      }
    }
    expect(refusedAt).toBe(20);
    const elsewhere = await new DashboardClient(service).post('/dashboard/login', { email: emails[0]!, password: PASSWORD });
    expect(elsewhere.status).toBe(303);
  });

  it('never checks more passwords than an address’s limit, however many arrive at once', async () => {
    const clients = Array.from({ length: 60 }, () => {
      const client = new DashboardClient(service);
      client.address = '10.251.0.1';
      return client;
    });
    await Promise.all(clients.map((client) => client.csrf()));
    const pages = await Promise.all(clients.map((client, n) => client.post('/dashboard/login', { email: uniqueEmail('nobody'), password: `guess ${n}` })));
    const statuses = pages.map((page) => page.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(40);
  });

  it('never checks more passwords of one account than its turns allow, however many addresses guess at once', async () => {
    const email = uniqueEmail();
    await new DashboardClient(service).signUp(email);
    const clients = Array.from({ length: 30 }, () => new DashboardClient(service));
    await Promise.all(clients.map((client) => client.csrf()));
    const pages = await Promise.all(clients.map((client, n) => client.post('/dashboard/login', { email, password: `guess ${n}` })));
    // Ten at once, then turns 0 and 10 s after the eleventh; a turn more than 10 s away is refused.
    expect(pages.filter((page) => page.status === 401)).toHaveLength(12);
    expect(pages.filter((page) => page.status === 429)).toHaveLength(18);
  }, 60_000);
});

describe('a form posted twice', () => {
  it('makes one key and one endpoint: each form carries an idempotency key, and the second post replays the first answer', async () => {
    const client = new DashboardClient(service);
    await client.signUp(uniqueEmail());
    const keysPage = await client.get('/dashboard/api-keys');
    const formKey = /action="\/dashboard\/api-keys"><input type="hidden" name="_csrf" value="[^"]+"><input type="hidden" name="idempotencyKey" value="([0-9a-f-]{36})">/.exec(keysPage.html)?.[1];
    expect(formKey).toBeDefined();
    const product = /<strong>([^<]+)<\/strong>/.exec(keysPage.html)![1];
    const keysOf = async () => count('SELECT count(*)::int AS n FROM api_keys k JOIN products p ON p.id = k.product_id WHERE p.name = $1', [product]);
    const before = await keysOf();
    const first = await client.post('/dashboard/api-keys', { idempotencyKey: formKey! });
    const second = await client.post('/dashboard/api-keys', { idempotencyKey: formKey! });
    expect([first.status, second.status]).toEqual([201, 201]);
    const secretOf = (html: string) => /<code id="new-key">(sk_test_[0-9A-Za-z]+)<\/code>/.exec(html)?.[1];
    expect(secretOf(second.html)).toBe(secretOf(first.html));
    expect(await keysOf()).toBe(before + 1);
    // A new form is a new key.
    expect((await client.post('/dashboard/api-keys', { idempotencyKey: '00000000-0000-4000-8000-00000000000b' })).status).toBe(201);
    expect(await keysOf()).toBe(before + 2);
    // A malformed key is refused, changing nothing.
    expect((await client.post('/dashboard/api-keys', { idempotencyKey: 'twice' })).status).toBe(400);
    expect(await keysOf()).toBe(before + 2);
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
    // A live key moves real money: it is made, and rolled, only after the password; a wrong one makes nothing, audited.
    expect(live.html).toContain('Your password: a live key moves real money');
    const keysNow = async () => (await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE product_id = $1 AND livemode', [id]))[0]!.n;
    for (const password of [undefined, 'not my password at all']) {
      const refused = await client.post('/dashboard/api-keys', password ? { password } : {});
      expect(refused.status).toBe(401);
      expect(refused.html).toContain('That password is not yours: no live key was made or rolled.');
      expect(refused.html).not.toMatch(/sk_live_[0-9A-Za-z]{32}/);
    }
    expect(await keysNow()).toBe(0);
    const created = await client.post('/dashboard/api-keys', { password: PASSWORD });
    expect(created.status).toBe(201);
    expect(created.html).toMatch(/sk_live_[0-9A-Za-z]{32}/);
    const [key] = await service.db.query<{ id: string }>('SELECT id FROM api_keys WHERE product_id = $1 AND livemode', [id]);
    const roll = (form: Record<string, string>) => client.post(`/dashboard/api-keys/${key!.id}/roll`, { overlapSeconds: '0', ...form });
    expect((await roll({ password: 'not my password at all' })).status).toBe(401);
    expect(await keysNow()).toBe(1);
    expect((await roll({ password: PASSWORD })).html).toMatch(/sk_live_[0-9A-Za-z]{32}/);
    expect(await keysNow()).toBe(2);
    const audit = (await client.get('/dashboard/team/audit')).html;
    expect(audit.match(/api_key\.create_refused/g)).toHaveLength(2);
    expect(audit.match(/api_key\.roll_refused/g)).toHaveLength(1);
    // Test mode's keys ask for nothing.
    await client.post('/dashboard/mode', { mode: 'test' });
    expect((await client.post('/dashboard/api-keys', {})).html).toMatch(/sk_test_[0-9A-Za-z]{32}/);
  });
});

describe('over https', () => {
  it('marks the session cookie Secure', async () => {
    const secure = await startService({ TOLOV_CHECKOUT_URL: 'https://pay.example.uz' });
    try {
      const signed = await new DashboardClient(secure).signUp(uniqueEmail());
      expect(signed.status).toBe(201);
      expect(String(signed.headers['set-cookie'])).toMatch(/tolov_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; SameSite=Lax; HttpOnly; Secure/);
    } finally {
      await secure.stop();
    }
  });
});
