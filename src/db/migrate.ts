import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db, Queryable } from './types.js';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const MIGRATION_FILE = /^(\d{3})_[a-z0-9_]+\.sql$/;
/**
 * Any fixed number shared by every Tolov process: two processes starting together apply migrations one after the
 * other. Not 7_246_118, which earlier releases take by waiting inside a transaction: one of them starting during an
 * index build here would wait for the build while the build waits for its transaction.
 */
export const MIGRATION_LOCK = 7_246_119;
/** How long a process waits for another one's migrations, asking every MIGRATION_LOCK_POLL_MS. */
const MIGRATION_LOCK_WAIT_MS = 2 * 60 * 60_000;
const MIGRATION_LOCK_POLL_MS = 200;
/**
 * How long a statement waits for a table's lock, during which every request on that table queues behind it; then it
 * gives way, and is tried again LOCK_ATTEMPTS_MAX times in all, LOCK_RETRY_MS apart, before the migration stops.
 */
const LOCK_TIMEOUT = '2s';
const LOCK_ATTEMPTS_MAX = 30;
const LOCK_RETRY_MS = 1_000;
const LOCK_NOT_AVAILABLE = '55P03';
/** Any other statement of a migration: one that needs longer is written as builds and batches. */
const STATEMENT_TIMEOUT_MS = 15_000;
/** A concurrent index build takes no lock that holds back a request: it waits as long as it must, up to this. */
const BUILD_TIMEOUT_MS = 2 * 60 * 60_000;
/** The session's limits for any statement but a build, and for a build. */
const STATEMENT_LIMITS = `SET lock_timeout = '${LOCK_TIMEOUT}'; SET statement_timeout = ${STATEMENT_TIMEOUT_MS}`;
const BUILD_LIMITS = `SET lock_timeout = 0; SET statement_timeout = ${BUILD_TIMEOUT_MS}`;
/**
 * The first line of a migration run statement by statement rather than in one transaction: for CREATE INDEX
 * CONCURRENTLY, which builds an index while the table is written, and which no transaction may hold. Each statement
 * ends with `;` at the end of its line (no `$$` body). The migration records how far it got after each statement, and
 * a stop at any statement is resumed there by the next start:
 * - any other statement commits in one transaction with that record, so it runs exactly once;
 * - a concurrent build (`CREATE [UNIQUE] INDEX CONCURRENTLY IF NOT EXISTS name`) left invalid by a stop is dropped and
 *   built again; one that finished is kept.
 * Every state in between must be one the code before the migration serves.
 */
export const OUTSIDE_TRANSACTION = '-- migrate: outside a transaction';
const CONCURRENTLY = /\bCONCURRENTLY\b/i;
const BUILT_INDEX = /^CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+(\w+)\s/i;

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
  return Math.max(0, ...(await finishedVersions(db)));
}

/**
 * The migrations the database has, finished: recorded in schema_migrations without a progress row. A database no
 * migration ran on has neither table; one migrated by an earlier release has no progress table.
 */
async function finishedVersions(db: Queryable): Promise<number[]> {
  const [tables] = await db.query<{ recorded: boolean; tracked: boolean }>(
    `SELECT to_regclass('schema_migrations') IS NOT NULL AS recorded, to_regclass('schema_migration_progress') IS NOT NULL AS tracked`,
  );
  if (!tables!.recorded) return [];
  const unfinished = tables!.tracked ? ' EXCEPT SELECT version FROM schema_migration_progress' : '';
  return (await db.query<{ version: number }>(`SELECT version FROM schema_migrations${unfinished}`)).map((row) => row.version);
}

/**
 * Applies every pending migration, one after the other, on a session of its own under an advisory lock; returns the
 * names applied. Each migration commits with its row in schema_migrations in one transaction, except one marked
 * OUTSIDE_TRANSACTION (see there).
 */
export async function migrate(db: Db, migrations?: Migration[]): Promise<string[]> {
  const known = migrations ?? (await readMigrations());
  return db.session(async (session) => {
    if ((await pendingOf(session, known)).length === 0) return [];
    await takeMigrationLock(session);
    try {
      // A statement that is not a build stops at STATEMENT_TIMEOUT_MS: a migration holds no table's lock for long.
      await session.exec(STATEMENT_LIMITS);
      await session.exec(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
         CREATE TABLE IF NOT EXISTS schema_migration_progress (version integer PRIMARY KEY, statements_done integer NOT NULL)`,
      );
      const pending = await pendingOf(session, known);
      for (const migration of pending) await apply(session, migration);
      return pending.map((migration) => migration.name);
    } finally {
      // A session that failed cannot undo anything, and what failed it is what the caller needs to know.
      await session.exec(`RESET lock_timeout; RESET statement_timeout; SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => {});
    }
  });
}

/**
 * The migrations not yet applied, or not finished. Asked first without the lock too, so that a process with nothing
 * to apply starts at once, even while a later release's migration holds the lock.
 */
async function pendingOf(session: Queryable, known: Migration[]): Promise<Migration[]> {
  const finished = new Set(await finishedVersions(session));
  return known.filter((migration) => !finished.has(migration.version));
}

