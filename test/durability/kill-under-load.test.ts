import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { engine } from '../support/harness.js';
import { json, killAll, processStorage, shopWithCard, startMain, type Started } from '../support/process.js';
import { waitFor } from '../support/wait.js';
import { startReceiver } from '../support/receiver.js';

afterAll(killAll);

const CHARGES = 40;
const ORDERS = 20;
const CONCURRENCY = 8;

describe('kill -9 under concurrent charge and order load', () => {
  it('loses nothing and doubles nothing: after a restart and a retry of every key, every invariant holds', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tolov-kill-'));
    const receiver = await startReceiver();
    const env = {
      ...(engine === 'pglite' ? { TOLOV_DATA_DIR: dir } : await processStorage()),
      TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true',
      TOLOV_WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1',
      TOLOV_WEBHOOK_TIMEOUT_MS: '2000',
      TOLOV_RECONCILE_INTERVAL_MS: '200',
      TOLOV_RATE_LIMIT_KEY_PER_MINUTE: '1000000',
      LOG_LEVEL: 'warn',
    };
    try {
      let server: Started = await startMain(env);
      const post = (path: string, body: unknown, key: string, idempotencyKey?: string) =>
        json(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
          body: JSON.stringify(body),
        });
      const get = (path: string, key: string) => json(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      const { key, card } = await shopWithCard(server.url, { name: 'Kill shop', feeBps: 100 });
      await post('/v1/webhook_endpoints', { url: `${receiver.url}/hooks` }, key);

      // The load: charges (some unclear at the bank), order creations, and orders paid through their sessions.
      const jobs: Array<() => Promise<unknown>> = [];
      for (let i = 0; i < CHARGES; i++) jobs.push(() => post('/subscribe/v1/charges', { amount: 10_000 + i, card }, key, `charge-${i}`));
      for (let i = 0; i < ORDERS; i++) {
        jobs.push(async () => {
          const order = await post('/merchant/v1/orders', { amount: 20_000 + i }, key, `order-${i}`);
          if (i % 2 === 1 || order.status !== 201) return;
          const token = order.body.paymentUrl.split('/pay/')[1];
          await post(`/checkout/v1/sessions/${token}/card`, { pan: i % 4 === 0 ? '8600000000000031' : '8600000000000007', expiry: '12/30', phone: '998901234567' }, key);
          await post(`/checkout/v1/sessions/${token}/code`, { code: '111111' }, key);
        });
      }
      let started = 0;
      let killed = false;
      const worker = async () => {
        while (started < jobs.length && !killed) {
          const job = jobs[started++]!;
          await job().catch(() => undefined); // the connection dies with the process
          if (started >= jobs.length * 0.4 && !killed) {
            killed = true;
            server.child.kill('SIGKILL');
          }
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      await server.exited;

      server = await startMain(env);
      // Every client retries every key it used: one intent, one order per key. The embedded engine's process knows
      // every lock left is the killed one's and releases them at its start; on PostgreSQL a lock lapses within 10 s of
      // the last renewal by its dead holder.
      const intentByKey = new Map<string, string>();
      for (let i = 0; i < CHARGES; i++) {
        const reply = await post('/subscribe/v1/charges', { amount: 10_000 + i, card }, key, `charge-${i}`);
        expect(engine === 'pglite' ? [201] : [201, 409], reply.body.message).toContain(reply.status);
        const settled = reply.status === 201 ? reply : await waitFor(async () => {
          const again = await post('/subscribe/v1/charges', { amount: 10_000 + i, card }, key, `charge-${i}`);
          return again.status === 201 ? again : null;
        }, 15_000, `charge-${i} after its lock lapsed`);
        intentByKey.set(`charge-${i}`, settled.body.id);
      }
      for (let i = 0; i < ORDERS; i++) expect((await post('/merchant/v1/orders', { amount: 20_000 + i }, key, `order-${i}`)).status).toBe(201);

      const list = async (path: string) => (await get(`${path}${path.includes('?') ? '&' : '?'}limit=100`, key)).body.data as Array<Record<string, any>>;
      // Nothing stays PROCESSING once the reconciler has looked.
      const intents = await waitFor(async () => {
        const all = await list('/subscribe/v1/charges');
        return all.some((intent) => intent.status === 'PROCESSING') ? null : all;
      }, 60_000, 'reconciliation');
      const chargeIntents = intents.filter((intent) => intent.order === null);
      expect(chargeIntents).toHaveLength(CHARGES);
      expect(new Set(intentByKey.values()).size).toBe(CHARGES);
      expect(chargeIntents.map((intent) => intent.id).sort()).toEqual([...intentByKey.values()].sort());
      expect((await list('/merchant/v1/orders')).length).toBe(ORDERS);

      // The balance is the succeeded amounts less their fees.
      const net = intents.filter((intent) => intent.status === 'SUCCEEDED').reduce((sum, intent) => sum + intent.amount - intent.fee, 0);
      const balance = (await get('/v1/balance', key)).body;
      expect(balance.available + balance.pending).toBe(net);

      // Exactly one event per final state, and every event reaches the endpoint.
      const events = await list('/v1/events');
      const perObject = new Map<string, string[]>();
      for (const event of events) perObject.set(`${event.type}:${event.data.id}`, [...(perObject.get(`${event.type}:${event.data.id}`) ?? []), event.id]);
      expect([...perObject.entries()].filter(([, ids]) => ids.length !== 1)).toEqual([]);
      for (const intent of intents) {
        const type = intent.status === 'SUCCEEDED' ? 'payment_intent.succeeded' : 'payment_intent.failed';
        expect(perObject.has(`${type}:${intent.id}`), `event of ${intent.id}`).toBe(true);
      }
      const orders = await list('/merchant/v1/orders');
      for (const order of orders.filter((o) => o.status === 'PAID')) expect(perObject.has(`order.paid:${order.id}`), `order.paid of ${order.id}`).toBe(true);
      await waitFor(async () => {
        const delivered = new Set(receiver.received.map((request) => request.headers['tolov-event-id']));
        return events.every((event) => delivered.has(event.id)) ? true : null;
      }, 60_000, 'webhook deliveries');

      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    } finally {
      await receiver.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
