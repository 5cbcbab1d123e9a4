// A bank slower than Tolov's patience, and Tolov killed (-9) while its debits and a refund sleep at the bank: after a
// restart, reconciliation fences what the bank has not executed, and Tolov's books and the bank's agree on every
// operation, whichever of the bank's clock, its fence or Tolov's retries came first.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SIM_PHONE } from '../../bank-sim/bank.js';
import { startBankSim } from '../../bank-sim/sim.js';
import { ADMIN_TOKEN } from '../support/harness.js';
import { setFaults, SIM_SECRET } from '../support/live.js';
import { apiCaller, json, killAll, restartedAgainst, startMain, type Started } from '../support/process.js';
import { waitFor } from '../support/wait.js';

afterAll(killAll);

const BANK_MONEY_LATENCY_MS = 3_000;

describe('kill -9 of Tolov while the bank is slow', () => {
  it('leaves no operation that the bank executed and Tolov failed, nor the reverse', async () => {
    const simDir = await mkdtemp(join(tmpdir(), 'tolov-fence-bank-'));
    const sim = await startBankSim({ dataDir: simDir, secret: SIM_SECRET, port: 0, log: false });
    const env = await restartedAgainst(sim, SIM_SECRET);
    let server: Started = await startMain(env);
    try {
      const call = apiCaller(() => server);
      // A merchant that fiscalizes its sales itself: this test is about money (live receipts: test/receipts/live-*.test.ts).
      const product = await call('POST', '/admin/v1/products', ADMIN_TOKEN, { name: 'Slow bank shop', receiptRequired: false });
      const key = product.body.keys.live as string;
      const binding = await call('POST', '/subscribe/v1/card_bindings', key, {}, 'bind');
      await call('POST', `/checkout/v1/sessions/${binding.body.clientToken}/card`, key, { pan: '8600000000000007', expiry: '12/30', phone: SIM_PHONE });
      const sms = (await json(`${sim.url}/sim/v1/sms?phone=${SIM_PHONE}`)).body.code as string;
      await call('POST', `/checkout/v1/sessions/${binding.body.clientToken}/code`, key, { code: sms });
      const card = (await call('GET', `/subscribe/v1/card_bindings/${binding.body.id}`, key)).body.card as string;
      const paid = await call('POST', '/subscribe/v1/charges', key, { amount: 90_000, card }, 'paid');
      expect(paid.body.status).toBe('SUCCEEDED');

      // The bank now sleeps in every money call; Tolov is killed while its calls sleep there.
      await setFaults(sim, { moneyLatencyMs: BANK_MONEY_LATENCY_MS });
      const requests = [
        ...[1, 2, 3].map((n) => ({ path: '/subscribe/v1/charges', body: { amount: 10_000 * n, card }, idempotencyKey: `slow-${n}` })),
        { path: '/v1/refunds', body: { paymentIntent: paid.body.id }, idempotencyKey: 'slow-refund' },
      ];
      const inFlight = requests.map((request) => call('POST', request.path, key, request.body, request.idempotencyKey).catch(() => null));
      await new Promise((resolve) => setTimeout(resolve, 400));
      server.child.kill('SIGKILL');
      await server.exited;
      await Promise.all(inFlight);

      server = await startMain(env);
      // Each client retries its key until it is answered: the same payment or refund, whatever its state, and the
      // bank is not called again. Reconciliation settles each.
      const ids = await Promise.all(
        requests.map((request) =>
          waitFor(async () => {
            const reply = await call('POST', request.path, key, request.body, request.idempotencyKey);
            return reply.status === 201 ? (reply.body.id as string) : null;
          }, 30_000, `${request.idempotencyKey} answered`),
        ),
      );
      const readOf = (id: string) => call('GET', id.startsWith('re_') ? `/v1/refunds/${id}` : `/subscribe/v1/charges/${id}`, key);
      const finals = await waitFor(async () => {
        const statuses = await Promise.all(ids.map(async (id) => (await readOf(id)).body.status as string));
        return statuses.some((status) => status === 'PROCESSING' || status === 'PENDING') ? null : statuses;
      }, 30_000, 'every operation settled');
      // Every call sleeping at the bank has woken by now, and found its deadline passed or its fence.
      await new Promise((resolve) => setTimeout(resolve, BANK_MONEY_LATENCY_MS + 500));
      const bank = await sim.db.query<{ operation_id: string; status: string }>('SELECT operation_id, status FROM sim_operations WHERE operation_id = ANY($1)', [ids]);
      const atBank = new Map(bank.map((row) => [row.operation_id, row.status]));
      expect(ids.map((id, index) => [id, finals[index], atBank.get(id) ?? 'never executed'])).toEqual(
        ids.map((id, index) => [id, finals[index], finals[index] === 'SUCCEEDED' ? 'SUCCEEDED' : 'never executed']),
      );
      const report = await json(`${server.url}/admin/v1/reconciliation?date=${new Date().toISOString().slice(0, 10)}`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(report.body.mismatches).toEqual([]);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    } finally {
      await sim.close();
      await rm(simDir, { recursive: true, force: true });
    }
  }, 90_000);
});
