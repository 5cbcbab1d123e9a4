// Tokens in a path never reach the logs, however the path is written; answers refused before a route echo nothing.
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { killAll, processStorage, startMain } from '../support/process.js';

afterAll(killAll);

/** Sends raw bytes as one HTTP exchange and answers what came back. */
function raw(url: string, text: string): Promise<string> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(text));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => resolve(answer));
  });
}

describe('requests with a token in an unusual path, and requests refused before a route', () => {
  it('log no token, and answer in the error shape with a Request-Id, echoing nothing', async () => {
    const started = await startMain({ ...(await processStorage()), LOG_LEVEL: 'info' });
    const token = `cs_${'Q'.repeat(40)}`;
    const paths = [`//pay//${token}`, `/pay///${token}?lang=en`, `/checkout/v1/sessions//${token}`, `/x/${token}/y`];
    for (const path of paths) await fetch(`${started.url}${path}`);
    const answers = [
      await raw(started.url, `GET /merchant/v1/orders/${'A'.repeat(200)}${token} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
      await raw(started.url, `GET /v1/%E0%A4%A/${token} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
      await raw(started.url, `GET /v1/balance HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      await raw(started.url, `GET /${token} HTTP/1.1\r\nHost x\r\n\r\n`),
    ];
    started.child.kill('SIGTERM');
    await started.exited;
    expect(started.output()).toContain('[token]');
    expect(started.output()).not.toContain(token);
    expect(answers.map((answer) => /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1])).toEqual(['414', '400', '431', '400']);
    for (const answer of answers) {
      expect(answer).toMatch(/\r\nrequest-id: req_[0-9A-Za-z]+\r\n/i);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      expect(Object.keys(body).sort()).toEqual(expect.arrayContaining(['code', 'error', 'message', 'requestId', 'statusCode']));
      expect(answer).not.toContain(token);
      expect(answer).not.toContain('AAAA');
    }
  });
});

describe('card numbers in a path or an Idempotency-Key', () => {
  it('never reach the log: each run of 13 or more digits is masked to its first six and last four', async () => {
    const started = await startMain({ ...(await processStorage()), LOG_LEVEL: 'info' });
    const paths = ['/merchant/v1/orders/8600000000000007', '/v1/cards/8600-0000-0000-0015/x', '/x/9860%201234%205678%209015', '//pay/x/8600000000000007?pan=9860123456789015'];
    for (const path of paths) await fetch(`${started.url}${path}`, { headers: { 'idempotency-key': 'key 8600 0000 0000 0007' } });
    started.child.kill('SIGTERM');
    await started.exited;
    expect(started.output()).toContain('/merchant/v1/orders/860000******0007');
    expect(started.output()).toContain('/v1/cards/860000******0015/x');
    expect(started.output()).toContain('/x/986012******9015');
    for (const digits of ['8600000000000007', '0000-0000-0015', '1234%205678', '9860123456789015', '0000 0000 0007']) expect(started.output()).not.toContain(digits);
  });
});

describe('the dashboard', () => {
  it('logs no password, session cookie or invitation token; without TOLOV_SMTP_URL its mail is written to the log', async () => {
    const started = await startMain({ ...(await processStorage()), LOG_LEVEL: 'trace' });
    const form = await fetch(`${started.url}/dashboard/signup`);
    const formCookie = form.headers.getSetCookie()[0]!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const post = (path: string, fields: Record<string, string>) =>
      fetch(`${started.url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: formCookie, 'content-type': 'application/x-www-form-urlencoded', origin: started.url },
        body: new URLSearchParams({ ...fields, _csrf: csrf }).toString(),
      });
    const password = 'a very particular passphrase';
    expect((await post('/dashboard/signup', { email: 'logs@example.uz', businessName: 'Logs' })).status).toBe(200);
    // The development server's mail, with its link, is in the log for the person running it.
    await expect.poll(() => /mail written here, not sent/.test(started.output())).toBe(true);
    const confirm = /\/dashboard\/signup\/confirm\/[A-Za-z0-9_-]{43}/.exec(started.output())![0];
    const signed = await post(confirm, { password });
    expect(signed.status).toBe(201);
    // The account's first test key, shown on the page once, is no more in the log than any other secret.
    const testKey = /sk_test_[0-9A-Za-z]{32}/.exec(await signed.text())![0];
    const session = signed.headers.getSetCookie().find((cookie) => cookie.startsWith('tolov_session='))!.split(';')[0]!.split('=')[1]!;
    await fetch(`${started.url}/dashboard/payments`, { headers: { cookie: `tolov_session=${session}` } });
    const invitation = 'I'.repeat(43);
    await fetch(`${started.url}/dashboard/invite/${invitation}`);
    started.child.kill('SIGTERM');
    await started.exited;
    expect(started.output()).toContain('/dashboard/invite/[token]');
    expect(started.output()).toContain('/dashboard/signup/confirm/[token]');
    for (const secret of [password, session, csrf, invitation, testKey]) expect(started.output()).not.toContain(secret);
  });
});
