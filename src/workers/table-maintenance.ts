import type { Db } from '../db/types.js';
import type { Worker } from './loop.js';

const INTERVAL_MS = 1_000;
/** Autovacuum's defaults: analyse after 50 rows + 10% of the table changed, vacuum after 50 + 20% of it died. */
const ANALYZE_BASE_ROWS = 50;
const ANALYZE_SCALE = 0.1;
const VACUUM_BASE_ROWS = 50;
const VACUUM_SCALE = 0.2;
/** A table whose pages grew this much since its statistics were taken is analysed whatever its change counters say. */
const GROWTH_BASE_PAGES = 8;
const GROWTH_SCALE = 0.1;
/**
 * ANALYZE samples 300 rows per unit of this (PostgreSQL's default is 100: 30,000 rows). Every statement the service
 * runs is a lookup by key or a range of an index, whose plan the tables' sizes decide, not their value distributions;
 * a sample of 3,000 rows takes a seventh of the time (payment_intents at 60,000 rows on the embedded engine: 10 ms
 * against 78 ms), and on the embedded engine every request waits that long.
 */
const STATISTICS_TARGET = 10;

/**
 * What autovacuum does, for a database where nothing else does it: the embedded engine has no autovacuum, and a
 * PostgreSQL server may run with it off (this machine's does). A plan is only as good as the statistics it was made
 * with: a plan cached while a table was empty (a prepared statement's, a foreign key check's, the ledger trigger's)
 * scans the whole table once it has grown, and a list sorts a merchant's whole history. This analyses each table that
 * changed past autovacuum's threshold or grew since its statistics (the change counters are lost in a crash; its size
 * is not), and vacuums each with too many dead rows. Analysing invalidates the cached plans that depend on the table,
 * in every session. It takes one table a second: on the embedded engine it holds the one session, so requests wait
 * for one table's work at a time (5–15 ms with the sample below), never for every table's in a row.
 */
export function tableMaintenance(db: Db): Worker {
  return {
    name: 'table-maintenance',
    intervalMs: INTERVAL_MS,
    batchMax: 1,
    roundsMax: 1,
    async runOnce() {
      // The embedded engine's one session's change counters reach pg_stat_user_tables at most once a second; flushed
      // now, a table is analysed once for its changes, not again when counters from before its ANALYZE arrive after it.
      if (db.engine === 'pglite') await db.query('SELECT pg_stat_force_next_flush()');
      // Each measure is how far past its threshold a table is (over 1: due); the furthest first, so that a table
      // changing fast never keeps another waiting.
      const [table] = await db.query<{ name: string; vacuum: boolean }>(
        `SELECT name, dead > 1 AS vacuum FROM (
           SELECT quote_ident(s.relname) AS name,
                  s.n_mod_since_analyze / ($1::int + $2::float8 * greatest(c.reltuples, 0)) AS changed,
                  s.n_dead_tup / ($3::int + $4::float8 * greatest(c.reltuples, 0)) AS dead,
                  pg_relation_size(s.relid) / current_setting('block_size')::int / ($5::int + (1 + $6::float8) * c.relpages) AS grown
             FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid) AS tables
          WHERE greatest(changed, dead, grown) > 1 ORDER BY greatest(changed, dead, grown) DESC, name LIMIT 1`,
        [ANALYZE_BASE_ROWS, ANALYZE_SCALE, VACUUM_BASE_ROWS, VACUUM_SCALE, GROWTH_BASE_PAGES, GROWTH_SCALE],
      );
      if (!table) return 0;
      if (table.vacuum) await db.exec(`VACUUM ${table.name}`);
      // VACUUM cannot run in a transaction; ANALYZE can, which scopes the smaller sample to it.
      await db.transaction(async (tx) => {
        await tx.exec(`SET LOCAL default_statistics_target = ${STATISTICS_TARGET}; ANALYZE ${table.name}`);
      });
      return 1;
    },
  };
}

/** Whether the service must look after its tables itself: on the embedded engine, or on a server with autovacuum off. */
export async function maintenanceNeeded(db: Db): Promise<boolean> {
  if (db.engine === 'pglite') return true;
  const [setting] = await db.query<{ on: boolean }>("SELECT current_setting('autovacuum')::boolean AS on");
  return !setting!.on;
}
