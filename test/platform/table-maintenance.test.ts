import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/db.js';
import type { Db, Queryable } from '../../src/db/types.js';
import { maintenanceNeeded, tableMaintenance } from '../../src/workers/table-maintenance.js';
import { createPostgresDatabase, engine, explain, openTestDb } from '../support/harness.js';

/**
 * A migrated database of the test's own, and one session on it that keeps what it prepares (on the embedded engine,
 * the database's one session; on PostgreSQL, a connection outside the pool).
 */
async function openMaintained(): Promise<{ db: Db; session: Queryable; close(): Promise<void> }> {
  if (engine === 'pglite') {
    const db = await openTestDb();
    return { db, session: db, close: () => db.close() };
  }
  const database = await createPostgresDatabase();
  const db = await openPostgres(database.url);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const session: Queryable = {
    query: async (sql, params) => (await client.query(sql, params as unknown[])).rows,
    exec: async (script) => void (await client.query(script)),
  };
  return {
    db,
    session,
    async close() {
      await client.end();
      await db.close();
      await database.drop();
    },
  };
}

const autovacuumOff = async () => {
  const { db, close } = await openMaintained();
  try {
    return (await db.query<{ off: boolean }>("SELECT NOT current_setting('autovacuum')::boolean AS off"))[0]!.off;
  } finally {
    await close();
  }
};
// The service looks after its tables on the embedded engine, and on a PostgreSQL server only where autovacuum is off
// (as on this project's CI machine); elsewhere autovacuum does all this.
const maintained = engine === 'pglite' || (await autovacuumOff());

const plan = (db: Db) =>
  explain(db, "SELECT * FROM payment_intents WHERE product_id = 'p1' AND livemode = false ORDER BY created_at DESC, seq DESC LIMIT 11");

describe(`table maintenance (${engine})`, () => {
  it('is the service’s to do exactly where nothing else does it', async () => {
    const { db, close } = await openMaintained();
    try {
      expect(await maintenanceNeeded(db)).toBe(maintained);
    } finally {
      await close();
    }
  });
});

describe.runIf(maintained)(`table maintenance where the service does it (${engine})`, () => {
  it('keeps planner statistics fresh, and a page of a long history is read from an index, not sorted whole', async () => {
    const { db, close } = await openMaintained();
    try {
      await db.exec(`
        INSERT INTO products (id, name, scopes, fee_bps) VALUES ('p1', 'x', '{subscribe}', 100);
        INSERT INTO cards (id, product_id, livemode, status, rail, rail_token, masked_pan, expiry)
          VALUES ('c1', 'p1', false, 'ACTIVE', 'uzcard', 't', '860000******0007', '12/30');
        INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, rail_token, rail, masked_pan, metadata, succeeded_at)
          SELECT 'pi_' || g, 'p1', false, 100, 1, 'UZS', 'SUCCEEDED', 'c1', 't', 'uzcard', '860000******0007', '{}', now() FROM generate_series(1, 20000) g;`);
      const estimated = async () => (await db.query<{ rows: number }>("SELECT reltuples::int AS rows FROM pg_class WHERE relname = 'payment_intents'"))[0]!.rows;
      // Without statistics the planner knows nothing of the 20,000 rows.
      expect(await estimated()).toBeLessThan(1);
      const worker = tableMaintenance(db);
      // One table a run, the furthest past its threshold first: the intents are the ones that changed.
      await worker.runOnce();
      expect(await estimated()).toBeGreaterThan(15_000);
      expect(await plan(db)).toMatch(/Index Scan using payment_intents_list/);
      expect(await plan(db)).not.toMatch(/Sort/);
    } finally {
      await close();
    }
  });

  it('has a plan cached while a table was empty made again once the table has grown', async () => {
    const { db, session, close } = await openMaintained();
    try {
      const worker = tableMaintenance(db);
      // Every table once, and a bound: a worker that never reports done fails the test instead of hanging it.
      let rounds = 0;
      while ((await worker.runOnce()) > 0) expect(++rounds).toBeLessThan(1_000);
      await db.exec('ANALYZE ledger_entries');
      // As the service's statements, the ledger trigger's and the foreign key checks' are kept: planned once, then reused.
      await session.exec(`SET plan_cache_mode = force_generic_plan;
        PREPARE entries_of (text) AS SELECT sum(amount) FROM ledger_entries WHERE transaction_id = $1;
        EXECUTE entries_of('ltx_none');`);
      const cached = () => explain(session, "EXECUTE entries_of('ltx_1')");
      expect(await cached()).toMatch(/Seq Scan on ledger_entries/);
      await db.exec(`
        INSERT INTO products (id, name, scopes, fee_bps) VALUES ('p1', 'x', '{subscribe}', 100);
        INSERT INTO ledger_transactions (id, product_id, livemode, reason, reference_id)
          SELECT 'ltx_' || g, 'p1', false, 'payment_succeeded', 'pi_' || g FROM generate_series(1, 5000) g;
        INSERT INTO ledger_entries (transaction_id, product_id, livemode, account, amount)
          SELECT 'ltx_' || g, 'p1', false, a.account, a.amount FROM generate_series(1, 5000) g,
                 (VALUES ('rail_clearing', -100), ('merchant_pending', 99), ('platform_fees', 1)) AS a (account, amount);`);
      expect(await cached()).toMatch(/Seq Scan on ledger_entries/);
      // One table a run, the furthest past its threshold first: the entries (15,000 rows), then their transactions.
      await waitForChangeCounters(db, 'ledger_entries', 15_000);
      expect(await worker.runOnce()).toBe(1);
      expect(await cached()).toMatch(/Index Scan (using|on) ledger_entries_pkey/);
      expect(await cached()).not.toMatch(/Seq Scan/);
      expect(await worker.runOnce()).toBe(1);
      // Nothing changed since: nothing to do.
      expect(await worker.runOnce()).toBe(0);
    } finally {
      await close();
    }
  });
});

/**
 * On PostgreSQL a session's change counters reach the statistics when it is idle, within a second; the embedded
 * engine's one session flushes them when the maintenance asks.
 */
async function waitForChangeCounters(db: Db, table: string, rows: number): Promise<void> {
  if (db.engine === 'pglite') return;
  for (let waited = 0; waited < 5_000; waited += 50) {
    const [stats] = await db.query<{ n: number }>('SELECT n_mod_since_analyze::int AS n FROM pg_stat_user_tables WHERE relname = $1', [table]);
    if (stats!.n >= rows) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the change counters of ${table} did not reach ${rows}`);
}
