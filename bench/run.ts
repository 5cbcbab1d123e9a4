// `npm run bench`: starts the built service as a user would, on both engines, loads it with autocannon, and measures a
// bare Node HTTP server answering JSON in the same run, so every figure is also given as a ratio to that ceiling.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { loadConfig } from '../src/config.js';
import { openPglite, openPostgres, pgliteDb } from '../src/db/db.js';
import type { Db, Traffic } from '../src/db/types.js';
import { createPglite } from '../src/db/pglite/engine.js';
import { migrate } from '../src/db/migrate.js';
import type { Merchant } from '../src/core/merchant.js';
import { listPage, type ListFilter } from '../src/core/pagination.js';
import { Commands } from '../src/core/commands.js';
import { Sealer } from '../src/lib/sealing.js';
import type { TimingsSnapshot } from '../src/lib/timings.js';
import { createSender } from '../src/modules/webhooks/sender.js';
import { WebhooksService } from '../src/modules/webhooks/service.js';
import { presentIntent } from '../src/modules/payments/service.js';
import { INTENT_LIST } from '../src/modules/payments/store.js';
import { createService } from '../src/service.js';
import { benchWebhookFairness } from './webhook-fairness.js';
import { gracefulStopLine, measureGracefulStop } from './graceful-stop.js';
import { summarizeProfile, writesMeter, type ProfileSummary, type Writes } from './attribution.js';
import { addressPrinted, stopChild } from './child-process.js';
import { bindLiveCard, liveAtScaleLine, measureLiveAtScale, startBank } from './live-scale.js';
import { bindCard, fetchCaller, type Caller } from './calls.js';

const DURATION_SECONDS = Number(process.env.BENCH_DURATION_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const POSTGRES_URL = process.env.TOLOV_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');
const METRICS_TOKEN = 'bench-metrics-token-0123456789';
const STARTUP_TIMEOUT_MS = 60_000;
const SEED_ORDERS = 1_000;
const SEED_SLICE = 50_000;
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 5_000);
const DELIVERY_LOOPS = 2;
/** Every measured load runs this long first, unmeasured: a process just started has cold JIT and caches. */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
/** Pairs of POST charge and the direct transaction of its rows, measured one right after the other. */
const RATIO_ROUNDS = Number(process.env.BENCH_RATIO_ROUNDS ?? 5);
/** Steady offered rates of POST charge, as fractions of its own saturated rate: the median of the rounds. */
const PACED_FRACTIONS = (process.env.BENCH_PACED_FRACTIONS ?? '0.25,0.5,0.8').split(',').map(Number).filter((f) => f > 0);
/** SIGTERMs under charge load on each engine, each to a process of its own on a fresh database. */
const STOP_ROUNDS = Number(process.env.BENCH_STOP_ROUNDS ?? 3);
/** Stored payments at which list and balance latency are measured again, seeded in bulk. */
/** API processes sharing one PostgreSQL database in the scale-out scenario. */
const SCALE_OUT_PROCESSES = Number(process.env.BENCH_SCALE_OUT_PROCESSES ?? 2);
const SCALE_STEPS = (process.env.BENCH_SCALE_STEPS ?? '10000,1000000').split(',').map(Number).filter((n) => n > 0);
/** Live mode at scale: clients charging at once, and how long the bank simulator takes to answer each money call. */
const LIVE_CLIENTS = Number(process.env.BENCH_LIVE_CLIENTS ?? 1_000);
const LIVE_BANK_LATENCY_MS = Number(process.env.BENCH_LIVE_BANK_LATENCY_MS ?? 300);

interface Result {
  engine: string;
  scenario: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  /** CPU time per request (ms) of the load's client, the service process and the PostgreSQL server, where measured. */
  cpu?: CpuPerRequest;
  /** Where the service's time went during the load, where asked for. */
  breakdown?: Breakdown;
  /** Pages (buffers) the statement behind the request read, from the database's plan of it, where measured. */
  pagesRead?: number;
}

interface Breakdown {
  timings: TimingsSnapshot;
  /** PostgreSQL's WAL flushes during the load (the whole server's): per request, and their mean time when timed. */
  wal: { syncsPerRequest: number; meanSyncMs: number | null } | null;
  /** What each request wrote to PostgreSQL. */
  writes: Writes | null;
  /** The service's round trips to its database and the statements it ran, per request (its /metrics). */
  traffic: Traffic;
}

/** The service's count of round trips to its database and of statements run, from its /metrics. */
async function databaseTraffic(url: string): Promise<Traffic> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await response.text();
  const counter = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { roundTrips: counter('tolov_db_round_trips_total'), statements: counter('tolov_db_statements_total') };
}

/** PostgreSQL's count of WAL flushes and their total time (ms; 0 unless track_wal_io_timing is on), or null without it. */
async function walSyncs(): Promise<{ syncs: number; syncMs: number } | null> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ wal_sync: string; wal_sync_time: number }>('SELECT wal_sync, wal_sync_time FROM pg_stat_wal');
    return { syncs: Number(rows[0]!.wal_sync), syncMs: Number(rows[0]!.wal_sync_time) };
  } catch {
    return null;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Starts a breakdown of the service at `url` (its timings afresh; on PostgreSQL at `databaseUrl`, what it writes); the
 * returned function reads it for `requests`.
 */
async function startBreakdown(url: string, databaseUrl: string | null): Promise<(requests: number) => Promise<Breakdown>> {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const readWrites = databaseUrl === null ? null : await writesMeter(databaseUrl);
  await fetchCaller(url)('POST', '/admin/v1/timings/reset', {}, admin);
  const postgres = databaseUrl !== null;
  const walBefore = postgres ? await walSyncs() : null;
  const trafficBefore = await databaseTraffic(url);
  return async (requests) => {
    const trafficAfter = await databaseTraffic(url);
    const per = (of: keyof Traffic) => Math.round(((trafficAfter[of] - trafficBefore[of]) / requests) * 100) / 100;
    const timings = (await fetchCaller(url)('GET', '/admin/v1/timings', undefined, admin)) as unknown as TimingsSnapshot;
    const walAfter = postgres ? await walSyncs() : null;
    const wal =
      walBefore && walAfter
        ? {
            syncsPerRequest: Math.round(((walAfter.syncs - walBefore.syncs) / requests) * 100) / 100,
            meanSyncMs: walAfter.syncMs > walBefore.syncMs ? Math.round(((walAfter.syncMs - walBefore.syncMs) / (walAfter.syncs - walBefore.syncs)) * 100) / 100 : null,
          }
        : null;
    return { timings, wal, writes: readWrites ? await readWrites(requests) : null, traffic: { roundTrips: per('roundTrips'), statements: per('statements') } };
  };
}

interface CpuPerRequest {
  client: number;
  service: number;
  postgres: number;
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (ms) a process has used, from /proc; 0 where /proc is not there. */
function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** CPU time (ms) used so far by each PostgreSQL server process on this machine (the server is local). */
function postgresCpuMs(): Map<number, number> {
  const used = new Map<number, number>();
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return used;
  }
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') used.set(Number(pid), processCpuMs(Number(pid)));
    } catch {
      // The process ended meanwhile.
    }
  }
  return used;
}

/**
 * Starts counting CPU time; the returned function gives it per request: this process (the load's client), the
 * service (its pid, if any), and PostgreSQL's processes (backends started meanwhile count from zero). On a 2-core
 * machine the three share the cores, so a rate is bounded by their sum.
 */
function cpuMeter(servicePid?: number): (requests: number) => CpuPerRequest {
  const postgresBefore = postgresCpuMs();
  const serviceBefore = servicePid ? processCpuMs(servicePid) : 0;
  const clientBefore = process.cpuUsage();
  return (requests) => {
    const client = process.cpuUsage(clientBefore);
    let postgres = 0;
    for (const [pid, ms] of postgresCpuMs()) postgres += ms - (postgresBefore.get(pid) ?? 0);
    const per = (ms: number) => Math.round((ms / requests) * 100) / 100;
    return {
      client: per((client.user + client.system) / 1000),
      service: per(servicePid ? processCpuMs(servicePid) - serviceBefore : 0),
      postgres: per(postgres),
    };
  };
}

/** What a load measures besides the client's view: where the CPU went (the service's pid), where its time went. */
interface Measuring {
  servicePid?: number;
  /** The service's address, and its PostgreSQL database's (null on the embedded engine). */
  breakdown?: { url: string; databaseUrl: string | null };
}

/** Loads the service, and measures what `measuring` asks for. */
async function load(name: string, options: autocannon.Options, { servicePid, breakdown }: Measuring = {}): Promise<Omit<Result, 'engine' | 'scenario'>> {
  if (WARMUP_SECONDS > 0) await autocannon({ connections: CONNECTIONS, ...options, duration: WARMUP_SECONDS });
  const readBreakdown = breakdown ? await startBreakdown(breakdown.url, breakdown.databaseUrl) : null;
  // Counted from here: the breakdown's start may wait for the database's statistics.
  const meter = servicePid ? cpuMeter(servicePid) : null;
  const result = await autocannon({ connections: CONNECTIONS, ...options, duration: DURATION_SECONDS });
  process.stderr.write(`  ${name}: ${Math.round(result.requests.average)} req/s\n`);
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    ...(meter ? { cpu: meter(result.requests.total) } : {}),
    ...(readBreakdown ? { breakdown: await readBreakdown(result.requests.total) } : {}),
  };
}

