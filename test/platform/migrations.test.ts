import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPglite, openPostgres } from '../../src/db/db.js';
import type { Db } from '../../src/db/types.js';
import { migrate, readMigrations } from '../../src/db/migrate.js';
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
});
