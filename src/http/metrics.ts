// Prometheus metrics (prom-client): every request by route template and status with its latency, the requests in
// flight, charges and refunds by outcome, the bank's and the fiscal module's calls by outcome with their latency, webhook
// attempts by outcome, the depths of the queues the workers drain, the database pool with its round trips and
// statements, and the process's own (event loop delay, memory, CPU). Labels are bounded: a route's template, never its
// path; outcomes and operations from fixed sets; no product, key or card in any of them.
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Db, Traffic } from '../db/types.js';
import type { RequestsInFlight } from './in-flight.js';
import type { Outcomes } from '../modules/monitoring/outcomes.js';
import { queueDepths } from '../modules/monitoring/queues.js';

/** Seconds: from a cached read's few milliseconds to a bank call's deadline. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A gateway call's retries share a deadline of up to three timeouts (20 s and more at the default 5 s). */
const CALL_BUCKETS = [...LATENCY_BUCKETS, 30, 60];

const modeOf = (livemode: boolean) => (livemode ? 'live' : 'test');

/** The process's own metrics (event loop, memory, GC): observed once, however many services one process runs. */
let processMetrics: Registry | null = null;
function processRegistry(): Registry {
  if (processMetrics === null) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

/** A service's metrics, with the process's. */
export function createMetrics(db: Db, inFlight: RequestsInFlight): Registry {
  const registry = new Registry();
  new Gauge({
    name: 'tolov_http_requests_in_flight',
    help: `Requests being answered, open event streams included and the probes aside (at most ${inFlight.max}, TOLOV_REQUESTS_IN_FLIGHT_MAX; past it they answer 503)`,
    registers: [registry],
    collect() {
      this.set(inFlight.count());
    },
  });
  new Gauge({
    name: 'tolov_queue_depth',
    help: 'Items waiting in each queue the workers drain',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      for (const [queue, depth] of Object.entries(await queueDepths(db))) this.set({ queue }, depth);
    },
  });
  new Gauge({
    name: 'tolov_db_pool_connections',
    help: "The PostgreSQL pool's connections: open (total), idle, queries waiting for one, and its size (max)",
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const pool = db.poolState?.();
      if (pool) for (const [state, count] of Object.entries(pool)) this.set({ state }, count);
    },
  });
  exposeTraffic(db, registry);
  return Registry.merge([processRegistry(), registry]);
}

/** The database's round trips and statements, as counters set to the engine's own counts when scraped. */
function exposeTraffic(db: Db, registry: Registry): void {
  const counter = (name: string, help: string, of: keyof Traffic) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        // The engine's count only grows: the counter is that count, as prom-client lets a counter be set.
        this.reset();
        this.inc(db.traffic()[of]);
      },
    });
  counter('tolov_db_round_trips_total', 'Exchanges with the database: statements sent together, then their answers awaited', 'roundTrips');
  counter('tolov_db_statements_total', 'Statements sent to the database (a script counts once)', 'statements');
}

/** Counts and times every request by its method, route template and status; unmatched paths share one label. */
export function measureRequests(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({ name: 'tolov_http_requests_total', help: 'Requests answered', labelNames: ['method', 'route', 'status'], registers: [registry] });
  const latency = new Histogram({
    name: 'tolov_http_request_duration_seconds',
    help: 'Time to answer a request, by route',
    labelNames: ['method', 'route'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
}

/** A foreign system's calls: counted by operation, outcome and mode, and timed by operation and mode. */
function callMetrics(registry: Registry, system: 'rail' | 'fiscal', what: string) {
  const calls = new Counter({
    name: `tolov_${system}_calls_total`,
    help: `Calls to ${what}, by operation and outcome`,
    labelNames: ['operation', 'outcome', 'mode'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: `tolov_${system}_call_duration_seconds`,
    help: `Time a call to ${what} took, retries included`,
    labelNames: ['operation', 'mode'],
    buckets: CALL_BUCKETS,
    registers: [registry],
  });
  return (operation: string, outcome: string, livemode: boolean, seconds: number) => {
    calls.inc({ operation, outcome, mode: modeOf(livemode) });
    latency.observe({ operation, mode: modeOf(livemode) }, seconds);
  };
}

/** The counts of the money paths (modules/monitoring/outcomes.ts), kept in `registry`. */
export function countOutcomes(registry: Registry): Outcomes {
  const payments = new Counter({
    name: 'tolov_payments_total',
    help: 'Charges and refunds that ended, by outcome',
    labelNames: ['kind', 'outcome', 'mode'],
    registers: [registry],
  });
  const webhooks = new Counter({ name: 'tolov_webhook_attempts_total', help: 'Webhook delivery attempts, by outcome', labelNames: ['outcome', 'mode'], registers: [registry] });
  return {
    payment: (kind, outcome, livemode) => payments.inc({ kind, outcome, mode: modeOf(livemode) }),
    railCall: callMetrics(registry, 'rail', 'the bank (the rail)'),
    fiscalCall: callMetrics(registry, 'fiscal', 'the fiscal module'),
    webhookAttempt: (outcome, livemode) => webhooks.inc({ outcome, mode: modeOf(livemode) }),
  };
}