async function bareNode(): Promise<Result> {
  const body = JSON.stringify({ object: 'list', data: [], has_more: false });
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const measured = await load('bare node', { url: `http://127.0.0.1:${address.port}/` });
  server.close();
  return { engine: 'none', scenario: 'bare Node HTTP, JSON', ...measured };
}

const EMULATOR = 'stripe-stateful-mock';
const EMULATOR_SCENARIO = 'POST /v1/charges to a saved card (in-memory Stripe emulator)';

/**
 * The same load against stripe-stateful-mock, an in-memory Stripe emulator (nothing durable): a charge to a customer's
 * saved test card, each request under an idempotency key of its own. A yardstick from outside, measured in this run.
 */
async function stripeEmulator(): Promise<Result> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, [join('node_modules', EMULATOR, 'dist', 'cli.js')], { env: { PATH: process.env.PATH, PORT: String(port), LOG_LEVEL: 'warn' }, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const authorization = `Basic ${Buffer.from('sk_test_bench:').toString('base64')}`;
  try {
    let customer: string | undefined;
    for (let waited = 0; customer === undefined; waited += 100) {
      if (waited > STARTUP_TIMEOUT_MS) throw new Error(`${EMULATOR} did not start`);
      const made = await fetch(`${url}/v1/customers`, { method: 'POST', headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' }, body: 'source=tok_visa' }).catch(() => null);
      if (made?.ok) customer = ((await made.json()) as { id: string }).id;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    let sequence = 0;
    const measured = await load(`${EMULATOR}: POST /v1/charges`, {
      url: `${url}/v1/charges`,
      requests: [
        {
          method: 'POST',
          body: `amount=2500000&currency=usd&customer=${customer}&description=Benchmark+charge`,
          setupRequest: (request) => ({
            ...request,
            headers: { ...request.headers, authorization, 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': `emulator-${++sequence}` },
          }),
        },
      ],
    }, { servicePid: child.pid });
    return { engine: EMULATOR, scenario: EMULATOR_SCENARIO, ...measured };
  } finally {
    await stopChild(child);
  }
}

/** Starts the build in `dir` (this checkout's by default) as `npm start` does (with `nodeArgs`), and waits for its address. */
async function startService(env: Record<string, string>, dir = '.', nodeArgs: string[] = []): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...nodeArgs, join(dir, 'dist/main.js')], {
    // The benchmark is one merchant on purpose; its per-key limit is lifted so that the service, not the limit, is measured.
    env: { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'warn', TOLOV_ADMIN_TOKEN: ADMIN_TOKEN, TOLOV_SECRETS_KEY: SECRETS_KEY, TOLOV_METRICS_TOKEN: METRICS_TOKEN, TOLOV_RATE_LIMIT_KEY_PER_MINUTE: '10000000', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return { url: await addressPrinted(child, /Tolov listening on (http:\/\/\S+)/, 'service'), child };
}


/** Binds the always-succeeding test card, whose SMS code is fixed, and returns its id. */
const bindTestCard = (call: Caller, authorization: string) => bindCard(call, authorization, '998901234567', async () => '111111');

interface BenchProduct {
  id: string;
  name: string;
  scopes: Merchant['scopes'];
  feeBps: number;
  keys: { test: string };
}

/** The benchmark's one merchant, made through the operator API. */
const createBenchProduct = async (call: Caller): Promise<BenchProduct> =>
  (await call('POST', '/admin/v1/products', { name: 'Bench shop' }, { authorization: `Bearer ${ADMIN_TOKEN}` })) as unknown as BenchProduct;

const CHARGE = { amount: 2_500_000, description: 'Benchmark charge', metadata: { plan: 'pro' } };
let chargeSequence = 0;

/** POST charge from CONNECTIONS clients, each request under an idempotency key of its own. */
const chargeLoad = (name: string, url: string, authorization: string, card: string, measuring: Measuring = {}, connections = CONNECTIONS) =>
  load(
    name,
    {
      url: `${url}/subscribe/v1/charges`,
      connections,
      requests: [
        {
          method: 'POST',
          body: JSON.stringify({ ...CHARGE, card }),
          setupRequest: (request) => ({
            ...request,
            headers: { ...request.headers, authorization, 'content-type': 'application/json', 'idempotency-key': `charge-${++chargeSequence}` },
          }),
        },
      ],
    },
    measuring,
  );
const WITHOUT_HTTP = 'the service’s charge without HTTP';
const CHARGE_ROWS = 'direct transaction: a charge’s rows';

async function benchService(engine: string, env: Record<string, string>): Promise<Result[]> {
  process.stderr.write(`${engine}:\n`);
  const { url, child } = await startService(env);
  let product: BenchProduct;
  let card: string;
  const results: Result[] = [];
  try {
    product = await createBenchProduct(fetchCaller(url));
    const authorization = `Bearer ${product.keys.test}`;
    const orderBody = JSON.stringify({ amount: 1_500_000, description: 'Benchmark order', returnUrl: 'https://shop.example.uz/back' });

    // Seed enough orders that the list reads from a real index, not an empty table.
    for (let i = 0; i < SEED_ORDERS; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          fetch(`${url}/merchant/v1/orders`, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json', 'idempotency-key': `seed-${i + j}` },
            body: orderBody,
          }).then((response) => response.arrayBuffer()),
        ),
      );
    }

    card = await bindTestCard(fetchCaller(url), authorization);
    let sequence = 0;
    const createOrders = await load('POST /merchant/v1/orders', {
      url: `${url}/merchant/v1/orders`,
      requests: [
        {
          method: 'POST',
          body: orderBody,
          setupRequest: (request) => ({
            ...request,
            headers: { ...request.headers, authorization, 'content-type': 'application/json', 'idempotency-key': `bench-${++sequence}` },
          }),
        },
      ],
    });
    const listOrders = await load('GET /merchant/v1/orders', {
      url: `${url}/merchant/v1/orders?limit=10`,
      headers: { authorization },
    });
    const createCharges = await chargeLoad('POST /subscribe/v1/charges', url, authorization, card, {
      servicePid: child.pid,
      breakdown: { url, databaseUrl: env.DATABASE_URL ?? null },
    });
    const listCharges = await load('GET /subscribe/v1/charges', { url: `${url}/subscribe/v1/charges?limit=10`, headers: { authorization } });
    const balance = await load('GET /v1/balance', { url: `${url}/v1/balance`, headers: { authorization } });
    results.push(
      { engine, scenario: 'POST /merchant/v1/orders', ...createOrders },
      { engine, scenario: 'GET /merchant/v1/orders?limit=10', ...listOrders },
      { engine, scenario: 'POST /subscribe/v1/charges', ...createCharges },
      { engine, scenario: 'GET /subscribe/v1/charges?limit=10', ...listCharges },
      { engine, scenario: 'GET /v1/balance', ...balance },
    );
  } finally {
    await stopChild(child);
  }
  results.push(...(await benchAtScale(engine, env, product.id, product.keys.test, card)));
  return results;
}

interface ScaleOut {
  processes: number;
  /** Each process's rate and latency, under its share of the connections. */
  each: Omit<Result, 'engine' | 'scenario'>[];
  requestsPerSecond: number;
  /** Whether money was conserved afterwards: the balance equals the succeeded charges' net, one intent per key. */
  conserved: boolean;
  checks: string[];
}

/** Waits (up to 30 s) until a product's charges have stopped changing: none in progress, none added for 250 ms. */
async function settled(db: Db, productId: string): Promise<void> {
  let before = '';
  for (let check = 0; check < 120; check++) {
    const [row] = await db.query<{ intents: string; processing: string }>(
      "SELECT count(*) AS intents, count(*) FILTER (WHERE status = 'PROCESSING') AS processing FROM payment_intents WHERE product_id = $1",
      [productId],
    );
    const now = `${row!.intents}/${row!.processing}`;
    if (Number(row!.processing) === 0 && now === before) return;
    before = now;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const stuck = await db.query("SELECT id, status, created_at, reconcile_after FROM payment_intents WHERE product_id = $1 AND status = 'PROCESSING' LIMIT 5", [productId]);
  throw new Error(`the charges of ${productId} did not settle within 30 s (${before}): ${JSON.stringify(stuck)}`);
}

/**
 * POST charge on SCALE_OUT_PROCESSES services sharing one PostgreSQL database, the connections split between them,
 * all loaded at once; then checks that money was conserved, reading the database and the API.
 */
async function benchScaleOut(databaseUrl: string): Promise<ScaleOut> {
  process.stderr.write(`postgres: POST charge on ${SCALE_OUT_PROCESSES} processes sharing one database\n`);
  const services = [];
  for (let i = 0; i < SCALE_OUT_PROCESSES; i++) services.push(await startService({ DATABASE_URL: databaseUrl }));
  const db = await openPostgres(databaseUrl);
  try {
    const product = await createBenchProduct(fetchCaller(services[0]!.url));
    const authorization = `Bearer ${product.keys.test}`;
    const card = await bindTestCard(fetchCaller(services[0]!.url), authorization);
    const share = Math.max(1, Math.floor(CONNECTIONS / SCALE_OUT_PROCESSES));
    const each = await Promise.all(
      services.map(({ url, child }, i) => chargeLoad(`process ${i + 1}: POST charge`, url, authorization, card, { servicePid: child.pid }, share)),
    );
    // The load's last requests are still being answered when it ends: the check reads a database that has settled.
    await settled(db, product.id);
    const balance = await fetchCaller(services[1 % services.length]!.url)('GET', '/v1/balance', undefined, { authorization });
    const [sums] = await db.query<{ net: string; intents: string; keyed: string; unkeyed: string }>(
      `SELECT (SELECT coalesce(sum(amount - fee), 0) FROM payment_intents WHERE product_id = $1 AND status = 'SUCCEEDED') AS net,
              (SELECT count(*) FROM payment_intents WHERE product_id = $1) AS intents,
              (SELECT count(DISTINCT resource_id) FROM idempotency_keys WHERE product_id = $1 AND resource_id LIKE 'pi_%') AS keyed,
              (SELECT count(*) FROM payment_intents p WHERE product_id = $1
                  AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.product_id = $1 AND k.resource_id = p.id)) AS unkeyed`,
      [product.id],
    );
    const total = Number(balance.available) + Number(balance.pending);
    const checks = [
      `balance ${total} = succeeded net ${sums!.net}`,
      `${sums!.intents} intents, each under one key (${sums!.keyed} keys name one; ${sums!.unkeyed} without)`,
    ];
    const conserved = total === Number(sums!.net) && Number(sums!.intents) === Number(sums!.keyed) && Number(sums!.unkeyed) === 0;
    return { processes: SCALE_OUT_PROCESSES, each, requestsPerSecond: each.reduce((sum, r) => sum + r.requestsPerSecond, 0), conserved, checks };
  } finally {
    await db.close();
    for (const { child } of services) await stopChild(child);
  }
}

/**
 * Pages (buffers, read or found in memory) that a page of the charges list reads, from the database's own account of
 * its statement: the statement `listPage` runs for GET /subscribe/v1/charges (with `filters` as the route makes them
 * from its query), recorded as it runs and then explained with the same values.
 */
async function listPagesRead(db: Db, productId: string, filters: ListFilter[]): Promise<number> {
  const run: { sql: string; params: readonly unknown[] }[] = [];
  const recording = { ...db, query: <Row>(sql: string, params: readonly unknown[] = []) => (run.push({ sql, params }), db.query<Row>(sql, params)) };
  const merchant: Merchant = { actor: { kind: 'api_key', keyId: 'bench' }, productId, productName: 'Bench shop', livemode: false, scopes: ['subscribe'], feeBps: 0, receiptRequired: true, suspended: false };
  await listPage(recording, INTENT_LIST, merchant, { limit: 10 }, presentIntent, filters);
  const [{ sql, params }] = run as [(typeof run)[number]];
  const [row] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
  const explained = row!['QUERY PLAN'];
  const [{ Plan: plan }] = (typeof explained === 'string' ? JSON.parse(explained) : explained) as [{ Plan: Record<string, number> }];
  return plan['Shared Hit Blocks']! + plan['Shared Read Blocks']!;
}

/**
 * List and balance latency as stored payments grow: for each step, the service is stopped, its database is seeded in
 * bulk up to that many payment intents, and the service is started again on the same data and measured.
 */
async function benchAtScale(engine: string, env: Record<string, string>, productId: string, key: string, card: string): Promise<Result[]> {
  const results: Result[] = [];
  for (const target of SCALE_STEPS) {
    let pagesRead = { list: 0, failed: 0 };
    const db = env.DATABASE_URL ? await openPostgres(env.DATABASE_URL) : await openPglite(env.TOLOV_DATA_DIR!);
    try {
      const [{ n, failed }] = (await db.query<{ n: number; failed: number }>(
        "SELECT count(*)::int AS n, (count(*) FILTER (WHERE status = 'FAILED'))::int AS failed FROM payment_intents",
      )) as [{ n: number; failed: number }];
      // One payment in a hundred declined, what a filtered list (?status=FAILED) finds, at every step.
      const failedToAdd = Math.max(0, Math.floor(target / 100) - failed);
      const succeededToAdd = Math.max(0, target - n - failedToAdd);
      if (failedToAdd + succeededToAdd > 0) {
        const started = performance.now();
        // In slices, each well within the database layer's statement timeout.
        for (const [status, count] of [['FAILED', failedToAdd], ['SUCCEEDED', succeededToAdd]] as const) {
          for (let from = 1; from <= count; from += SEED_SLICE) {
            await db.query(
              `INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, failure_code, card_id, rail_token, rail, masked_pan, metadata, succeeded_at)
               SELECT 'pi_seed_' || $5 || '_' || $6 || '_' || lpad(g::text, 8, '0'), $1, false, 1500000, 15000, 'UZS', $5,
                      CASE WHEN $5 = 'FAILED' THEN 'INSUFFICIENT_FUNDS' END, $2, 'seeded', 'uzcard', '860000******0007', '{}', CASE WHEN $5 = 'SUCCEEDED' THEN now() END
                 FROM generate_series($3::int, $4::int) AS g`,
              [productId, card, from, Math.min(count, from + SEED_SLICE - 1), status, target],
            );
          }
        }
        // As after any bulk load: without it, autovacuum would be working through the new rows during the measurement.
        await db.exec('VACUUM ANALYZE payment_intents');
        process.stderr.write(`  seeded ${failedToAdd + succeededToAdd} payments (${failedToAdd} declined) in ${Math.round(performance.now() - started)} ms\n`);
      }
      pagesRead = {
        list: await listPagesRead(db, productId, []),
        failed: await listPagesRead(db, productId, [{ column: 'status', value: 'FAILED' }]),
      };
    } finally {
      await db.close();
    }
    const { url, child } = await startService(env);
    try {
      const authorization = `Bearer ${key}`;
      const list = await load(`GET /subscribe/v1/charges at ${target}`, { url: `${url}/subscribe/v1/charges?limit=10`, headers: { authorization } });
      const filtered = await load(`GET /subscribe/v1/charges?status=FAILED at ${target}`, { url: `${url}/subscribe/v1/charges?limit=10&status=FAILED`, headers: { authorization } });
      const balance = await load(`GET /v1/balance at ${target}`, { url: `${url}/v1/balance`, headers: { authorization } });
      // The first list once more, after the step's other loads: tells what the first one met after the start from what the list costs.
      const listAgain = await load(`GET /subscribe/v1/charges again at ${target}`, { url: `${url}/subscribe/v1/charges?limit=10`, headers: { authorization } });
      results.push(
        { engine, scenario: `GET /subscribe/v1/charges?limit=10 with ${target} payments`, ...list, pagesRead: pagesRead.list },
        { engine, scenario: `GET /subscribe/v1/charges?limit=10&status=FAILED with ${target} payments`, ...filtered, pagesRead: pagesRead.failed },
        { engine, scenario: `GET /v1/balance with ${target} payments`, ...balance },
        { engine, scenario: `GET /subscribe/v1/charges?limit=10 with ${target} payments, again after the balance`, ...listAgain },
      );
    } finally {
      await stopChild(child);
    }
  }
  return results;
}

/** PGlite in the benchmark's own thread, through the service's session layer (named statements): its direct baseline. */
async function pgliteInThisThread(dataDir: string): Promise<Db> {
  return pgliteDb(await createPglite(dataDir));
}

let databases = 0;

async function withPostgresDatabase<T>(run: (url: string) => Promise<T>): Promise<T | null> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  try {
    await admin.connect();
  } catch (error) {
    process.stderr.write(`PostgreSQL at ${POSTGRES_URL} unreachable (${(error as Error).message}): skipped\n`);
    return null;
  }
  const name = `tolov_bench_${Date.now()}_${++databases}`;
  await admin.query(`CREATE DATABASE ${name}`);
  // Times the WAL flushes of this database's sessions, for the breakdown of a charge (a superuser's setting).
  await admin.query(`ALTER DATABASE ${name} SET track_wal_io_timing = on`).catch(() => {});
  try {
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${name}`;
    return await run(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/**
 * Webhook delivery throughput, with nothing else loading the service: DELIVERIES due deliveries are seeded in bulk and
 * DELIVERY_LOOPS worker loops (as the service runs them) drain them into a local receiver that answers 200 at once.
 */
async function benchDeliveries(engine: string, db: Db): Promise<Result> {
  let received = 0;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
  await migrate(db);
  await db.exec(`
    INSERT INTO products (id, name, scopes, fee_bps) VALUES ('prod_bench', 'Bench', '{subscribe}', 100);
    INSERT INTO webhook_endpoints (id, product_id, livemode, url, status, secret)
      VALUES ('we_bench', 'prod_bench', false, '${url}', 'enabled', 'whsec_YmVuY2gtc2VjcmV0LWJlbmNoLXNlY3JldC1iZW5jaC0wMTI=');
    INSERT INTO events (id, product_id, livemode, type, object_id, data)
      SELECT 'evt_bench_' || n, 'prod_bench', false, 'payment_intent.succeeded', 'pi_bench_' || n,
             json_build_object('id', 'pi_bench_' || n, 'object', 'payment_intent', 'amount', 1500000, 'status', 'succeeded')
        FROM generate_series(1, ${DELIVERIES}) AS n;
    INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, next_attempt_at)
      SELECT 'wd_bench_' || n, 'we_bench', 'evt_bench_' || n, 'pending', now() FROM generate_series(1, ${DELIVERIES}) AS n;`);
  const sender = createSender({ timeoutMs: 10_000, allowPrivate: true });
  const settings = { webhookRetryScheduleSeconds: [0, 60], webhookTimeoutMs: 10_000, webhookAllowPrivate: true, webhookEndpointsMax: 16 };
  const sealer = new Sealer(randomBytes(32));
  // Delivering changes nothing a command would: no command runs here, and none is audited.
  const commands = new Commands(db, { record: () => Promise.reject(new Error('the delivery benchmark runs no command')) }, sealer);
  const webhooks = new WebhooksService(db, settings, sender, sealer, commands);
  await webhooks.sealStoredSecrets();
  const started = performance.now();
  const loop = async () => {
    while ((await webhooks.deliverDue(256)) > 0);
  };
  await Promise.all(Array.from({ length: DELIVERY_LOOPS }, loop));
  const seconds = (performance.now() - started) / 1000;
  const [latency] = await db.query<{ p50: number; p99: number; failed: number }>(
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms)::int AS p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms)::int AS p99,
            (SELECT count(*)::int FROM webhook_deliveries WHERE status <> 'succeeded') AS failed
       FROM webhook_attempts`,
  );
  await sender.close();
  receiver.close();
  process.stderr.write(`  webhook deliveries: ${Math.round(received / seconds)}/s\n`);
  return {
    engine,
    scenario: `webhook deliveries (${DELIVERY_LOOPS} loops, attempt latency)`,
    requestsPerSecond: Math.round(received / seconds),
    p50Ms: latency!.p50,
    p99Ms: latency!.p99,
    errors: latency!.failed,
    non2xx: DELIVERIES - received,
  };
}