/**
 * Waits for the migration lock, asking again and again rather than waiting in one statement: a concurrent index build
 * in the process holding it waits for every statement older than the build, and a statement waiting for the lock
 * would wait for the build in turn.
 */
async function takeMigrationLock(session: Queryable): Promise<void> {
  const deadline = Date.now() + MIGRATION_LOCK_WAIT_MS;
  while (!(await session.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1) AS taken', [MIGRATION_LOCK]))[0]!.taken) {
    if (Date.now() > deadline) throw new MigrationError(`another process has been migrating the database for more than ${MIGRATION_LOCK_WAIT_MS / 60_000} minutes`);
    await sleep(MIGRATION_LOCK_POLL_MS);
  }
}

/** A migration that stopped: the process does not start, and the next start takes the migration up again. */
export class MigrationError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MigrationError';
  }

  static of(migration: Migration, cause: unknown): MigrationError {
    const { code, message, detail } = cause as { code?: string; message?: string; detail?: string };
    const why = code === LOCK_NOT_AVAILABLE ? `a table stayed locked by other transactions through ${LOCK_ATTEMPTS_MAX} waits of ${LOCK_TIMEOUT}` : `${message}${detail ? `: ${detail}` : ''}`;
    return new MigrationError(`migration ${migration.name} stopped (${why}); the next start takes it up again`, { cause });
  }
}

async function apply(session: Queryable, migration: Migration): Promise<void> {
  const record = `INSERT INTO schema_migrations (version, name) VALUES (${migration.version}, '${migration.name}') ON CONFLICT (version) DO NOTHING`;
  try {
    if (!migration.sql.startsWith(OUTSIDE_TRANSACTION)) return await inOneTransaction(session, `${migration.sql}\n;${record}`);
    // Recorded before its first statement, with its progress: a runner of an earlier release, which knows nothing of
    // progress, takes it for applied and leaves it alone; this one takes it up until its progress is gone. Recorded
    // meanwhile by such a runner, it has no progress and is done.
    await inOneTransaction(session, `WITH recorded AS (${record} RETURNING version) INSERT INTO schema_migration_progress SELECT version, 0 FROM recorded`);
    if (await applyStatements(session, migration)) await session.exec(`DELETE FROM schema_migration_progress WHERE version = ${migration.version}`);
  } catch (error) {
    throw MigrationError.of(migration, error);
  }
}

/** An OUTSIDE_TRANSACTION migration's statements, from where it stopped; false if it has no progress: another runner applied it. */
async function applyStatements(session: Queryable, migration: Migration): Promise<boolean> {
  const statements = statementsOf(migration);
  const [progress] = await session.query<{ done: number }>('SELECT statements_done AS done FROM schema_migration_progress WHERE version = $1', [migration.version]);
  if (progress === undefined) return false;
  for (let done = progress.done; done < statements.length; done++) {
    const statement = statements[done]!;
    const record = `UPDATE schema_migration_progress SET statements_done = ${done + 1} WHERE version = ${migration.version}`;
    if (!CONCURRENTLY.test(statement)) {
      await inOneTransaction(session, `${statement};\n${record}`);
      continue;
    }
    const index = BUILT_INDEX.exec(statement)?.[1];
    await session.exec(BUILD_LIMITS);
    if (index !== undefined && (await invalid(session, index))) await session.exec(`DROP INDEX CONCURRENTLY ${index}`);
    await session.exec(statement);
    await session.exec(STATEMENT_LIMITS);
    await session.exec(record);
  }
  return true;
}

const invalid = async (session: Queryable, index: string) =>
  (await session.query('SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1 AND NOT i.indisvalid', [index])).length > 0;

/** Runs `script` in one transaction, again while it gives way to a table's lock held by others. */
async function inOneTransaction(session: Queryable, script: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await session.exec(`BEGIN;\n${script};\nCOMMIT`);
      return;
    } catch (error) {
      await session.exec('ROLLBACK').catch(() => {});
      if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE || attempt >= LOCK_ATTEMPTS_MAX) throw error;
      await sleep(LOCK_RETRY_MS);
    }
  }
}

/** An OUTSIDE_TRANSACTION migration's statements: each ends with `;` at the end of its line; comment lines are left out. */
function statementsOf(migration: Migration): string[] {
  const code = migration.sql.split('\n').filter((line) => !line.trimStart().startsWith('--')).join('\n');
  const statements = code.split(/;\s*$/m).map((statement) => statement.trim()).filter((statement) => statement.length > 0);
  for (const statement of statements) {
    const concurrent = CONCURRENTLY.test(statement);
    const resumable = !concurrent || BUILT_INDEX.test(statement) || /^DROP\s+INDEX\s+CONCURRENTLY\s+IF\s+EXISTS\s/i.test(statement);
    if (statement.includes(';') || statement.includes('$$') || !resumable) {
      throw new Error(
        `migration ${migration.name}: a statement run outside a transaction ends its line with ';', has no $$ body, and runs concurrently only as CREATE [UNIQUE] INDEX CONCURRENTLY IF NOT EXISTS name or DROP INDEX CONCURRENTLY IF EXISTS: ${statement.slice(0, 80)}`,
      );
    }
  }
  return statements;
}
