import { describe, expect, it } from 'vitest';
import { openPglite, type Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { embeddedMaintenance } from '../../src/workers/embedded-maintenance.js';
import { engine, explain } from '../support/harness.js';

const plan = (db: Db) =>
  explain(db, "SELECT * FROM payment_intents WHERE product_id = 'p1' AND livemode = false AND seq < 9007199254740991 ORDER BY seq DESC LIMIT 11");

describe.runIf(engine === 'pglite')('embedded maintenance', () => {
  it('keeps planner statistics fresh, so that a page of a long history is read from an index, not sorted whole', async () => {
    const db = await openPglite('memory://');
    try {
      await migrate(db);
      await db.exec(`
        INSERT INTO products (id, name, scopes, fee_bps) VALUES ('p1', 'x', '{subscribe}', 100);
        INSERT INTO cards (id, product_id, livemode, status, rail, rail_token, masked_pan, expiry)
          VALUES ('c1', 'p1', false, 'ACTIVE', 'uzcard', 't', '860000******0007', '12/30');
        INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, rail_token, rail, metadata, succeeded_at)
          SELECT 'pi_' || g, 'p1', false, 100, 1, 'UZS', 'SUCCEEDED', 'c1', 't', 'uzcard', '{}', now() FROM generate_series(1, 20000) g;`);
      // Without statistics the planner expects a handful of rows and sorts all of them.
      expect(await plan(db)).toMatch(/Sort/);
      const worker = embeddedMaintenance(db);
      await worker.runOnce();
      expect(await plan(db)).toMatch(/Index Scan using payment_intents_list/);
      expect(await plan(db)).not.toMatch(/Sort/);
    } finally {
      await db.close();
    }
  });

  it('has a plan cached while a table was empty made again once the table has grown', async () => {
    const db = await openPglite('memory://');
    try {
      await migrate(db);
      const worker = embeddedMaintenance(db);
      await worker.runOnce();
      await db.exec('ANALYZE ledger_entries');
      // As the ledger trigger and the foreign key checks keep theirs: planned once, then reused.
      await db.exec(`SET plan_cache_mode = force_generic_plan;
        PREPARE entries_of (text) AS SELECT sum(amount) FROM ledger_entries WHERE transaction_id = $1;
        EXECUTE entries_of('ltx_none');`);
      const cached = () => explain(db, "EXECUTE entries_of('ltx_1')");
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
      expect(await worker.runOnce()).toBe(1);
      expect(await cached()).toMatch(/Index Scan (using|on) ledger_entries_transaction/);
      expect(await cached()).not.toMatch(/Seq Scan/);
      expect(await worker.runOnce()).toBe(1);
      // Nothing changed since: nothing to do.
      expect(await worker.runOnce()).toBe(0);
    } finally {
      await db.close();
    }
  });
});
