// The optional second factor: set up with an authenticator app, asked for at log-in, each code once, recovery codes
// once each, the seed sealed at rest, turned off only with the password.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeNow } from '../../src/modules/accounts/second-factor.js';
import { startService, type TestService } from '../support/harness.js';
import { DashboardClient, nextCode, uniqueEmail } from './client.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => service.stop());

const PASSWORD = 'correct horse battery';

/** A user with the second factor on: their client (logged out), the seed and the recovery codes. */
async function userWithSecondFactor() {
  const email = uniqueEmail();
  const client = new DashboardClient(service);
  await client.signUp(email);
  const setup = await client.post('/dashboard/account/second-factor/begin', {});
  expect(setup.html).toMatch(/<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  const seed = /<code id="seed">([A-Z2-7]+)<\/code>/.exec(setup.html)![1]!;
  const sealed = /name="seed" value="([^"]+)"/.exec(setup.html)![1]!;
  expect(setup.html).toContain('autocomplete="current-password"');
  const wrongCode = await client.post('/dashboard/account/second-factor/enable', { seed: sealed, password: PASSWORD, code: '000000' === codeNow(seed) ? '111111' : '000000' });
  expect(wrongCode.status).toBe(400);
  expect(wrongCode.html).toContain(`<code id="seed">${seed}</code>`);
  const enabled = await client.post('/dashboard/account/second-factor/enable', { seed: sealed, password: PASSWORD, code: codeNow(seed) });
  expect(enabled.status).toBe(200);
  expect(enabled.html).toContain('Two-factor authentication is on.');
  const codes = [...enabled.html.matchAll(/<li><code>([a-z0-9]{4}-[a-z0-9]{4})<\/code><\/li>/g)].map((match) => match[1]!);
  expect(codes).toHaveLength(10);
  await client.post('/dashboard/logout', {});
  return { email, client, seed, codes };
}

async function passwordStep(email: string) {
  const client = new DashboardClient(service);
  const page = await client.post('/dashboard/login', { email, password: PASSWORD });
  expect(page.location).toBe('/dashboard/login/verify');
  return client;
}

