// Where a charge's cost goes: on PostgreSQL, what each charge writes (transactions, rows, index entries, WAL, and
// statements where pg_stat_statements is loaded), and in the service, a CPU profile (`node --cpu-prof`) summed by the
// part of the code its samples fell in and by function.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';

/** PostgreSQL's cumulative statistics reach its views once each backend flushes them: at the latest 10 s after it went idle. */
const STATS_FLUSH_WAIT_MS = 11_000;
/** Functions listed from a profile, by self time. */
const TOP_FUNCTIONS = 15;

/** The database's counters at one moment, or what they grew by per charge. */
export interface Writes {
  transactions: number;
  /** Rows inserted, updated or deleted. */
  rows: number;
  /** Entries written in full indexes: each insert and each update that is not HOT writes one in every full index of its table (partial indexes, which a row may not enter, are not counted). */
  indexEntries: number;
  walBytes: number;
  walRecords: number;
  /** Null when pg_stat_statements is not in shared_preload_libraries. */
  statements: number | null;
}

async function statementsRun(client: pg.Client): Promise<number | null> {
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const { rows } = await client.query<{ calls: string }>('SELECT coalesce(sum(calls), 0)::text AS calls FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())');
    return Number(rows[0]!.calls);
  } catch {
    return null;
  }
}

async function counters(databaseUrl: string): Promise<Writes> {
  await new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_WAIT_MS));
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    const { rows } = await client.query<Record<keyof Omit<Writes, 'statements'>, string>>(
      `SELECT (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database())::text AS transactions,
              coalesce(sum(s.n_tup_ins + s.n_tup_upd + s.n_tup_del), 0)::text AS rows,
              coalesce(sum((s.n_tup_ins + s.n_tup_upd - s.n_tup_hot_upd) * (SELECT count(*) FROM pg_index i WHERE i.indrelid = s.relid AND i.indpred IS NULL)), 0)::text AS "indexEntries",
              (SELECT wal_bytes FROM pg_stat_wal)::text AS "walBytes", (SELECT wal_records FROM pg_stat_wal)::text AS "walRecords"
         FROM pg_stat_user_tables s`,
    );
    const row = rows[0]!;
    return {
      transactions: Number(row.transactions),
      rows: Number(row.rows),
      indexEntries: Number(row.indexEntries),
      walBytes: Number(row.walBytes),
      walRecords: Number(row.walRecords),
      statements: await statementsRun(client),
    };
  } finally {
    await client.end();
  }
}

/** Starts counting what the database at `databaseUrl` writes; the returned function gives it per charge. */
export async function writesMeter(databaseUrl: string): Promise<(charges: number) => Promise<Writes>> {
  const before = await counters(databaseUrl);
  return async (charges) => {
    const after = await counters(databaseUrl);
    const per = (field: keyof Omit<Writes, 'statements'>) => Math.round(((after[field] - before[field]) / charges) * 100) / 100;
    const statements = after.statements !== null && before.statements !== null ? Math.round(((after.statements - before.statements) / charges) * 100) / 100 : null;
    return { transactions: per('transactions'), rows: per('rows'), indexEntries: per('indexEntries'), walBytes: per('walBytes'), walRecords: per('walRecords'), statements };
  };
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

/** The parts of the service a sample of JavaScript can fall in, by its function's file; the first that matches names it. */
const PARTS: Array<[string, RegExp]> = [
  ['HTTP (Node and Fastify)', /^node:(_http|http|net|stream|internal\/(http|streams|net))|node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify)\//],
  ['Node internals (timers, events, async hooks)', /^node:/],
  ['validation and serialization (ajv, fast-json-stringify)', /node_modules\/(ajv|fast-json-stringify|fast-uri|@sinclair)\//],
  ['database driver (pg, PGlite)', /node_modules\/(pg|pg-protocol|pg-pool|pg-types|pgpass|@electric-sql)\//],
  ['database layer (src/db)', /\/dist\/db\//],
  ['authentication (src/http/auth)', /\/dist\/http\/auth\.js/],
  ['the HTTP adapter (src/http)', /\/dist\/http\//],
  ['phases and commands (src/core)', /\/dist\/core\//],
  ['capabilities (src/modules)', /\/dist\/modules\//],
  ['rails (src/rails)', /\/dist\/rails\//],
  ['other JavaScript', /./],
];

/** A sample's part: native code (built-ins such as JSON, crypto, the collector) has no file. */
function partOf({ callFrame: { functionName, url } }: ProfileNode): string {
  if (url === '') return functionName === '(garbage collector)' ? 'garbage collection' : 'native code (JSON, crypto, buffers)';
  return PARTS.find(([, pattern]) => pattern.test(url))![0];
}

export interface ProfileSummary {
  /** Samples while the process ran JavaScript or native code (idle excluded). */
  samples: number;
  parts: Array<{ part: string; share: number }>;
  top: Array<{ name: string; share: number }>;
}

/** The profile `node --cpu-prof` wrote into `dir` (the first one), summed by part and by function, idle time left out. */
export async function summarizeProfile(dir: string): Promise<ProfileSummary> {
  const file = (await readdir(dir)).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no CPU profile in ${dir}`);
  const { nodes } = JSON.parse(await readFile(join(dir, file), 'utf8')) as { nodes: ProfileNode[] };
  const busy = nodes.filter((node) => (node.hitCount ?? 0) > 0 && !['(idle)', '(program)', '(root)'].includes(node.callFrame.functionName));
  const samples = busy.reduce((sum, node) => sum + node.hitCount!, 0);
  const share = (hits: number) => Math.round((hits / samples) * 1000) / 10;
  const add = (totals: Map<string, number>, key: string, hits: number) => totals.set(key, (totals.get(key) ?? 0) + hits);
  const parts = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const node of busy) {
    add(parts, partOf(node), node.hitCount!);
    const where = node.callFrame.url.replace(/^.*\/(node_modules|dist)\//, '$1/').replace(/^file:\/\//, '');
    add(functions, `${node.callFrame.functionName || '(anonymous)'} ${where}${where ? `:${node.callFrame.lineNumber + 1}` : ''}`.trim(), node.hitCount!);
  }
  const sorted = (totals: Map<string, number>) => [...totals].sort((a, b) => b[1] - a[1]);
  return {
    samples,
    parts: sorted(parts).map(([part, hits]) => ({ part, share: share(hits) })),
    top: sorted(functions).slice(0, TOP_FUNCTIONS).map(([name, hits]) => ({ name, share: share(hits) })),
  };
}
