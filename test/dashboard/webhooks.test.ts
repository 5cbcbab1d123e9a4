// Webhook endpoints and API keys in the dashboard: one account never reaches another's, secrets are sealed at rest and
// shown only to who proves they are the user, rolled keys stop after their overlap, a failing endpoint is flagged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { PASSWORD_ACCOUNT } from '../../src/modules/accounts/policies.js';
import { TEST_EVENTS_PER_MINUTE } from '../../src/modules/webhooks/service.js';
import { startService, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';
import { DashboardClient, uniqueEmail } from './client.js';

let service: TestService;
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
});
afterAll(async () => service.stop());

const PASSWORD = 'correct horse battery';
const secretIn = (html: string) => /<code id="secret">(whsec_[^<]+)<\/code>/.exec(html)?.[1];
const keyIn = (html: string) => /<code id="new-key">(sk_(?:test|live)_[0-9A-Za-z]+)<\/code>/.exec(html)?.[1];

async function owner() {
  const client = new DashboardClient(service);
  await client.signUp(uniqueEmail());
  return client;
}

async function addEndpoint(client: DashboardClient, url = 'http://127.0.0.1:9/hooks') {
  const added = await client.post('/dashboard/webhooks', { url, events: ['payment_intent.succeeded', 'order.paid'] });
  expect(added.status).toBe(201);
  return { id: /\/dashboard\/webhooks\/(we_[0-9A-Za-z]+)\/test/.exec(added.html)![1]!, secret: secretIn(added.html)! };
}

