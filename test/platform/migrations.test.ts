import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPglite, openPostgres } from '../../src/db/db.js';
import { runIdempotent } from '../../src/core/idempotency.js';
import type { Merchant } from '../../src/core/merchant.js';
import type { Db } from '../../src/db/types.js';
import { migrate, MIGRATION_LOCK, MigrationError, OUTSIDE_TRANSACTION, readMigrations, schemaVersion } from '../../src/db/migrate.js';
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

  // The embedded engine has one session, and one process.
  it.runIf(engine === 'postgres')('start at once with nothing to apply, while another process holds the migration lock', async () => {
    const database = await emptyDatabase();
    try {
      await migrate(database.first);
      await database.second.session(async (other) => {
        await other.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
        try {
          expect(await migrate(database.first)).toEqual([]);
        } finally {
          await other.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
        }
      });
    } finally {
      await database.drop();
    }
  }, 10_000);

  it('take an outside-transaction migration up where it stopped, at any statement, to the same schema as a run without a stop', async () => {
    const all = await readMigrations();
    const migration = all.find((each) => each.name === '033_fewer_index_entries.sql')!;
    expect(migration.sql.startsWith(OUTSIDE_TRANSACTION)).toBe(true);
    const before = all.filter((each) => each.version < migration.version);
    const statements = migration.sql.split('\n').filter((line) => !line.startsWith('--') && /;\s*$/.test(line)).length;
    expect(statements).toBe(7);
    const reference = await withDatabase(async (db) => {
      await migrate(db, all);
      return schemaOf(db);
    });
    for (let stop = 0; stop < statements; stop++) {
      await withDatabase(async (db) => {
        await migrate(db, before);
        // The statement at `stop` fails: those before it are done, and recorded.
        const failing = { ...migration, sql: replaceStatement(migration.sql, stop, 'SELECT 1 / 0;') };
        await expect(migrate(db, [...before, failing])).rejects.toThrow(MigrationError);
        const [progress] = await db.query<{ done: number }>('SELECT statements_done AS done FROM schema_migration_progress');
        expect(progress!.done).toBe(stop);
        // Recorded, so that an earlier release's runner leaves it alone; not counted as the schema's version.
        expect(await db.query('SELECT version FROM schema_migrations WHERE version = $1', [migration.version])).toHaveLength(1);
        expect(await schemaVersion(db)).toBe(migration.version - 1);
        // Requests are served in the state it stopped in: a new key is claimed, an earlier one replayed.
        await serveRequests(db, stop);
        if (stop === 0) {
          // A build stopped part way leaves its index invalid.
          await db.exec('CREATE UNIQUE INDEX ledger_entries_transaction_id_id ON ledger_entries (transaction_id, id)');
          await db.exec(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'ledger_entries_transaction_id_id'::regclass`);
        }
        expect(await migrate(db, all)).toEqual(all.filter((each) => each.version >= migration.version).map((each) => each.name));
        await serveRequests(db, statements + stop, [stop]);
        expect(await schemaOf(db)).toEqual(reference);
        expect(await db.query('SELECT * FROM schema_migration_progress')).toEqual([]);
        expect(await schemaVersion(db)).toBe(all.length);
      });
    }
  }, 120_000);
});

const SCOPE: Merchant = { actor: { kind: 'api_key', keyId: 'key_m' }, productId: 'prod_m', productName: 'Shop', livemode: false, scopes: [], feeBps: 100, receiptRequired: false, suspended: false };

/**
 * Request `n` under a new idempotency key, whose first phase reads a ledger transaction's entries: answered, then
 * replayed; and the keys of `earlier` requests replayed.
 */
async function serveRequests(db: Db, n: number, earlier: number[] = []): Promise<void> {
  await db.query(`INSERT INTO products (id, name, scopes, fee_bps) VALUES ('prod_m', 'Shop', '{subscribe}', 100) ON CONFLICT DO NOTHING`);
  const request = (at: number) =>
    runIdempotent(db, SCOPE, `key-${at}`, { id: `req_${n}`, method: 'POST', path: '/v1/things', body: { at } }, {
      started: async (tx) => {
        await tx.query('SELECT count(*) FROM ledger_entries WHERE transaction_id = $1', ['ltx_m']);
        return { response: { status: 200, body: { at } } };
      },
    });
  expect(await request(n)).toMatchObject({ status: 200, replayed: false });
  for (const at of [n, ...earlier]) expect(await request(at)).toMatchObject({ status: 200, replayed: true });
}

/** `sql` with its statement number `index` (counted by the lines that end one) replaced by `replacement`. */
function replaceStatement(sql: string, index: number, replacement: string): string {
  const lines = sql.split('\n');
  let statement = 0;
  let start = lines.findIndex((line) => !line.startsWith('--'));
  for (let at = start; at < lines.length; at++) {
    if (!/;\s*$/.test(lines[at]!)) continue;
    if (statement === index) return [...lines.slice(0, start), replacement, ...lines.slice(at + 1)].join('\n');
    statement += 1;
    start = at + 1;
  }
  throw new Error(`no statement ${index}`);
}

/** Every index, constraint and NOT NULL of the public tables. */
async function schemaOf(db: Db): Promise<unknown[]> {
  return db.query(
    `SELECT 'index' AS kind, indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = 'public'
     UNION ALL
     SELECT 'constraint', conrelid::regclass::text || '.' || conname, pg_get_constraintdef(oid) || ' on ' || conindid::regclass::text
       FROM pg_constraint WHERE connamespace = 'public'::regnamespace
     UNION ALL
     SELECT 'not null', c.relname || '.' || a.attname, a.attnotnull::text
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY 1, 2, 3`,
  );
}

async function withDatabase<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const database = await emptyDatabase();
  try {
    return await work(database.first);
  } finally {
    await database.drop();
  }
}