/** Numbers the direct transactions of the whole run, so that repeated loads on one database never reuse a key. */
let directSequence = 0;

/** Runs `transaction` from CONNECTIONS concurrent clients for the duration; its rate and latency. */
async function directRate(engine: string, scenario: string, transaction: (n: number) => Promise<void>): Promise<Result> {
  const run = async (seconds: number) => {
    const latencies: number[] = [];
    const deadline = performance.now() + seconds * 1000;
    const client = async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        await transaction(++directSequence);
        latencies.push(performance.now() - started);
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, client));
    return latencies;
  };
  await run(WARMUP_SECONDS);
  const meter = cpuMeter();
  const latencies = await run(DURATION_SECONDS);
  const cpu = meter(latencies.length);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!);
  process.stderr.write(`  ${scenario}: ${Math.round(latencies.length / DURATION_SECONDS)}/s\n`);
  return { engine, scenario, requestsPerSecond: Math.round(latencies.length / DURATION_SECONDS), p50Ms: at(0.5), p99Ms: at(0.99), errors: 0, non2xx: 0, cpu };
}

/**
 * The database's own ceiling for a charge: the rows one charge leaves behind (its idempotency key with the stored
 * answer, the intent, the rail's operation, the ledger transaction, its three entries and balance rows, the event),
 * written into the service's own schema in one transaction of plain statements, one per table, through the same
 * database layer by 32 concurrent clients: no HTTP, no service logic, no recovery points.
 */