describe('accounts are isolated', () => {
  it('every dashboard URL of another account’s endpoint, delivery or key is a 404, and changes nothing', async () => {
    const a = await owner();
    const b = await owner();
    const { id } = await addEndpoint(a);
    await a.post(`/dashboard/webhooks/${id}/test`, {});
    const [delivery] = await service.db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE endpoint_id = $1', [id]);
    const key = keyIn((await a.post('/dashboard/api-keys', {})).html)!;
    const keyId = (await service.db.query<{ id: string }>('SELECT id FROM api_keys ORDER BY created_at DESC LIMIT 1'))[0]!.id;

    expect((await b.get(`/dashboard/webhooks/${id}`)).status).toBe(404);
    const posts: Array<[string, Record<string, string>]> = [
      [`/dashboard/webhooks/${id}/reveal`, { password: PASSWORD }],
      [`/dashboard/webhooks/${id}/roll`, { overlapSeconds: '0' }],
      [`/dashboard/webhooks/${id}/disable`, {}],
      [`/dashboard/webhooks/${id}/enable`, {}],
      [`/dashboard/webhooks/${id}/test`, {}],
      [`/dashboard/webhooks/${id}/delete`, {}],
      [`/dashboard/webhooks/${id}/deliveries/${delivery!.id}/retry`, {}],
      [`/dashboard/api-keys/${keyId}/roll`, { overlapSeconds: '0' }],
      [`/dashboard/api-keys/${keyId}/revoke`, {}],
    ];
    for (const [url, fields] of posts) {
      const page = await b.post(url, fields);
      expect(page.status, url).toBe(404);
      expect(page.html).not.toContain('whsec_');
    }
    expect((await b.get('/dashboard/webhooks')).html).not.toContain(id);
    expect((await service.call({ method: 'GET', url: '/v1/balance', key })).status).toBe(200);
    expect((await service.db.query<{ status: string }>('SELECT status FROM webhook_endpoints WHERE id = $1', [id]))[0]!.status).toBe('enabled');
    expect((await service.db.query('SELECT 1 FROM events WHERE object_id = $1', [id])).length).toBe(1);
  });

  it('a page whose address names what an object inherits (?done=constructor) shows no notice and does not fail', async () => {
    const client = await owner();
    const { id } = await addEndpoint(client);
    const pages = ['/dashboard/webhooks', `/dashboard/webhooks/${id}`, '/dashboard/api-keys', '/dashboard/team'];
    const queries = ['done=constructor', 'done=toString', 'done=__proto__', 'done=hasOwnProperty', 'refused=constructor', 'refused=__proto__'];
    for (const path of pages) {
      for (const query of queries) {
        const page = await client.get(`${path}?${query}`);
        expect(page.status, `${path}?${query}`).toBe(200);
        expect(page.html, `${path}?${query}`).not.toMatch(/class="notice/);
      }
    }
    expect((await client.get('/dashboard/api-keys?done=revoked')).html).toContain('The key is revoked');
  });

  it('an unknown dashboard URL is a 404 page', async () => {
    const page = await (await owner()).get('/dashboard/no-such-page');
    expect(page.status).toBe(404);
    expect(page.html).toContain('Not found');
  });
});

describe('signing secrets', () => {
  it('are sealed at rest: neither the endpoints nor the stored answers hold them, and the API and the dashboard agree', async () => {
    const client = await owner();
    const { id, secret } = await addEndpoint(client);
    expect(secret).toMatch(/^whsec_/);
    // One made over the API with an Idempotency-Key: its stored answer is sealed too, and replays the secret.
    const key = keyIn((await client.post('/dashboard/api-keys', {})).html)!;
    const body = { url: 'http://127.0.0.1:9/api' };
    const made = await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key, body, idempotencyKey: 'endpoint-1' });
    const replayed = await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key, body, idempotencyKey: 'endpoint-1' });
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.text).toBe(made.text);
    expect(made.body.secret).toMatch(/^whsec_/);

    const dump = JSON.stringify(
      await service.db.query(
        `SELECT (SELECT json_agg(w) FROM webhook_endpoints w) AS endpoints, (SELECT json_agg(k) FROM idempotency_keys k) AS stored`,
      ),
    );
    expect(dump).toContain('v1.');
    expect(dump).not.toContain('whsec_');
    const revealed = await client.post(`/dashboard/webhooks/${id}/reveal`, { password: PASSWORD });
    expect(revealed.status).toBe(200);
    expect(secretIn(revealed.html)).toBe(secret);
  });

  it('are revealed only after the password, with failures counted against the account', async () => {
    const client = await owner();
    const { id, secret } = await addEndpoint(client);
    const wrong = await client.post(`/dashboard/webhooks/${id}/reveal`, { password: 'not my password' });
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain('That password is not yours');
    expect(wrong.html).not.toContain(secret);
    // Counted against the account as a failed log-in is (its throttle is keyed by the e-mail's hash).
    const [failures] = await service.db.query<{ hits: number }>(
      `SELECT t.hits FROM throttles t, users u JOIN dashboard_sessions s ON s.user_id = u.id
        WHERE s.token_hash = sha256($1::bytea) AND t.key = $2 || ':' || encode(sha256(convert_to(u.email, 'UTF8')), 'hex')`,
      [Buffer.from(client.cookies.get('tolov_session')!), PASSWORD_ACCOUNT.name],
    );
    expect(failures!.hits).toBe(1);
    expect((await client.get('/dashboard/team/audit')).html).toContain('webhook_endpoint.secret_reveal_refused');
  });

  it('never checks more passwords than the account’s turns allow, however many reveals arrive at once; each refusal is audited', async () => {
    const client = await owner();
    const { id, secret } = await addEndpoint(client);
    const csrf = await client.csrf();
    const pages = await Promise.all(Array.from({ length: 40 }, (_, n) => client.post(`/dashboard/webhooks/${id}/reveal`, { password: `guess number ${n}` }, { csrf })));
    // As at log-in: ten checks at once, then turns 0 and 10 s after the eleventh; the rest are refused without a check.
    const checked = pages.filter((page) => page.status === 401).length;
    expect(checked).toBe(12);
    expect(pages.filter((page) => page.status === 429)).toHaveLength(40 - checked);
    for (const page of pages) expect(page.html).not.toContain(secret);
    const audit = (await client.get('/dashboard/team/audit')).html;
    expect(audit.match(/webhook_endpoint\.secret_reveal_refused/g)).toHaveLength(checked);
  }, 60_000);

  it('roll with the password and an overlap: deliveries carry both signatures until it ends', async () => {
    const client = await owner();
    const { id, secret } = await addEndpoint(client);
    // The password first, as for a reveal: a wrong one rolls nothing, shows nothing, and is audited.
    for (const password of [undefined, 'not my password at all']) {
      const refused = await client.post(`/dashboard/webhooks/${id}/roll`, { overlapSeconds: '3600', ...(password ? { password } : {}) });
      expect(refused.status).toBe(401);
      expect(refused.html).toContain('That password is not yours: the secret is not rolled.');
      expect(secretIn(refused.html)).toBeUndefined();
    }
    expect(secretIn((await client.post(`/dashboard/webhooks/${id}/reveal`, { password: PASSWORD })).html)).toBe(secret);
    expect((await client.get('/dashboard/team/audit')).html.match(/webhook_endpoint\.secret_roll_refused/g)).toHaveLength(2);
    const rolled = await client.post(`/dashboard/webhooks/${id}/roll`, { overlapSeconds: '3600', password: PASSWORD });
    const next = secretIn(rolled.html)!;
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(secret);
    const [row] = await service.db.query<{ until: boolean }>(
      `SELECT previous_secret_until BETWEEN now() + interval '59 minutes' AND now() + interval '61 minutes' AS until FROM webhook_endpoints WHERE id = $1`,
      [id],
    );
    expect(row!.until).toBe(true);
    expect(secretIn((await client.post(`/dashboard/webhooks/${id}/reveal`, { password: PASSWORD })).html)).toBe(next);
  });
});

