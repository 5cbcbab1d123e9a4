import { readdir, readFile } from 'node:fs/promises';
import type { Db } from './types.js';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const MIGRATION_FILE = /^(\d{3})_[a-z0-9_]+\.sql$/;
// Any fixed number shared by every Tolov process: two processes starting together apply migrations one after the other.
const MIGRATION_LOCK = 7_246_118;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export async function readMigrations(): Promise<Migration[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((file) => MIGRATION_FILE.test(file)).sort();
  const migrations = await Promise.all(
    files.map(async (file) => ({
      version: Number(file.slice(0, 3)),
      name: file,
      sql: await readFile(new URL(file, MIGRATIONS_DIR), 'utf8'),
    })),
  );
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new Error(`migration ${migration.name} breaks the numbering 001, 002, …`);
  });
  return migrations;
}

/** The newest migration the database has: below the newest this code knows, it was restored from an older backup. */
export async function schemaVersion(db: Db): Promise<number> {
  const [row] = await db.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations');
  return row?.version ?? 0;
}

/** Applies every pending migration in one transaction under an advisory lock; returns the names applied. */
export async function migrate(db: Db): Promise<string[]> {
  const migrations = await readMigrations();
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const applied = new Set(
      (await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((row) => row.version),
    );
    const pending = migrations.filter((migration) => !applied.has(migration.version));
    for (const migration of pending) {
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
    }
    return pending.map((migration) => migration.name);
  });
}