async function benchChargeRows(engine: string, db: Db): Promise<Result> {
  return directRate(engine, CHARGE_ROWS, await chargeRowsWriter(db));
}

/** Prepares `db` for the direct transaction of a charge's rows and answers that transaction. */
async function chargeRowsWriter(db: Db): Promise<(n: number) => Promise<void>> {
  await migrate(db);
  await db.exec(`
    INSERT INTO products (id, name, scopes, fee_bps) VALUES ('prod_direct', 'Direct', '{subscribe}', 100);
    INSERT INTO test_rail_cards (token, network, behaviour) VALUES ('tr_direct', 'uzcard', 'succeeds');
    INSERT INTO cards (id, product_id, livemode, status, rail, rail_token, masked_pan, expiry)
      VALUES ('card_direct', 'prod_direct', false, 'ACTIVE', 'uzcard', 'tr_direct', '860000******0007', '12/30');`);
  const answer = (id: string) =>
    JSON.stringify({ id, object: 'payment_intent', amount: 2_500_000, fee: 25_000, currency: 'UZS', status: 'SUCCEEDED', failureCode: null,
      rail: 'uzcard', card: 'card_direct', maskedPan: '860000******0007', order: null, description: 'Benchmark charge', metadata: { plan: 'pro' }, amountRefunded: 0,
      livemode: false, created: new Date().toISOString() });
  const hash = Buffer.alloc(32, 7);
  return (n) =>
    db.transaction(async (tx) => {
      const intent = `pi_direct_${n}`;
      const body = answer(intent);
      await tx.query(
        `INSERT INTO idempotency_keys (product_id, livemode, key, request_method, request_path, request_hash, recovery_point, resource_id,
                                       response_status, response_body)
         VALUES ('prod_direct', false, $1, 'POST', '/subscribe/v1/charges', $2, 'finished', $3, 201, $4)`,
        [`direct-${n}`, hash, intent, body],
      );
      await tx.query(
        `INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, rail_token, rail, masked_pan, description, metadata,
                                      succeeded_at)
         VALUES ($1, 'prod_direct', false, 2500000, 25000, 'UZS', 'SUCCEEDED', 'card_direct', 'tr_direct', 'uzcard', '860000******0007', 'Benchmark charge',
                 '{"plan":"pro"}', now())`,
        [intent],
      );
      await tx.query(
        `INSERT INTO test_rail_operations (operation_id, type, token, amount, status) VALUES ($1, 'debit', 'tr_direct', 2500000, 'SUCCEEDED')`,
        [intent],
      );
      await tx.query(
        `INSERT INTO ledger_transactions (id, product_id, livemode, reason, reference_id) VALUES ($1, 'prod_direct', false, 'payment_succeeded', $2)`,
        [`ltx_direct_${n}`, intent],
      );
      await tx.query(
        `INSERT INTO ledger_entries (transaction_id, product_id, livemode, account, amount)
         VALUES ($1, 'prod_direct', false, 'rail_clearing', -2500000), ($1, 'prod_direct', false, 'merchant_pending', 2475000),
                ($1, 'prod_direct', false, 'platform_fees', 25000)`,
        [`ltx_direct_${n}`],
      );
      await tx.query(
        `INSERT INTO ledger_balances (product_id, livemode, account, shard, amount)
         VALUES ('prod_direct', false, 'merchant_pending', $1, 2475000), ('prod_direct', false, 'platform_fees', $1, 25000),
                ('prod_direct', false, 'rail_clearing', $1, -2500000)
         ON CONFLICT (product_id, livemode, account, shard) DO UPDATE SET amount = ledger_balances.amount + EXCLUDED.amount`,
        [n % 16],
      );
      await tx.query(
        `INSERT INTO events (id, product_id, livemode, type, object_id, data) VALUES ($1, 'prod_direct', false, 'payment_intent.succeeded', $2, $3)`,
        [`evt_direct_${n}`, intent, body],
      );
    });
}

/**
 * The service's own charge without HTTP: the command POST /subscribe/v1/charges runs (`payments.charge`: key, intent,
 * rail, outcome, ledger, event), called in this process by 32 concurrent loops.
 * Between it and the direct rows lies the cost of the charge's design (the key's claim, the phases' transactions and
 * their recovery points, the test rail's record); between it and POST charge, the cost
 * of HTTP (Node's server, Fastify, the load's client on the same two cores).
 */
async function benchChargeWithoutHttp(engine: string, db: Db): Promise<Result> {
  const service = await createService(loadConfig({ TOLOV_ADMIN_TOKEN: ADMIN_TOKEN, TOLOV_SECRETS_KEY: SECRETS_KEY, LOG_LEVEL: 'warn' }), { db });
  try {
    return await directRate(engine, WITHOUT_HTTP, await inProcessCharger(service, db));
  } finally {
    await service.app.close();
  }
}

/**
 * A new product of `service` with a bound test card, and its charge as POST /subscribe/v1/charges runs it, without HTTP:
 * `charge(n)` under key n, answered 201 or thrown. `description` replaces the charge's own.
 */
async function inProcessCharger(service: Awaited<ReturnType<typeof createService>>, db: Db, description = CHARGE.description) {
  const call: Caller = async (method, path, body, headers = {}) =>
    (await service.app.inject({ method, url: path, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) })).json();
  const product = await createBenchProduct(call);
  const body = { ...CHARGE, description, card: await bindTestCard(call, `Bearer ${product.keys.test}`) };
  // What authentication would make of the product's test key.
  const merchant: Merchant = {
    actor: { kind: 'api_key', keyId: 'bench' },
    productId: product.id,
    productName: product.name,
    livemode: false,
    scopes: product.scopes,
    feeBps: product.feeBps,
    receiptRequired: true,
    suspended: false,
  };
  const request = { id: 'req_bench', method: 'POST', path: '/subscribe/v1/charges', body };
  return async (n: number) => {
    const answer = await service.payments.charge({ scope: merchant, key: `direct-${n}`, request }, body);
    if (answer.status !== 201) throw new Error(`charge without HTTP answered ${answer.status}: ${answer.json}`);
  };
}

const POISONED_PER_SECOND = 20;
const QUIET = 'charge without HTTP, one product alone';
const BESIDE_POISON = `charge without HTTP, beside another product's ${POISONED_PER_SECOND} failing charges/s`;

/**
 * One product's charges, without HTTP, alone and then beside another product whose charges fail in the database
 * (text PostgreSQL refuses, sent past the HTTP layer's validation, as any cause of a failing write would be): what
 * they cost the other product, which shares the database and the process with them, is the ratio of the two rates.
 */