describe('two-factor authentication', () => {
  it('is turned on only with the password: a session alone, someone else at the browser, cannot put an authenticator of theirs on it', async () => {
    const email = uniqueEmail();
    const client = new DashboardClient(service);
    await client.signUp(email);
    const setup = await client.post('/dashboard/account/second-factor/begin', {});
    const seed = /<code id="seed">([A-Z2-7]+)<\/code>/.exec(setup.html)![1]!;
    const sealed = /name="seed" value="([^"]+)"/.exec(setup.html)![1]!;
    for (const password of [undefined, 'not the password at all']) {
      const refused = await client.post('/dashboard/account/second-factor/enable', { seed: sealed, code: codeNow(seed), ...(password ? { password } : {}) });
      expect(refused.status).toBe(401);
      expect(refused.html).toContain('That password is not yours.');
      expect(refused.html).not.toContain('<li><code>');
      // The same seed's set-up again, which the app has scanned already.
      expect(refused.html).toContain(`<code id="seed">${seed}</code>`);
      expect(refused.html).toContain(`name="seed" value="${sealed}"`);
    }
    // Still off: the password alone logs in, and the page offers the set-up.
    const again = new DashboardClient(service);
    expect((await again.post('/dashboard/login', { email, password: PASSWORD })).location).toBe('/dashboard');
    expect((await again.get('/dashboard/account')).html).toContain('Off. With it on, logging in also asks for a code');
  });

  it('asks for the authenticator’s code after the password; the password alone opens nothing', async () => {
    const { email, seed } = await userWithSecondFactor();
    const client = await passwordStep(email);
    expect((await client.get('/dashboard/payments')).location).toBe('/dashboard/login');
    expect((await client.post('/dashboard/api-keys', {})).status).toBe(403);
    const verify = await client.get('/dashboard/login/verify');
    expect(verify.html).toContain('autocomplete="one-time-code"');
    const wrong = await client.post('/dashboard/login/verify', { code: [codeNow(seed), nextCode(seed)].includes('123456') ? '654321' : '123456' });
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain('That code is not right, or was used already.');
    const pendingToken = client.cookies.get('tolov_session');
    // Taken once: a 30-second step may end between two calls of nextCode, which would then name another code.
    const code = nextCode(seed);
    const right = await client.post('/dashboard/login/verify', { code });
    expect(right.location).toBe('/dashboard');
    expect(client.cookies.get('tolov_session')).not.toBe(pendingToken);
    expect((await client.get('/dashboard/payments')).status).toBe(200);

    // The same code a second time does not open another session.
    const again = await passwordStep(email);
    expect((await again.post('/dashboard/login/verify', { code })).status).toBe(401);
  });

  it('takes each recovery code once', async () => {
    const { email, codes } = await userWithSecondFactor();
    const first = await passwordStep(email);
    expect((await first.post('/dashboard/login/verify', { code: codes[3]!.toUpperCase() })).location).toBe('/dashboard');
    expect((await first.get('/dashboard/account')).html).toContain('Recovery codes left: 9.');
    const second = await passwordStep(email);
    expect((await second.post('/dashboard/login/verify', { code: codes[3]! })).status).toBe(401);
  });

  it('keeps the seed sealed and the recovery codes hashed at rest', async () => {
    const { email, seed, codes } = await userWithSecondFactor();
    const [row] = await service.db.query<{ totp_sealed: string; recovery_codes: string[] }>('SELECT totp_sealed, recovery_codes FROM users WHERE email = $1', [email]);
    expect(row!.totp_sealed).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(seed);
    for (const code of codes) expect(JSON.stringify(row)).not.toContain(code);
  });

  it('counts wrong codes apart from the password’s failures: a right password does not reset them', async () => {
    const { email, seed } = await userWithSecondFactor();
    const wrongCode = [codeNow(seed), nextCode(seed)].includes('000000') ? '111111' : '000000';
    const first = await passwordStep(email);
    // Five at once, then turns 0 and 10 s after the sixth, then 30 s after it: too far to wait for.
    for (let attempt = 0; attempt < 7; attempt++) expect((await first.post('/dashboard/login/verify', { code: wrongCode })).status).toBe(401);
    // The password again, right: the code step stays slowed, the right code included.
    const again = await passwordStep(email);
    const refused = await again.post('/dashboard/login/verify', { code: nextCode(seed) });
    expect(refused.status).toBe(429);
    expect(refused.html).toMatch(/Too many attempts\. Try again in (1\d|20) s\./);
  }, 60_000);

  it('never checks more codes than the limit, however many arrive at once', async () => {
    const { email, seed } = await userWithSecondFactor();
    const client = await passwordStep(email);
    const wrong = new Set([codeNow(seed), nextCode(seed), codeNow(seed, Date.now() - 30_000)]);
    const codes = Array.from({ length: 60 }, (_, n) => String(100_000 + n * 7919)).filter((code) => !wrong.has(code));
    const pages = await Promise.all(codes.map((code) => client.post('/dashboard/login/verify', { code })));
    // Five at once, then turns 0 and 10 s after the sixth; a turn more than 10 s away is refused.
    expect(pages.filter((page) => page.status === 401)).toHaveLength(7);
    expect(pages.filter((page) => page.status === 429)).toHaveLength(codes.length - 7);
  }, 60_000);

  it('is turned off only with the password', async () => {
    const { email, seed } = await userWithSecondFactor();
    const client = await passwordStep(email);
    expect((await client.post('/dashboard/login/verify', { code: nextCode(seed) })).location).toBe('/dashboard');
    expect((await client.post('/dashboard/account/second-factor/disable', { password: 'not the password' })).status).toBe(401);
    const off = await client.post('/dashboard/account/second-factor/disable', { password: PASSWORD });
    expect(off.html).toContain('Two-factor authentication is off.');
    await client.post('/dashboard/logout', {});
    expect((await new DashboardClient(service).post('/dashboard/login', { email, password: PASSWORD })).location).toBe('/dashboard');
  });
});
