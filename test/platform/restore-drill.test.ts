// `npm run restore-drill` against a real PostgreSQL: a database with payments, a refund and a payout is dumped while
// charges run, restored into a scratch database and checked; a copy whose books are wrong fails the drill; the scratch
// database is always dropped; without PostgreSQL the drill says why it cannot run.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { engine, idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { chargeCard } from '../support/payments.js';
import { makeAvailable, setPayoutAccount } from '../support/payouts.js';

let service: TestService;
let shop: Merchant;
let url = '';

/** Runs the drill as an operator does, on `databaseUrl`: its exit code, its report (stdout) and what it says (stderr). */
async function drill(databaseUrl: string | null): Promise<{ code: number | null; report: Record<string, any> | null; said: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/restore-drill.ts'], {
    env: { PATH: process.env.PATH, TOLOV_DATA_DIR: 'memory://', ...(databaseUrl === null ? {} : { DATABASE_URL: databaseUrl }) },
    // A drill that hangs is killed after 100 s, and fails its test on its exit code if the test's own timeout has not.
    timeout: 100_000,
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (err += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, report: out === '' ? null : JSON.parse(out), said: err };
}

const scratchDatabases = async () =>
  (await service.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_database WHERE datname LIKE 'tolov_restore_drill_%'`))[0]!.n;

describe.runIf(engine === 'postgres')('the restore drill', () => {
  beforeAll(async () => {
    service = await startService();
    const [{ name }] = (await service.db.query<{ name: string }>('SELECT current_database() AS name')) as [{ name: string }];
    const server = new URL(inject('postgresUrl'));
    server.pathname = `/${name}`;
    url = server.toString();
    shop = await service.createMerchant();
    await setPayoutAccount(service, shop.productId);
    await makeAvailable(service, shop.test, 3_000_000);
    const refunded = await chargeCard(service, shop.test, '8600000000000007', 250_000);
    await service.call({ method: 'POST', url: '/v1/refunds', key: shop.test, idempotencyKey: idem(), body: { paymentIntent: refunded.id } });
    const payout = await service.call({ method: 'POST', url: '/v1/payouts', key: shop.test, idempotencyKey: idem(), body: { amount: 1_000_000 } });
    expect(payout.status).toBe(201);
  }, 60_000);
  afterAll(() => service?.stop());

  it('restores a copy, taken under load, whose books are right and hold every money row, then drops it', async () => {
    const count = async (table: string) => (await service.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;
    // Charges run all through the dump: the copy is one consistent moment of a database being written.
    const intentsBefore = await count('payment_intents');
    let loading = true;
    const load = (async () => {
      // Bounded, so that a drill that never ends cannot grow the database without end.
      for (let n = 0; loading && n < 2_000; n++) await chargeCard(service, shop.test, '8600000000000007', 10_000);
    })();
    const { code, report, said } = await drill(url);
    loading = false;
    await load;
    expect(said).toBe('');
    expect(code).toBe(0);
    expect(report!.counts.payment_intents).toBeGreaterThan(intentsBefore);
    expect(report!.counts.payment_intents).toBeLessThanOrEqual(await count('payment_intents'));
    expect(report).toMatchObject({ object: 'restore_drill', ok: true });
    expect(report!.schemaVersion).toBe(report!.migrationsKnown);
    expect(report!.checks.map((check: { name: string; ok: boolean }) => [check.name, check.ok])).toEqual([
      ['ledger_total_zero', true],
      ['ledger_transactions_balanced', true],
      ['balances', true],
    ]);
    for (const table of ['refunds', 'payouts']) expect(report!.counts[table], table).toBe(await count(table));
    for (const table of ['ledger_entries', 'balance_transactions']) expect(report!.counts[table], table).toBeLessThanOrEqual(await count(table));
    expect(report!.counts.payouts).toBe(1);
    expect(report!.dumpBytes).toBeGreaterThan(0);
    expect(await scratchDatabases()).toBe(0);
  }, 120_000);

  it('fails when the copy’s books are wrong, and still drops it', async () => {
    // A statement row lost: the balance no longer equals its statement, in the database and so in any copy of it.
    await service.db.query(`DELETE FROM balance_transactions WHERE id = (SELECT id FROM balance_transactions WHERE type = 'refund' LIMIT 1)`);
    const { code, report } = await drill(url);
    expect(code).toBe(1);
    expect(report!.ok).toBe(false);
    expect(report!.checks.find((check: { name: string }) => check.name === 'balances').ok).toBe(false);
    expect(await scratchDatabases()).toBe(0);
  }, 120_000);

  it('says why it cannot run without PostgreSQL, or without the database', async () => {
    const none = await drill(null);
    expect(none.code).toBe(2);
    expect(none.said).toContain('DATABASE_URL is not set');
    const missing = new URL(url);
    missing.pathname = '/tolov_no_such_database';
    const refused = await drill(missing.toString());
    expect(refused.code).toBe(2);
    expect(refused.said).toMatch(/^restore-drill: No host of DATABASE_URL can be written to: 127\.0\.0\.1:\d+ \(database "tolov_no_such_database" does not exist\)/);
    expect(await scratchDatabases()).toBe(0);
  }, 60_000);
});