async function benchPoisonedGroups(engine: string, db: Db): Promise<Result[]> {
  const service = await createService(loadConfig({ TOLOV_ADMIN_TOKEN: ADMIN_TOKEN, TOLOV_SECRETS_KEY: SECRETS_KEY, LOG_LEVEL: 'silent' }), { db });
  try {
    const charge = await inProcessCharger(service, db);
    const poisoned = await inProcessCharger(service, db, 'refused by the database \u0000');
    const quiet = await directRate(engine, QUIET, charge);
    let poisoning = true;
    let written = 0;
    const poisoner = (async () => {
      while (poisoning) {
        await new Promise((resolve) => setTimeout(resolve, 1000 / POISONED_PER_SECOND));
        void poisoned(++directSequence).then(
          () => (written += 1),
          () => {},
        );
      }
    })();
    const beside = await directRate(engine, BESIDE_POISON, charge);
    poisoning = false;
    await poisoner;
    if (written > 0) throw new Error(`${written} charges the database should refuse were written`);
    return [quiet, beside];
  } finally {
    await service.app.close();
  }
}

interface Paced {
  fraction: number;
  offered: number;
  achieved: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

interface ChargeRatio {
  engine: string;
  rounds: { charge: Result; direct: Result }[];
  paced: Paced[];
  /** The direct transaction of a charge's rows offered at the same rates: the database's own latency at them. */
  directPaced: Paced[];
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const ratioOf = (round: ChargeRatio['rounds'][number]) => round.charge.requestsPerSecond / round.direct.requestsPerSecond;

/**
 * The target's ratio in rounds: POST charge on a service started on `env`, then the direct transaction of a charge's
 * rows on `direct`, a database of its own, one right after the other, RATIO_ROUNDS times. On this machine a scenario
 * measured again minutes later differs by up to a third, so a ratio of two loads run minutes apart says little; the
 * median of the rounds, each pair seconds apart, is the figure the targets are checked against.
 */
async function benchChargeRatio(engine: string, env: Record<string, string>, direct: Db): Promise<ChargeRatio> {
  process.stderr.write(`${engine}: POST charge against a charge's rows, ${RATIO_ROUNDS} rounds\n`);
  const writeRows = await chargeRowsWriter(direct);
  const { url, child } = await startService(env);
  const rounds: ChargeRatio['rounds'] = [];
  const paced: Paced[] = [];
  const directPaced: Paced[] = [];
  try {
    const product = await createBenchProduct(fetchCaller(url));
    const authorization = `Bearer ${product.keys.test}`;
    const card = await bindTestCard(fetchCaller(url), authorization);
    for (let round = 1; round <= RATIO_ROUNDS; round++) {
      const charge = { engine, scenario: 'POST /subscribe/v1/charges', ...(await chargeLoad(`round ${round}: POST charge`, url, authorization, card, { servicePid: child.pid })) };
      rounds.push({ charge, direct: await directRate(engine, CHARGE_ROWS, writeRows) });
    }
    const saturated = median(rounds.map((round) => round.charge.requestsPerSecond));
    for (const fraction of PACED_FRACTIONS) {
      const rate = Math.round(fraction * saturated);
      paced.push(await pacedChargeLoad(url, authorization, card, fraction, rate));
      directPaced.push(await pacedLoad(CHARGE_ROWS, fraction, rate, () => writeRows(++directSequence).then(() => true)));
    }
  } finally {
    await stopChild(child);
  }
  return { engine, rounds, paced, directPaced };
}

/** The rounds and paced loads on PGlite: the service on disk, the direct transaction on an engine in this thread. */
async function pgliteChargeRatio(): Promise<ChargeRatio> {
  const serviceDir = await mkdtemp(join(tmpdir(), 'tolov-bench-ratio-'));
  const directDir = await mkdtemp(join(tmpdir(), 'tolov-bench-ratio-direct-'));
  try {
    const direct = await pgliteInThisThread(directDir);
    try {
      return await benchChargeRatio('pglite', { TOLOV_DATA_DIR: serviceDir }, direct);
    } finally {
      await direct.close();
    }
  } finally {
    await rm(serviceDir, { recursive: true, force: true });
    await rm(directDir, { recursive: true, force: true });
  }
}

/** The rounds and paced loads on PostgreSQL, the service and the direct transaction each on a fresh database. */
function postgresChargeRatio(): Promise<ChargeRatio | null> {
  return withPostgresDatabase((serviceUrl) =>
    withPostgresDatabase(async (directUrl) => {
      const direct = await openPostgres(directUrl);
      try {
        return await benchChargeRatio('postgres', { DATABASE_URL: serviceUrl }, direct);
      } finally {
        await direct.close();
      }
    }),
  );
}

/**
 * BENCH_ONLY=cpu: CPU per charge (client + service + database, the median of the rounds) against the emulator's with its
 * client, the same for the direct transaction of a charge's rows (what the database alone costs for what a charge
 * keeps, below which no design of the service can go), and POST charge offered at fractions of its own saturated rate.
 */
async function cpuLines(): Promise<string[]> {
  const emulator = await stripeEmulator();
  const ratios = [await pgliteChargeRatio(), ...[await postgresChargeRatio()].filter((ratio) => ratio !== null)];
  const emulatorCpu = Number(cpuTotal(emulator.cpu));
  return [
    `${EMULATOR}: ${emulator.requestsPerSecond} charges/s, ${emulatorCpu.toFixed(2)} ms of CPU per charge with its client`,
    ...ratios.flatMap((ratio) => {
      const cpu = median(ratio.rounds.map((round) => Number(cpuTotal(round.charge.cpu))));
      const floor = median(ratio.rounds.map((round) => Number(cpuTotal(round.direct.cpu))));
      const rate = median(ratio.rounds.map((round) => round.charge.requestsPerSecond));
      const paced = (loads: Paced[]) =>
        loads.map((p) => `${p.fraction} × = ${p.offered}/s offered → ${p.achieved}/s: p50 ${p.p50Ms} ms, p99 ${p.p99Ms} ms${p.non2xx ? `, ${p.non2xx} non-2xx` : ''}`).join('; ');
      return [
        `${ratio.engine}: POST charge ${rate}/s (${(rate / emulator.requestsPerSecond).toFixed(2)} × the emulator's), ${cpu.toFixed(2)} ms of CPU per charge: ` +
          `${(cpu / emulatorCpu).toFixed(2)} × the emulator's (rounds: ${ratio.rounds.map((round) => cpuTotal(round.charge.cpu)).join(', ')} ms)`,
        `${ratio.engine}: ${CHARGE_ROWS}, the database's floor for any charge: ${floor.toFixed(2)} ms of CPU per charge: ` +
          `${(floor / emulatorCpu).toFixed(2)} × the emulator's (rounds: ${ratio.rounds.map((round) => cpuTotal(round.direct.cpu)).join(', ')} ms)`,
        `${ratio.engine}: offered at a fraction of its own saturated rate: ${paced(ratio.paced)}`,
        `${ratio.engine}: ${CHARGE_ROWS}, offered at the same rates: ${paced(ratio.directPaced)}`,
      ];
    }),
  ];
}

/**
 * `send` at a steady offered rate, one call every 1/rate seconds whatever the answers before it: the latency a client
 * sees when the system is not saturated. Each latency runs from the moment its call was due, so a call made late
 * because the load's own process fell behind still counts whole. `send` answers whether the call succeeded.
 */
async function pacedLoad(label: string, fraction: number, rate: number, send: () => Promise<boolean>): Promise<Paced> {
  const run = async (seconds: number) => {
    const latencies: number[] = [];
    let non2xx = 0;
    const count = Math.round(rate * seconds);
    const started = performance.now();
    const sent: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const due = started + (i * 1000) / rate;
      const early = due - performance.now();
      if (early > 1) await new Promise((resolve) => setTimeout(resolve, early));
      sent.push(
        send().then((succeeded) => {
          if (!succeeded) non2xx += 1;
          latencies.push(performance.now() - due);
        }),
      );
    }
    await Promise.all(sent);
    return { latencies, non2xx, achieved: count / ((performance.now() - started) / 1000) };
  };
  await run(WARMUP_SECONDS);
  const { latencies, non2xx, achieved } = await run(DURATION_SECONDS);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!);
  process.stderr.write(`  ${label} at ${rate}/s offered: p99 ${at(0.99)} ms\n`);
  return { fraction, offered: rate, achieved: Math.round(achieved), p50Ms: at(0.5), p99Ms: at(0.99), non2xx };
}

/** POST charge at a steady offered rate over up to CONNECTIONS connections (`pacedLoad`). */
async function pacedChargeLoad(url: string, authorization: string, card: string, fraction: number, rate: number): Promise<Paced> {
  const pool = new Pool(url, { connections: CONNECTIONS });
  const body = JSON.stringify({ ...CHARGE, card });
  try {
    return await pacedLoad('POST charge', fraction, rate, async () => {
      const headers = { authorization, 'content-type': 'application/json', 'idempotency-key': `paced-${++chargeSequence}` };
      const response = await pool.request({ path: '/subscribe/v1/charges', method: 'POST', headers, body });
      await response.body.dump();
      return response.statusCode === 201;
    });
  } finally {
    await pool.close();
  }
}

/** A smaller reference: a locking select and four inserts into a table of four columns (the baseline until 2026-11-22). */
async function benchSmallTransactions(engine: string, db: Db): Promise<Result> {
  await db.exec(`
    CREATE TABLE bench_accounts (id integer PRIMARY KEY, balance bigint NOT NULL);
    INSERT INTO bench_accounts SELECT n, 0 FROM generate_series(0, 255) AS n;
    CREATE TABLE bench_rows (id bigserial PRIMARY KEY, account integer NOT NULL, amount bigint NOT NULL, note text NOT NULL,
                             created_at timestamptz NOT NULL DEFAULT now());`);
  return directRate(engine, 'direct transaction: 1 locking select + 4 small inserts', () =>
    db.transaction(async (tx) => {
      const account = Math.floor(Math.random() * 256);
      await tx.query('SELECT balance FROM bench_accounts WHERE id = $1 FOR UPDATE', [account]);
      for (let i = 0; i < 4; i++) {
        await tx.query('INSERT INTO bench_rows (account, amount, note) VALUES ($1, $2, $3)', [account, 1_500_000, 'charge-sized transaction']);
      }
    }),
  );
}

