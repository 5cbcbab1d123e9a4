import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPglite, openPostgres } from '../../src/db/db.js';
import type { Db } from '../../src/db/types.js';
import { migrate, OUTSIDE_TRANSACTION, readMigrations } from '../../src/db/migrate.js';
import { randomBase62 } from '../../src/lib/random.js';
import { engine } from '../support/harness.js';

/** Two connections to one empty database, as two processes starting together would have. */
async function emptyDatabase(): Promise<{ first: Db; second: Db; drop(): Promise<void> }> {
  if (engine === 'pglite') {
    const db = await openPglite('memory://');
    return { first: db, second: db, drop: () => db.close() };
  }
  const serverUrl = process.env.TOLOV_TEST_DATABASE_URL!;
  const name = `tolov_migrate_${randomBase62(8).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const first = await openPostgres(url.toString());
  const second = await openPostgres(url.toString());
  return {
    first,
    second,
    async drop() {
      await first.close();
      await second.close();
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

describe('migrations', () => {
  it('are numbered 001, 002, … without gaps', async () => {
    const migrations = await readMigrations();
    expect(migrations.length).toBeGreaterThan(0);
    expect(migrations.map((migration) => migration.version)).toEqual(migrations.map((_, index) => index + 1));
  });

  it('apply once when two processes start together, and not again on the next start', async () => {
    const database = await emptyDatabase();
    try {
      const [a, b] = await Promise.all([migrate(database.first), migrate(database.second)]);
      const all = (await readMigrations()).map((migration) => migration.name);
      expect([a, b].sort((x, y) => x.length - y.length)).toEqual([[], all]);
      const applied = await database.first.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      expect(applied.map((row) => row.version)).toEqual(all.map((_, index) => index + 1));
      expect(await migrate(database.first)).toEqual([]);
    } finally {
      await database.drop();
    }
  });

  it('run a migration outside a transaction again from its first statement after a stop, to the same schema', async () => {
    const migration = (await readMigrations()).find((each) => each.name === '033_fewer_index_entries.sql')!;
    expect(migration.sql.startsWith(OUTSIDE_TRANSACTION)).toBe(true);
    const database = await emptyDatabase();
    const db = database.first;
    const indexes = () =>
      db.query<{ indexname: string; indexdef: string }>(
        `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY tablename, indexname`,
      );
    try {
      await migrate(db);
      const schema = await indexes();
      expect(schema).toContainEqual({
        indexname: 'ledger_entries_pkey',
        indexdef: 'CREATE UNIQUE INDEX ledger_entries_pkey ON public.ledger_entries USING btree (transaction_id, id)',
      });
      // Stopped after its last statement, before it was recorded, with a build of its first index left invalid.
      await db.query('DELETE FROM schema_migrations WHERE version = $1', [migration.version]);
      await db.exec('CREATE UNIQUE INDEX ledger_entries_transaction_id_id ON ledger_entries (transaction_id, id)');
      await db.exec(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'ledger_entries_transaction_id_id'::regclass`);
      expect(await migrate(db)).toEqual([migration.name]);
      expect(await indexes()).toEqual(schema);
    } finally {
      await database.drop();
    }
  });
});

