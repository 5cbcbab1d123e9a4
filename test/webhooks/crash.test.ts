import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, engine } from '../support/harness.js';
import { json, killAll, processStorage, startMain } from '../support/process.js';
import { startReceiver } from '../support/receiver.js';

afterAll(killAll);

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('webhook deliveries across a kill -9', () => {
  it('are not lost: after a restart on the same data every event reaches the endpoint', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tolov-crash-'));
    const receiver = await startReceiver();
    receiver.behaviour = 'fail';
    const env = {
      ...(engine === 'pglite' ? { TOLOV_DATA_DIR: dir } : await processStorage()),
      TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true',
      TOLOV_WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1,1',
      // An attempt in flight when the process dies is taken up again when its lease ends: timeout + 5 s.
      TOLOV_WEBHOOK_TIMEOUT_MS: '2000',
      LOG_LEVEL: 'warn',
    };
    try {
      const first = await startMain(env);
      const call = (path: string, body: unknown, key?: string, idempotencyKey?: string) =>
        json(`${first.url}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${key ?? ADMIN_TOKEN}`,
            ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
          },
          body: JSON.stringify(body),
        });
      const product = await call('/admin/v1/products', { name: 'Crash shop' });
      const key = product.body.keys.test as string;
      await call('/v1/webhook_endpoints', { url: `${receiver.url}/hooks` }, key);
      const binding = await call('/subscribe/v1/card_bindings', {}, key);
      await call(`/checkout/v1/sessions/${binding.body.clientToken}/card`, { pan: '8600000000000007', expiry: '12/30', phone: '998901234567' });
      await call(`/checkout/v1/sessions/${binding.body.clientToken}/code`, { code: '111111' });
      const card = (await json(`${first.url}/subscribe/v1/card_bindings/${binding.body.id}`, { headers: { authorization: `Bearer ${key}` } })).body.card;
      const intents: string[] = [];
      for (let i = 0; i < 5; i++) intents.push((await call('/subscribe/v1/charges', { amount: 1_000 + i, card }, key, `crash-${i}`)).body.id);

      // Every delivery has failed at least once and is waiting for its retry when the process dies.
      await waitFor(() => new Set(receiver.received.map((r) => r.headers['tolov-event-id'])).size === 5, 15_000, 'first attempts');
      first.child.kill('SIGKILL');
      await first.exited;

      receiver.behaviour = 'ok';
      const attemptsBefore = receiver.received.length;
      const second = await startMain(env);
      const delivered = () =>
        new Set(receiver.received.slice(attemptsBefore).map((request) => JSON.parse(request.body).data.id as string));
      await waitFor(() => intents.every((id) => delivered().has(id)), 30_000, 'deliveries after the restart');
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      expect([...delivered()].sort()).toEqual([...intents].sort());
    } finally {
      await receiver.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