describe('test events', () => {
  it(`are limited to ${TEST_EVENTS_PER_MINUTE} a minute per account, the next one refused with a 429 page that says when to retry`, async () => {
    const client = await owner();
    const { id } = await addEndpoint(client);
    for (let n = 0; n < TEST_EVENTS_PER_MINUTE; n++) expect((await client.post(`/dashboard/webhooks/${id}/test`, {})).location).toBe(`/dashboard/webhooks/${id}?done=test`);
    const refused = await client.post(`/dashboard/webhooks/${id}/test`, {});
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.html).toMatch(new RegExp(`At most ${TEST_EVENTS_PER_MINUTE} test events a minute: send the next one in \\d+ s`));
    expect(refused.html).toContain('Delivery log');
    const [sent] = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1', [id]);
    expect(sent!.n).toBe(TEST_EVENTS_PER_MINUTE);
    // Another account's test events are not held back.
    const other = await owner();
    const theirs = await addEndpoint(other);
    expect((await other.post(`/dashboard/webhooks/${theirs.id}/test`, {})).status).toBe(303);
  });
});

describe('API keys', () => {
  it('a rolled key keeps working for its overlap, then answers 401; the new one works', async () => {
    const client = await owner();
    const old = keyIn((await client.post('/dashboard/api-keys', {})).html)!;
    const oldId = (await service.db.query<{ id: string }>('SELECT id FROM api_keys ORDER BY created_at DESC LIMIT 1'))[0]!.id;
    const rolled = await client.post(`/dashboard/api-keys/${oldId}/roll`, { overlapSeconds: '3600' });
    expect(rolled.status).toBe(201);
    const fresh = keyIn(rolled.html)!;
    expect(fresh).not.toBe(old);
    expect(rolled.html).toMatch(/Rolled: works until \d{4}-\d\d-\d\d/);
    const balance = (key: string) => service.call({ method: 'GET', url: '/v1/balance', key });
    expect((await balance(old)).status).toBe(200);
    expect((await balance(fresh)).status).toBe(200);
    // The hour passes: moved back in the database, with the notification any change of a key sends, so that the
    // service reads it again (a cached key carries its expiry and stops on time by itself).
    await service.db.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [oldId]);
    await service.db.query(`SELECT pg_notify('tolov_api_keys', $1)`, [oldId]);
    const expired = await (async () => {
      for (let attempt = 0; attempt < 40; attempt++) {
        const reply = await balance(old);
        if (reply.status === 401) return reply;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return balance(old);
    })();
    expect(expired.status).toBe(401);
    expect(expired.body.message).toContain('Expired API key');
    expect((await balance(fresh)).status).toBe(200);
  });

  it('a key rolled with no overlap stops at once; a revoked key answers 401', async () => {
    const client = await owner();
    const old = keyIn((await client.post('/dashboard/api-keys', {})).html)!;
    const oldId = (await service.db.query<{ id: string }>('SELECT id FROM api_keys ORDER BY created_at DESC LIMIT 1'))[0]!.id;
    expect((await service.call({ method: 'GET', url: '/v1/balance', key: old })).status).toBe(200);
    const fresh = keyIn((await client.post(`/dashboard/api-keys/${oldId}/roll`, { overlapSeconds: '0' })).html)!;
    expect((await service.call({ method: 'GET', url: '/v1/balance', key: old })).status).toBe(401);
    const freshId = (await service.db.query<{ id: string }>('SELECT id FROM api_keys ORDER BY created_at DESC LIMIT 1'))[0]!.id;
    const revoked = await client.post(`/dashboard/api-keys/${freshId}/revoke`, {});
    expect(revoked.location).toBe('/dashboard/api-keys?done=revoked');
    expect((await service.call({ method: 'GET', url: '/v1/balance', key: fresh })).status).toBe(401);
    expect((await client.get('/dashboard/api-keys?done=revoked')).html).toContain('The key is revoked');
  });
});

describe('the delivery log', () => {
  it('shows a charge’s delivery with each attempt, and flags an endpoint failing for a day', async () => {
    const client = await owner();
    const { id } = await addEndpoint(client, 'http://127.0.0.1:9/closed');
    const key = keyIn((await client.post('/dashboard/api-keys', {})).html)!;
    const card = await bindCard(service, key, '8600000000000007');
    await charge(service, key, { amount: 1_000, card });
    // A batch with room for what other tests left due too (their test events).
    await service.webhooks.deliverDue(100);
    const page = await client.get(`/dashboard/webhooks/${id}`);
    expect(page.html).toContain('payment_intent.succeeded');
    expect(page.html).toContain('connection refused');
    expect(page.html).toMatch(/Pending<\/span>[\s\S]*next attempt \d{4}-/);
    expect(page.html).toContain('Retry now');
    expect(page.html).not.toContain('This endpoint has been failing');

    await service.db.query(
      `UPDATE webhook_attempts SET attempted_at = attempted_at - interval '25 hours' WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id = $1)`,
      [id],
    );
    const flagged = await client.get(`/dashboard/webhooks/${id}`);
    expect(flagged.html).toMatch(/This endpoint has been failing since \d{4}-\d\d-\d\d [\d:]+ UTC: 1 deliveries are waiting/);
  });
});