const cpuTotal = (cpu: CpuPerRequest | undefined) => (cpu ? (cpu.client + cpu.service + cpu.postgres).toFixed(2) : '?');

/** POST charge's goal against the emulator's rate, per engine. */
const GOAL_VS_EMULATOR: Record<string, number> = { postgres: 1.25, pglite: 0.6 };

/**
 * What the goal leaves a charge of the machine's CPU: the load's client, the service and the database share its cores,
 * so a rate of R charges/s is out of reach for a charge that costs more than cores / R of CPU in all.
 */
function cpuBudgetLine(engine: string, charges: Result, emulator: Result): string {
  const cores = availableParallelism();
  const goal = Math.round(GOAL_VS_EMULATOR[engine]! * emulator.requestsPerSecond);
  const budgetMs = ((cores * 1000) / goal).toFixed(2);
  return (
    `${engine}: the goal, ${GOAL_VS_EMULATOR[engine]} × the emulator = ${goal} charges/s, leaves ${budgetMs} ms of CPU per charge ` +
    `on ${cores} cores; a charge used ${cpuTotal(charges.cpu)} ms (the emulator's, with its client: ${cpuTotal(emulator.cpu)} ms)`
  );
}

/** What another product's failing charges cost a product's charges, per engine. */
function poisonLines(results: Result[]): string[] {
  return ['pglite', 'postgres'].flatMap((engine) => {
    const quiet = results.find((r) => r.engine === engine && r.scenario === QUIET);
    const beside = results.find((r) => r.engine === engine && r.scenario === BESIDE_POISON);
    if (!quiet || !beside) return [];
    return [
      `${engine}: a product's charges beside another product's ${POISONED_PER_SECOND} failing charges/s = ` +
        `${(beside.requestsPerSecond / quiet.requestsPerSecond).toFixed(2)} × its rate alone (${beside.requestsPerSecond} vs ${quiet.requestsPerSecond}/s; ` +
        `p99 ${beside.p99Ms} vs ${quiet.p99Ms} ms)`,
    ];
  });
}

/** The scale-out scenario, against one process's rate on PostgreSQL and the emulator's, in this run. */
function scaleOutLines(scaleOut: ScaleOut, results: Result[]): string[] {
  const one = results.find((r) => r.engine === 'postgres' && r.scenario === 'POST /subscribe/v1/charges');
  const emulator = results.find((r) => r.engine === EMULATOR);
  const against = [one && `${(scaleOut.requestsPerSecond / one.requestsPerSecond).toFixed(2)} × one process`, emulator && `${(scaleOut.requestsPerSecond / emulator.requestsPerSecond).toFixed(2)} × ${EMULATOR}`];
  return [
    `postgres: POST charge on ${scaleOut.processes} processes sharing one database, ${CONNECTIONS} connections split between them: ` +
      `${scaleOut.requestsPerSecond} req/s together (${against.filter(Boolean).join(', ')}); ` +
      scaleOut.each.map((r, i) => `process ${i + 1}: ${r.requestsPerSecond} req/s, p50 ${r.p50Ms} / p99 ${r.p99Ms} ms, ${r.non2xx} non-2xx`).join('; '),
    `  money conserved: ${scaleOut.conserved ? 'yes' : 'NO'} (${scaleOut.checks.join('; ')})`,
  ];
}

/** What a charge wrote to PostgreSQL. */
function writesLine(writes: Writes): string {
  const statements = writes.statements === null ? 'statements not counted (pg_stat_statements is not loaded)' : `${writes.statements} statements`;
  return (
    `  PostgreSQL, per charge: ${writes.transactions} transactions, ${statements}, ${writes.rows} rows and ${writes.indexEntries} entries in full indexes ` +
    `written, ${writes.walRecords} WAL records, ${Math.round(writes.walBytes)} WAL bytes`
  );
}

interface Profiled {
  engine: string;
  requestsPerSecond: number;
  cpu: CpuPerRequest;
  profile: ProfileSummary;
}

/**
 * POST charge on a service run under `node --cpu-prof` on `env`: where the service's CPU went, by part of the code and
 * by function. The profile covers the process's whole life, its start-up included, which the load's seconds outweigh.
 */
