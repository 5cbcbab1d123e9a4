import { describe, expect, it } from 'vitest';
import { openPglite } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { embeddedMaintenance } from '../../src/workers/embedded-maintenance.js';
import { engine } from '../support/harness.js';

const plan = async (db: Awaited<ReturnType<typeof openPglite>>) =>
  (
    await db.query<{ 'QUERY PLAN': string }>(
      "EXPLAIN SELECT * FROM payment_intents WHERE product_id = 'p1' AND livemode = false AND seq < 9007199254740991 ORDER BY seq DESC LIMIT 11",
    )
  )
    .map((row) => row['QUERY PLAN'])
    .join('\n');

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
      expect(await plan(db)).toMatch(/Index Scan Backward/);
      expect(await plan(db)).not.toMatch(/Sort/);
    } finally {
      await db.close();
    }
  });
});
