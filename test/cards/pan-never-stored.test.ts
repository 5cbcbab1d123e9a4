import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/db.js';
import { ADMIN_TOKEN, engine } from '../support/harness.js';
import { json, killAll, processStorage, startMain } from '../support/process.js';
import { startReceiver } from '../support/receiver.js';

afterAll(killAll);

const PHONE = '998907654321';
// The first and third also pay an order each (accepted; declined for insufficient funds).
const PANS = [
  '8600000000000007', '9860000000000000', '8600000000000015', '8600000000000023', '8600000000000031',
  '8600000000000049', '8600000000000056', '8600000000000064', '8600123456789012',
  // Refused before any rail sees them: a mistyped check digit, an unknown network.
  '8600000000000008', '4111111111111111',
];

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

describe('the card number and phone never touch disk or logs', () => {
  it('after binding every test card, neither the data folder (or database), the logs, any answer nor any webhook contains them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tolov-pan-'));
    const receiver = await startReceiver();
    try {
      const storage = engine === 'pglite' ? { TOLOV_DATA_DIR: dir } : await processStorage();
      const started = await startMain({ ...storage, LOG_LEVEL: 'trace', TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
      const answers: string[] = [];
      const post = async (path: string, body: unknown, key?: string, idempotencyKey?: string) => {
        const reply = await json(`${started.url}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(key ? { authorization: `Bearer ${key}` } : {}),
            ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
          },
          body: JSON.stringify(body),
        });
        answers.push(JSON.stringify(reply.body));
        return reply;
      };
      const product = await json(`${started.url}/admin/v1/products`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Disk check' }),
      });
      const key = product.body.keys.test as string;
      await post('/v1/webhook_endpoints', { url: `${receiver.url}/hooks` }, key);
      const outcomes: number[] = [];
      for (const pan of PANS) {
        const binding = await post('/subscribe/v1/card_bindings', { customerRef: 'disk' }, key);
        const token = binding.body.clientToken as string;
        const card = await post(`/checkout/v1/sessions/${token}/card`, { pan, expiry: '12/30', phone: PHONE });
        outcomes.push(card.status);
        if (card.status === 200) {
          await post(`/checkout/v1/sessions/${token}/code`, { code: '000000' });
          await post(`/checkout/v1/sessions/${token}/code`, { code: '111111' });
        }
      }
      expect(outcomes.filter((status) => status === 200)).toHaveLength(8);
      // Two orders paid on the hosted page, one card accepted and one declined: their webhooks carry the payment.
      for (const pan of ['8600000000000007', '8600000000000015']) {
        const order = await post('/merchant/v1/orders', { amount: 150_000 }, key, `order-${pan.slice(-2)}`);
        expect(order.status, JSON.stringify(order.body)).toBe(201);
        const token = (order.body.paymentUrl as string).split('/pay/')[1];
        await post(`/checkout/v1/sessions/${token}/card`, { pan, expiry: '12/30', phone: PHONE });
        await post(`/checkout/v1/sessions/${token}/code`, { code: '111111' });
      }
      const types = () => receiver.received.map((request) => JSON.parse(request.body).type as string);
      for (let waited = 0; !(types().includes('order.paid') && types().includes('order.failed')) && waited < 15_000; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(types()).toEqual(expect.arrayContaining(['order.paid', 'order.failed']));
      started.child.kill('SIGTERM');
      expect(await started.exited).toBe(0);

      const secrets = [...PANS, PHONE];
      const logs = started.output();
      expect(logs.length).toBeGreaterThan(1_000);
      for (const secret of secrets) expect(logs, `logs contain ${secret}`).not.toContain(secret);
      // Refusals included: a mistyped check digit and an unknown network are answered without echoing the number.
      expect(answers.filter((answer) => answer.includes('"code"')).length).toBeGreaterThanOrEqual(2);
      const delivered = receiver.received.map((request) => `${JSON.stringify(request.headers)}\n${request.body}`);
      for (const secret of secrets) {
        for (const answer of answers) expect(answer, `an answer contains ${secret}`).not.toContain(secret);
        for (const webhook of delivered) expect(webhook, `a webhook contains ${secret}`).not.toContain(secret);
      }

      if (engine === 'pglite') {
        const files = await filesUnder(dir);
        expect(files.length).toBeGreaterThan(100);
        for (const file of files) {
          const content = await readFile(file);
          for (const secret of secrets) {
            expect(content.includes(Buffer.from(secret)), `${file} contains ${secret}`).toBe(false);
          }
        }
      } else {
        const db = await openPostgres(storage.DATABASE_URL!);
        try {
          const tables = await db.query<{ table_name: string }>(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
          );
          for (const { table_name } of tables) {
            const dump = (await db.query<{ row: string }>(`SELECT t::text AS row FROM ${table_name} t`)).map((r) => r.row).join('\n');
            for (const secret of secrets) expect(dump, `${table_name} contains ${secret}`).not.toContain(secret);
          }
        } finally {
          await db.close();
        }
      }
    } finally {
      await receiver.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
