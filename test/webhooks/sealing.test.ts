// Webhook signing secrets at rest: sealed under TOLOV_SECRETS_KEY, sealed again under a new key at the start after a
// rotation, plain ones of earlier versions sealed at start; a start without the key that sealed them refuses.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { constructEvent } from '../../packages/node/src/webhooks.js';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/types.js';
import { createService, type Service } from '../../src/service.js';
import { bindCard } from '../support/binding.js';
import { ADMIN_TOKEN, engine, openTestDb, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';
import { json, killAll, startMain } from '../support/process.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const keyA = randomBytes(32).toString('base64');
const keyB = randomBytes(32).toString('base64');
const keyIdOf = async (db: Db, id: string) => (await db.query<{ sealed: string }>('SELECT secret_sealed AS sealed FROM webhook_endpoints WHERE id = $1', [id]))[0]!.sealed.split('.')[1];

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => receiver.close());
afterEach(async () => killAll());

/** A service on `db` sealing with `env`'s keys; its `call` as the test harness's. */
async function serviceOn(db: Db, env: Record<string, string>): Promise<Service & { call: TestService['call'] }> {
  const config = loadConfig({ TOLOV_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'silent', TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true', ...env });
  const service = await createService(config, { db });
  await service.app.ready();
  const call: TestService['call'] = async ({ method, url, key, body, idempotencyKey }) => {
    const headers: Record<string, string> = {};
    if (key !== undefined || url.startsWith('/admin')) headers.authorization = `Bearer ${key ?? ADMIN_TOKEN}`;
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await service.app.inject({ method, url, headers, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });
    return { status: response.statusCode, headers: response.headers, text: response.body, body: response.body ? JSON.parse(response.body) : undefined };
  };
  return Object.assign(service, { call });
}

describe('sealed signing secrets', () => {
  it('are sealed again under a new key after a rotation, plain ones of an earlier version too, and keep signing', async () => {
    const db = await openTestDb();
    const first = await serviceOn(db, { TOLOV_SECRETS_KEY: keyA });
    const product = (await first.call({ method: 'POST', url: '/admin/v1/products', body: { name: 'Rotating', feeBps: 0 } })).body;
    const key = product.keys.test as string;
    const sealed = (await first.call({ method: 'POST', url: '/v1/webhook_endpoints', key, body: { url: `${receiver.url}/sealed` } })).body;
    // An endpoint as an earlier version stored it: its secret in plain text.
    const plainSecret = `whsec_${randomBytes(32).toString('base64')}`;
    await db.query(
      `INSERT INTO webhook_endpoints (id, product_id, livemode, url, status, secret) VALUES ('we_legacy000000000000000001', $1, false, $2, 'enabled', $3)`,
      [product.id, `${receiver.url}/legacy`, plainSecret],
    );
    const firstKeyId = await keyIdOf(db, sealed.id);
    await first.app.close();

    const second = await serviceOn(db, { TOLOV_SECRETS_KEY: keyB, TOLOV_SECRETS_KEY_PREVIOUS: keyA });
    const rows = await db.query<{ secret: string | null; key_id: string }>(`SELECT secret, split_part(secret_sealed, '.', 2) AS key_id FROM webhook_endpoints WHERE product_id = $1`, [product.id]);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.secret).toBeNull();
      expect(row.key_id).not.toBe(firstKeyId);
    }
    const card = await bindCard({ call: second.call } as TestService, key, '8600000000000007');
    await charge({ call: second.call } as TestService, key, { amount: 500, card });
    for (let round = 0; round < 10 && receiver.received.length < 2; round++) await second.webhooks.deliverDue(10);
    const byPath = new Map(receiver.received.map((request) => [request.path, request]));
    const check = (path: string, secret: string) => constructEvent(byPath.get(path)!.body, String(byPath.get(path)!.headers['tolov-signature']), secret).type;
    expect(check('/sealed', sealed.secret)).toBe('payment_intent.succeeded');
    expect(check('/legacy', plainSecret)).toBe('payment_intent.succeeded');
    await second.app.close();

    // Without the key that sealed them, the service refuses to start, naming the key it lacks, and changes nothing.
    const third = serviceOn(db, { TOLOV_SECRETS_KEY: keyA });
    await expect(third).rejects.toThrow(/sealed under key \S+, which is neither TOLOV_SECRETS_KEY nor a previous key/);
    expect(await keyIdOf(db, sealed.id)).toBe(rows[0]!.key_id);
    await db.close();
  });
});

describe.runIf(engine === 'pglite')('the embedded default key', () => {
  it('is made at the first start in a file beside the data folder, readable by its user alone, and kept', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'tolov-sealing-'));
    const dataDir = join(parent, 'data');
    try {
      const env = { TOLOV_DATA_DIR: dataDir, TOLOV_SECRETS_KEY: '', TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' };
      const started = await startMain(env);
      const keyFile = `${dataDir}.secrets-key`;
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      const key = await readFile(keyFile, 'utf8');
      expect(Buffer.from(key.trim(), 'base64')).toHaveLength(32);
      const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
      const product = await json(`${started.url}/admin/v1/products`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Embedded' }) });
      const endpoint = await json(`${started.url}/v1/webhook_endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${product.body.keys.test}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/x' }),
      });
      expect(endpoint.status).toBe(201);
      started.child.kill('SIGTERM');
      await started.exited;
      const again = await startMain(env);
      expect(await readFile(keyFile, 'utf8')).toBe(key);
      expect((await json(`${again.url}/healthz`)).status).toBe(200);
      again.child.kill('SIGTERM');
      await again.exited;
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
