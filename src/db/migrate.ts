import { readdir, readFile } from 'node:fs/promises';
import type { Db, Queryable } from './types.js';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const MIGRATION_FILE = /^(\d{3})_[a-z0-9_]+\.sql$/;
// Any fixed number shared by every Tolov process: two processes starting together apply migrations one after the other.
const MIGRATION_LOCK = 7_246_118;
const MIGRATION_LOCK_TIMEOUT = '10s';
const LOCK_NOT_AVAILABLE = '55P03';
// An index built on a table of a hundred million rows takes minutes, not hours.
const MIGRATION_STATEMENT_TIMEOUT_MS = 2 * 60 * 60_000;
const MIGRATION_LOCK_POLL_MS = 200;
/**
 * The first line of a migration whose statements each run alone, outside a transaction: for CREATE INDEX
 * CONCURRENTLY, which builds an index while the table is written. A failure or a crash may stop it after any
 * statement, and the next start runs it again from its first, so each must be safe to run again (`IF NOT EXISTS`, or
 * undone first with `IF EXISTS`) and must leave a state that the code before it still serves.
 */
export const OUTSIDE_TRANSACTION = '-- migrate: outside a transaction';

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

/**
 * Applies every pending migration, one after the other, under an advisory lock held by a session of its own; returns
 * the names applied. Each migration commits with its row in schema_migrations, in one transaction, except one marked
 * OUTSIDE_TRANSACTION (see there).
 */
export async function migrate(db: Db): Promise<string[]> {
  const migrations = await readMigrations();
  return db.session(async (session) => {
    await session.exec(`SET statement_timeout = ${MIGRATION_STATEMENT_TIMEOUT_MS}`);
    await takeMigrationLock(session);
    try {
      // A statement that waits longer than this for a table's lock is refused rather than hold back every request
      // queued behind it: the process fails to start, and the one before it keeps serving.
      await session.exec(`SET lock_timeout = '${MIGRATION_LOCK_TIMEOUT}'`);
      await session.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const applied = new Set((await session.query<{ version: number }>('SELECT version FROM schema_migrations')).map((row) => row.version));
      const pending = migrations.filter((migration) => !applied.has(migration.version));
      for (const migration of pending) await apply(session, migration);
      return pending.map((migration) => migration.name);
    } finally {
      // A session that failed cannot undo anything, and what failed it is what the caller needs to know.
      await session.exec(`RESET lock_timeout; RESET statement_timeout; SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => {});
    }
  });
}

/**
 * Waits for the migration lock, as long as one statement of a migration may take, asking again and again rather than
 * waiting in one statement: CREATE INDEX CONCURRENTLY in the process holding it waits for every statement older than
 * its build, and one waiting for the lock would wait for it in turn.
 */
async function takeMigrationLock(session: Queryable): Promise<void> {
  const deadline = Date.now() + MIGRATION_STATEMENT_TIMEOUT_MS;
  while (!(await session.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1) AS taken', [MIGRATION_LOCK]))[0]!.taken) {
    if (Date.now() > deadline) throw new Error(`another process has been migrating the database for more than ${MIGRATION_STATEMENT_TIMEOUT_MS / 60_000} minutes`);
    await new Promise((resolve) => setTimeout(resolve, MIGRATION_LOCK_POLL_MS));
  }
}

/** A migration that stopped: the process does not start, and the next start runs the migration again. */
export class MigrationError extends Error {
  constructor(migration: Migration, cause: unknown) {
    const why = (cause as { code?: string }).code === LOCK_NOT_AVAILABLE ? `waited more than ${MIGRATION_LOCK_TIMEOUT} for a table's lock held by a long transaction` : String((cause as Error).message);
    super(`migration ${migration.name} stopped (${why}); the next start runs it again`, { cause });
    this.name = 'MigrationError';
  }
}

async function apply(session: Queryable, migration: Migration): Promise<void> {
  try {
    await applyOnce(session, migration);
  } catch (error) {
    throw new MigrationError(migration, error);
  }
}

async function applyOnce(session: Queryable, migration: Migration): Promise<void> {
  const record = `INSERT INTO schema_migrations (version, name) VALUES (${migration.version}, '${migration.name}')`;
  if (migration.sql.startsWith(OUTSIDE_TRANSACTION)) {
    for (const statement of statementsOf(migration.sql)) await session.exec(statement);
    await session.exec(record);
    return;
  }
  try {
    await session.exec(`BEGIN;\n${migration.sql}\n;${record};\nCOMMIT`);
  } catch (error) {
    await session.exec('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** A script's statements: each ends with `;` at the end of its line, and comment lines are left out. */
function statementsOf(script: string): string[] {
  const code = script.split('\n').filter((line) => !line.trimStart().startsWith('--')).join('\n');
  return code.split(/;\s*$/m).map((statement) => statement.trim()).filter((statement) => statement.length > 0);
}
