// `npm run restore-drill`: proves that the database's backups can be restored, as an operator must before needing
// one. It dumps DATABASE_URL with pg_dump (one consistent snapshot, the format the nightly backup uses), restores the
// dump into a scratch database on the same server, checks the copy (every migration present, the books right: the
// ledger sums to zero, each transaction balances, each balance equals its statement), counts the money rows, drops the
// copy and prints the report as JSON. Exit code 0: restorable; 1: the copy is not right; 2: the drill could not run.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { openPostgres } from '../db/db.js';
import { NoPrimaryError, Primary } from '../db/primary.js';
import type { Db } from '../db/types.js';
import { readMigrations, schemaVersion } from '../db/migrate.js';
import { bookChecks } from '../modules/checks/service.js';

const run = promisify(execFile);
/** pg_dump and pg_restore of a large database take long; a drill that hangs is a failed drill. */
const TOOL_TIMEOUT_MS = 6 * 3600_000;
/** The tables whose rows say what money the copy holds. */
const COUNTED = ['products', 'orders', 'payment_intents', 'refunds', 'payouts', 'receipts', 'ledger_transactions', 'ledger_entries', 'balance_transactions', 'events'];

/** The drill could not run (no PostgreSQL, a tool missing or refused): said, with exit code 2. */
class DrillError extends Error {}

function sourceUrl(): string {
  let url: string | null;
  try {
    url = loadConfig().databaseUrl;
  } catch (error) {
    throw error instanceof ConfigError ? new DrillError(error.message) : error;
  }
  if (url === null) throw new DrillError('DATABASE_URL is not set: the drill restores a PostgreSQL backup (the embedded database is backed up as its folder)');
  return url;
}

/** The URL of another database on the same server. */
function urlOf(source: string, database: string): string {
  const url = new URL(source);
  url.pathname = `/${database}`;
  return url.toString();
}

async function tool(name: 'pg_dump' | 'pg_restore', args: string[]): Promise<void> {
  try {
    await run(name, args, { timeout: TOOL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    throw new DrillError(`${name} failed: ${(error as Error).message.split('\n').slice(0, 5).join(' ')}`);
  }
}

async function using<T>(url: string, work: (db: Db) => Promise<T>): Promise<T> {
  const db = await openPostgres(url);
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

/** What the restored copy holds, and whether its books are right. */
async function inspect(db: Db) {
  const version = await schemaVersion(db);
  const latest = (await readMigrations()).at(-1)!.version;
  const counts: Record<string, number> = {};
  for (const table of COUNTED) counts[table] = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;
  const checks = await bookChecks(db);
  return { ok: version === latest && checks.every((check) => check.ok), schemaVersion: version, migrationsKnown: latest, counts, checks };
}

/** Dumps `source`, restores it into a scratch database, inspects the copy; the copy and the dump are always removed. */
async function drill(source: string) {
  const scratch = `tolov_restore_drill_${Date.now()}_${process.pid}`;
  const folder = await mkdtemp(join(tmpdir(), 'tolov-restore-drill-'));
  const dump = join(folder, 'tolov.dump');
  const started = Date.now();
  try {
    await tool('pg_dump', ['--format=custom', '--no-owner', '--file', dump, source]);
    const dumped = Date.now();
    await using(source, (db) => db.query(`CREATE DATABASE ${scratch}`));
    try {
      await tool('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', urlOf(source, scratch), dump]);
      const restored = Date.now();
      const copy = await using(urlOf(source, scratch), inspect);
      return { object: 'restore_drill' as const, ...copy, dumpBytes: (await stat(dump)).size, dumpMs: dumped - started, restoreMs: restored - dumped };
    } finally {
      await using(source, (db) => db.query(`DROP DATABASE IF EXISTS ${scratch} WITH (FORCE)`));
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** The primary's own URL: a DATABASE_URL may list its standbys too, and the drill restores beside the primary. */
async function primarySource(): Promise<string> {
  try {
    return (await Primary.of(sourceUrl())).url;
  } catch (error) {
    throw error instanceof NoPrimaryError ? new DrillError(error.message) : error;
  }
}

try {
  const report = await drill(await primarySource());
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  process.exitCode = report.ok ? 0 : 1;
} catch (error) {
  if (!(error instanceof DrillError)) throw error;
  process.stderr.write(`restore-drill: ${error.message}\n`);
  process.exitCode = 2;
}