async function benchProfile(engine: string, env: Record<string, string>): Promise<Profiled> {
  const dir = await mkdtemp(join(tmpdir(), 'tolov-bench-profile-'));
  try {
    const { url, child } = await startService(env, '.', ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    let measured: Awaited<ReturnType<typeof chargeLoad>>;
    try {
      const authorization = `Bearer ${(await createBenchProduct(fetchCaller(url))).keys.test}`;
      const card = await bindTestCard(fetchCaller(url), authorization);
      measured = await chargeLoad(`${engine}: POST charge under the CPU profiler`, url, authorization, card, { servicePid: child.pid });
    } finally {
      await stopChild(child);
    }
    return { engine, requestsPerSecond: measured.requestsPerSecond, cpu: measured.cpu!, profile: await summarizeProfile(dir) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Each engine's service profiled under POST charge, on fresh storage. */
async function profileOnEachEngine(): Promise<Profiled[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tolov-bench-profiled-'));
  const profiled: Profiled[] = [];
  try {
    profiled.push(await benchProfile('pglite', { TOLOV_DATA_DIR: dataDir }));
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  const postgres = await withPostgresDatabase((url) => benchProfile('postgres', { DATABASE_URL: url }));
  return postgres ? [...profiled, postgres] : profiled;
}

/** BENCH_ONLY=attribution: POST charge on PostgreSQL with its breakdown (what each charge writes), and the profiles. */
async function attributionLines(): Promise<string[]> {
  const charge = await withPostgresDatabase(async (databaseUrl) => {
    const { url, child } = await startService({ DATABASE_URL: databaseUrl });
    try {
      const authorization = `Bearer ${(await createBenchProduct(fetchCaller(url))).keys.test}`;
      const card = await bindTestCard(fetchCaller(url), authorization);
      const measured = await chargeLoad('POST charge', url, authorization, card, { servicePid: child.pid, breakdown: { url, databaseUrl } });
      return { engine: 'postgres', scenario: 'POST /subscribe/v1/charges', ...measured };
    } finally {
      await stopChild(child);
    }
  });
  return [...breakdownLines(charge ? [charge] : []), ...profileLines(await profileOnEachEngine())];
}

function profileLines(profiled: Profiled[]): string[] {
  return profiled.flatMap(({ engine, requestsPerSecond, cpu, profile }) => [
    `${engine}: the service's CPU under POST charge, ${requestsPerSecond}/s under the profiler, ${cpu.service} ms of it per charge ` +
      `(${profile.samples} samples, start-up included), by part of the code:`,
    ...profile.parts.map(({ part, share }) => `  ${share}% ${part}`),
    `${engine}: the functions it spent most in (self time):`,
    ...profile.top.map(({ name, share }) => `  ${share}% ${name}`),
  ]);
}

/** Where a charge's time went in the service, under the load of the main table, per engine. */
function breakdownLines(results: Result[]): string[] {
  return results.flatMap((result) => {
    if (!result.breakdown) return [];
    const { timings, wal } = result.breakdown;
    const loop = timings.eventLoopDelay;
    return [
      `${result.engine}: where a ${result.scenario} took its time at ${CONNECTIONS} connections (ms: mean, p50, p99; count):`,
      ...timings.series.map((series) => `  ${series.name}: ${series.meanMs}, ${series.p50Ms}, ${series.p99Ms}; ${series.count}`),
      `  event loop delay: p50 ${loop.p50Ms}, p99 ${loop.p99Ms}, max ${loop.maxMs}`,
      `  the service's database traffic, per charge: ${result.breakdown.traffic.roundTrips} round trips, ${result.breakdown.traffic.statements} statements`,
      ...(wal ? [`  PostgreSQL WAL flushes: ${wal.syncsPerRequest} per charge${wal.meanSyncMs === null ? '' : `, ${wal.meanSyncMs} ms each`}`] : []),
      ...(result.breakdown.writes ? [writesLine(result.breakdown.writes)] : []),
    ];
  });
}

function report(results: Result[], ratios: ChargeRatio[]): string {
  const bare = results.find((result) => result.engine === 'none')!;
  const ratioToDirect = (engine: string) => {
    const charges = results.find((r) => r.engine === engine && r.scenario === 'POST /subscribe/v1/charges');
    const direct = results.filter((r) => r.engine === engine && r.scenario.startsWith('direct transaction'));
    const withoutHttp = results.find((r) => r.engine === engine && r.scenario === WITHOUT_HTTP);
    if (!charges) return null;
    const ratio = (of: Result, to: Result) => `${(of.requestsPerSecond / to.requestsPerSecond).toFixed(2)} × ${to.scenario}`;
    const emulator = results.find((r) => r.engine === EMULATOR);
    return [
      ...(emulator ? [`${engine}: POST charge = ${ratio(charges, emulator)} (p99 ${charges.p99Ms} vs ${emulator.p99Ms} ms)`, cpuBudgetLine(engine, charges, emulator)] : []),
      ...[...direct, ...(withoutHttp ? [withoutHttp] : [])].map((d) => `${engine}: POST charge = ${ratio(charges, d)}`),
      ...(withoutHttp && direct[0] ? [`${engine}: the service’s charge without HTTP = ${ratio(withoutHttp, direct[0])}`] : []),
      `${engine}: CPU per charge ${cpuTotal(charges.cpu)} ms, without HTTP ${cpuTotal(withoutHttp?.cpu)} ms, ` +
        `per direct transaction of a charge's rows ${cpuTotal(direct[0]?.cpu)} ms`,
    ].join('\n');
  };
  const lines = [
    `Tolov benchmark — ${new Date().toISOString()} — ${CONNECTIONS} connections, ${DURATION_SECONDS} s per scenario, node ${process.version}`,
    '',
    '| engine | scenario | req/s | p50 ms | p99 ms | vs bare Node | errors | non-2xx | CPU ms/request: client + service + PostgreSQL |',
    '|---|---|---:|---:|---:|---:|---:|---:|---|',
    ...results.map(
      (r) =>
        `| ${r.engine} | ${r.scenario} | ${r.requestsPerSecond} | ${r.p50Ms} | ${r.p99Ms} | ${(r.requestsPerSecond / bare.requestsPerSecond).toFixed(3)} | ${r.errors} | ${r.non2xx} | ${r.cpu ? `${r.cpu.client} + ${r.cpu.service} + ${r.cpu.postgres}` : ''} |`,
    ),
    '',
    ...(['pglite', 'postgres'].map(ratioToDirect).filter(Boolean) as string[]),
    '',
    'Pages (buffers) the statement of a page of a list read, from its plan:',
    ...results.filter((r) => r.pagesRead !== undefined).map((r) => `${r.engine}: ${r.scenario}: ${r.pagesRead}`),
    '',
    ...breakdownLines(results),
    '',
    ...poisonLines(results),
    '',
    `POST charge against the direct transaction of a charge's rows, in rounds of one load each right after the other ` +
      `(req/s; p99 ms of POST charge and of the direct transaction; CPU ms per request, all processes, of each):`,
    ...ratios.map(
      (ratio) =>
        `${ratio.engine}: median ${median(ratio.rounds.map(ratioOf)).toFixed(2)} × (` +
        ratio.rounds
          .map(
            (round) =>
              `${round.charge.requestsPerSecond} ÷ ${round.direct.requestsPerSecond} = ${ratioOf(round).toFixed(2)}, ` +
              `p99 ${round.charge.p99Ms} (direct ${round.direct.p99Ms}), ` +
              `CPU ${cpuTotal(round.charge.cpu)} vs ${cpuTotal(round.direct.cpu)}`,
          )
          .join('; ') +
        ')',
    ),
    '',
    `POST charge at a steady offered rate, a fraction of its own saturated rate (the median of the rounds; req/s offered → answered; p50 / p99 ms):`,
    ...ratios.map(
      (ratio) =>
        `${ratio.engine}: ` +
        ratio.paced
          .map((paced) => `${paced.fraction} × = ${paced.offered} → ${paced.achieved}, ${paced.p50Ms} / ${paced.p99Ms}${paced.non2xx ? `, ${paced.non2xx} non-2xx` : ''}`)
          .join('; '),
    ),
  ];
  return lines.join('\n');
}

/** Seconds of each half of the webhook fairness scenario. */
const FAIRNESS_SECONDS = Number(process.env.BENCH_FAIRNESS_SECONDS ?? 10);

/** `measure` on each engine, in the service's own setting: PGlite on disk, and a fresh PostgreSQL database when reachable. */
async function onEachEngine<T>(measure: (engine: string, db: Db) => Promise<T>): Promise<T[]> {
  const dir = await mkdtemp(join(tmpdir(), 'tolov-bench-engine-'));
  const lite = await openPglite(dir);
  let measured: T[];
  try {
    measured = [await measure('pglite', lite)];
  } finally {
    await lite.close();
    await rm(dir, { recursive: true, force: true });
  }
  const postgres = await withPostgresDatabase(async (url) => {
    const db = await openPostgres(url);
    try {
      return await measure('postgres', db);
    } finally {
      await db.close();
    }
  });
  return postgres === null ? measured : [...measured, postgres];
}

/** The webhook fairness scenario on each engine, as report lines. */
function webhookFairnessOnEachEngine(): Promise<string[]> {
  return onEachEngine(async (engine, db) => {
    const { quiet, beside } = await benchWebhookFairness(db, FAIRNESS_SECONDS);
    return (
      `${engine}: a product's webhook latency beside another's 16 black-holed endpoints: p99 ${beside.p99Ms} ms vs ${quiet.p99Ms} ms alone ` +
      `(${(beside.p99Ms / quiet.p99Ms).toFixed(2)} ×; p50 ${beside.p50Ms} vs ${quiet.p50Ms} ms; ${beside.delivered} and ${quiet.delivered} delivered)`
    );
  });
}

/** The failing-charges scenario on each engine. */
async function poisonedGroupsOnEachEngine(): Promise<Result[]> {
  return (await onEachEngine(benchPoisonedGroups)).flat();
}

/** Where `BENCH_BASELINE_REF` is built: a worktree of that commit, with this checkout's dependencies. */
async function buildBaseline(ref: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tolov-bench-baseline-'));
  await runCommand('git', ['worktree', 'add', '--detach', dir, ref]);
  await symlink(resolve('node_modules'), join(dir, 'node_modules'));
  await runCommand(process.execPath, [resolve('node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], dir);
  await runCommand(process.execPath, ['scripts/copy-assets.mjs'], dir);
  return dir;
}

function runCommand(command: string, args: string[], cwd = '.'): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('exit', (code) => (code === 0 ? done() : fail(new Error(`${command} ${args.join(' ')} exited with ${code}`))));
  });
}

/** POST charge on one engine against the build in `dir`, on a fresh product and card. */
async function chargeRate(env: Record<string, string>, dir: string): Promise<Omit<Result, 'engine' | 'scenario'>> {
  const { url, child } = await startService(env, dir);
  try {
    const product = await createBenchProduct(fetchCaller(url));
    const authorization = `Bearer ${product.keys.test}`;
    const card = await bindTestCard(fetchCaller(url), authorization);
    return await chargeLoad('POST /subscribe/v1/charges', url, authorization, card, { servicePid: child.pid });
  } finally {
    await stopChild(child);
  }
}

/** Each side's best of RATIO_ROUNDS rounds of POST charge, the sides alternating round by round so that all meet the same machine. */
async function bestOfAlternating<Side extends string>(sides: Record<Side, () => Promise<Omit<Result, 'engine' | 'scenario'> | null>>): Promise<Record<Side, { rate: number; cpu: number }>> {
  const names = Object.keys(sides) as Side[];
  const best = Object.fromEntries(names.map((side) => [side, { rate: 0, cpu: Infinity }])) as Record<Side, { rate: number; cpu: number }>;
  for (let round = 0; round < RATIO_ROUNDS; round++) {
    for (const side of names) {
      const measured = await sides[side]();
      if (!measured) continue;
      // The highest rate, and the least CPU per charge (client + service + database).
      best[side] = { rate: Math.max(best[side].rate, measured.requestsPerSecond), cpu: Math.min(best[side].cpu, Number(cpuTotal(measured.cpu))) };
    }
  }
  return best;
}

/** How `measured` compares with `against`, in rate and in CPU per charge. */
const comparedLine = (measured: { rate: number; cpu: number }, against: { rate: number; cpu: number }) =>
  `POST charge ${measured.rate}/s against ${against.rate}/s: ${(measured.rate / against.rate).toFixed(2)} ×; ` +
  `CPU per charge ${measured.cpu.toFixed(2)} ms against ${against.cpu.toFixed(2)} ms: ${(measured.cpu / against.cpu).toFixed(2)} ×`;

/**
 * POST charge of this checkout against `BENCH_BASELINE_REF`, on both engines, alternating the two builds round by round
 * (each on a fresh database).
 */
async function baselineLines(ref: string): Promise<string[]> {
  const dir = await buildBaseline(ref);
  const lines: string[] = [];
  try {
    for (const engine of ['pglite', 'postgres'] as const) {
      const best = await bestOfAlternating({
        head: () => onFreshDatabase(engine, (env) => chargeRate(env, '.')),
        base: () => onFreshDatabase(engine, (env) => chargeRate(env, dir)),
      });
      if (best.base.rate > 0) lines.push(`${engine}: at ${ref}: ${comparedLine(best.head, best.base)}`);
    }
  } finally {
    await runCommand('git', ['worktree', 'remove', '--force', dir]);
  }
  return lines;
}

/**
 * BENCH_ONLY=socket: POST charge on PostgreSQL on this machine reached through its Unix socket (in
 * BENCH_POSTGRES_SOCKET_DIR) against TCP, alternating round by round, each on a fresh database.
 */
async function socketLines(): Promise<string[]> {
  const socketDir = process.env.BENCH_POSTGRES_SOCKET_DIR ?? '/var/run/postgresql';
  if (!existsSync(socketDir)) return [`postgres: no socket folder at ${socketDir}: the socket scenario is skipped`];
  const viaSocket = (url: string) => {
    const through = new URL(url);
    through.searchParams.set('host', socketDir);
    return through.toString();
  };
  const best = await bestOfAlternating({
    socket: () => withPostgresDatabase((url) => chargeRate({ DATABASE_URL: viaSocket(url) }, '.')),
    tcp: () => withPostgresDatabase((url) => chargeRate({ DATABASE_URL: url }, '.')),
  });
  if (best.socket.rate === 0 || best.tcp.rate === 0) return ['postgres: unreachable through its socket or TCP: the socket scenario is skipped'];
  return [`postgres: through the Unix socket in ${socketDir}, against TCP to ${new URL(POSTGRES_URL).host}: ${comparedLine(best.socket, best.tcp)}`];
}

/** BENCH_ONLY=graceful-stop: SIGTERM under POST charge from CONNECTIONS keep-alive clients, after WARMUP_SECONDS of it. */
async function gracefulStopLines(): Promise<string[]> {
  const lines: string[] = [];
  for (const engine of ['pglite', 'postgres'] as const) {
    for (let round = 0; round < STOP_ROUNDS; round++) {
      const line = await onFreshDatabase(engine, async (env) => {
        const { url, child } = await startService(env);
        try {
          const authorization = `Bearer ${(await createBenchProduct(fetchCaller(url))).keys.test}`;
          const card = await bindTestCard(fetchCaller(url), authorization);
          const stop = await measureGracefulStop({ url, child, authorization, body: { ...CHARGE, card }, connections: CONNECTIONS, loadMs: WARMUP_SECONDS * 1000 });
          return gracefulStopLine(engine, CONNECTIONS, stop);
        } finally {
          child.kill('SIGKILL');
        }
      });
      if (line) lines.push(line);
    }
  }
  return lines;
}

/** BENCH_ONLY=live-scale: live POST charge from LIVE_CLIENTS clients against a bank answering in LIVE_BANK_LATENCY_MS. */
async function liveAtScaleLines(): Promise<string[]> {
  const lines: string[] = [];
  for (const engine of ['pglite', 'postgres'] as const) {
    const line = await onFreshDatabase(engine, async (env) => {
      const bank = await startBank(LIVE_BANK_LATENCY_MS);
      try {
        // One product's clients all in flight at once: within its share of the places, whatever BENCH_LIVE_CLIENTS is.
        const places = { TOLOV_REQUESTS_IN_FLIGHT_PER_CLIENT_MAX: String(Math.max(1_024, LIVE_CLIENTS)), TOLOV_REQUESTS_IN_FLIGHT_MAX: String(Math.max(4_096, LIVE_CLIENTS)) };
        const { url, child } = await startService({ ...env, ...bank.env, ...places });
        try {
          const product = (await fetchCaller(url)('POST', '/admin/v1/products', { name: 'Bench live shop', receiptRequired: false }, { authorization: `Bearer ${ADMIN_TOKEN}` })) as unknown as {
            keys: { live: string };
          };
          const authorization = `Bearer ${product.keys.live}`;
          const card = await bindLiveCard(url, bank, authorization);
          const cpu = () => {
            const others = cpuMeter(child.pid);
            const bankBefore = processCpuMs(bank.pid);
            return (charges: number) => ({ ...others(charges), bank: Math.round(((processCpuMs(bank.pid) - bankBefore) / charges) * 100) / 100 });
          };
          const load = { url, pid: child.pid!, bank, authorization, card, clients: LIVE_CLIENTS, bankLatencyMs: LIVE_BANK_LATENCY_MS, cpu };
          return liveAtScaleLine(engine, await measureLiveAtScale({ ...load, warmupSeconds: WARMUP_SECONDS, seconds: DURATION_SECONDS }));
        } finally {
          await stopChild(child);
        }
      } finally {
        await bank.stop();
      }
    });
    if (line) lines.push(line);
  }
  return lines;
}

/** Runs `measure` with the environment of a fresh database of `engine` (null when PostgreSQL is not there). */
async function onFreshDatabase<T>(engine: 'pglite' | 'postgres', measure: (env: Record<string, string>) => Promise<T>): Promise<T | null> {
  if (engine === 'postgres') return withPostgresDatabase((url) => measure({ DATABASE_URL: url }));
  const dataDir = await mkdtemp(join(tmpdir(), 'tolov-bench-'));
  try {
    return await measure({ TOLOV_DATA_DIR: dataDir });
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  // `BENCH_ONLY=poisoned-groups`: that scenario alone, for a quick comparison.
  if (process.env.BENCH_ONLY === 'poisoned-groups') {
    process.stdout.write(`\n${poisonLines(await poisonedGroupsOnEachEngine()).join('\n')}\n`);
    return;
  }
  if (process.env.BENCH_ONLY === 'stripe-emulator') {
    const emulator = await stripeEmulator();
    process.stdout.write(`\n${EMULATOR}: ${emulator.requestsPerSecond} charges/s, p50 ${emulator.p50Ms} ms, p99 ${emulator.p99Ms} ms, ${emulator.non2xx} non-2xx\n`);
    return;
  }
  if (process.env.BENCH_ONLY === 'scale-out') {
    const results = [await stripeEmulator()];
    const one = await withPostgresDatabase(async (url) => benchService('postgres', { DATABASE_URL: url }));
    const scaleOut = await withPostgresDatabase(benchScaleOut);
    if (one) results.push(...one);
    process.stdout.write(`\n${[...breakdownLines(results), ...(scaleOut ? scaleOutLines(scaleOut, results) : [])].join('\n')}\n`);
    if (scaleOut && !scaleOut.conserved) process.exitCode = 1;
    return;
  }
  const baselineRef = process.env.BENCH_BASELINE_REF;
  if (process.env.BENCH_ONLY === 'baseline') {
    if (!baselineRef) throw new Error('BENCH_ONLY=baseline needs BENCH_BASELINE_REF=<git ref>');
    process.stdout.write(`\n${(await baselineLines(baselineRef)).join('\n')}\n`);
    return;
  }
  if (process.env.BENCH_ONLY === 'graceful-stop') {
    process.stdout.write(`\n${(await gracefulStopLines()).join('\n')}\n`);
    return;
  }
  if (process.env.BENCH_ONLY === 'attribution') {
    process.stdout.write(`\n${(await attributionLines()).join('\n')}\n`);
    return;
  }
  if (process.env.BENCH_ONLY === 'cpu') {
    process.stdout.write(`\n${(await cpuLines()).join('\n')}\n`);
    return;
  }
  if (process.env.BENCH_ONLY === 'socket') {
    process.stdout.write(`\n${(await socketLines()).join('\n')}\n`);
    return;
  }
  if (process.env.BENCH_ONLY === 'live-scale') {
    process.stdout.write(`\n${(await liveAtScaleLines()).join('\n')}\n`);
    return;
  }
  if (process.env.BENCH_ONLY === 'webhook-fairness') {
    process.stdout.write(`\n${(await webhookFairnessOnEachEngine()).join('\n')}\n`);
    return;
  }
  const results: Result[] = [await bareNode(), await stripeEmulator()];
  const dataDir = await mkdtemp(join(tmpdir(), 'tolov-bench-'));
  try {
    results.push(...(await benchService('pglite', { TOLOV_DATA_DIR: dataDir })));
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  const ratios = [await pgliteChargeRatio()];
  const lite = await openPglite('memory://');
  results.push(await benchDeliveries('pglite', lite));
  await lite.close();
  // The database's own rates on an engine in this thread, as an application embedding PGlite runs it; the service's
  // charge without HTTP on the engine's own thread, as the service runs it. On disk, as the service keeps its data.
  const measures = [
    { measure: benchChargeRows, open: pgliteInThisThread },
    { measure: benchChargeWithoutHttp, open: openPglite },
    { measure: benchSmallTransactions, open: pgliteInThisThread },
  ];
  for (const { measure, open } of measures) {
    const liteOnDisk = await mkdtemp(join(tmpdir(), 'tolov-bench-direct-'));
    const lite = await open(liteOnDisk);
    results.push(await measure('pglite', lite));
    await lite.close();
    await rm(liteOnDisk, { recursive: true, force: true });
  }

  const postgres = await withPostgresDatabase(async (url) => {
    const service = await benchService('postgres', { DATABASE_URL: url });
    return service;
  });
  if (postgres) results.push(...postgres);
  /** A measurement on a fresh PostgreSQL database of its own, opened through the database layer. */
  const onPostgres = (measure: (engine: string, db: Db) => Promise<Result>) =>
    withPostgresDatabase(async (url) => {
      const db = await openPostgres(url);
      try {
        return await measure('postgres', db);
      } finally {
        await db.close();
      }
    });
  for (const measure of [benchDeliveries, benchChargeRows, benchChargeWithoutHttp, benchSmallTransactions]) {
    const measured = await onPostgres(measure);
    if (measured) results.push(measured);
  }
  results.push(...(await poisonedGroupsOnEachEngine()));

  const postgresRatio = await postgresChargeRatio();
  if (postgresRatio) ratios.push(postgresRatio);
  const scaleOut = await withPostgresDatabase(benchScaleOut);

  const fairness = await webhookFairnessOnEachEngine();
  const profiled = await profileOnEachEngine();
  const baseline = baselineRef ? ['', `This checkout against ${baselineRef}, built and measured in this run:`, ...(await baselineLines(baselineRef))] : [];
  const text = [
    report(results, ratios),
    '',
    ...(scaleOut ? scaleOutLines(scaleOut, results) : []),
    '',
    ...profileLines(profiled),
    '',
    'Webhook delivery beside a product whose endpoints never answer:',
    ...fairness,
    ...baseline,
  ].join('\n');
  process.stdout.write(`\n${text}\n`);
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/latest.md', `${text}\n`);
  await writeFile('bench/results/latest.json', JSON.stringify({ results, chargeRatios: ratios, scaleOut, profiled }, null, 2));
  if (scaleOut && !scaleOut.conserved) throw new Error(`money was not conserved across ${scaleOut.processes} processes: ${scaleOut.checks.join('; ')}`);
}

await main();
