// Prometheus metrics (prom-client): every request by route template and status with its latency, the depths of the
// queues the workers drain, the database pool, and the process's own (event loop delay, memory, CPU). Labels are
// bounded: a route's template, never its path; no product, key or card in any of them.
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '../db/types.js';
import { queueDepths } from '../modules/monitoring/queues.js';

/** Seconds: from a cached read's few milliseconds to a bank call's deadline. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

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
export function createMetrics(db: Db): Registry {
  const registry = new Registry();
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
  return Registry.merge([processRegistry(), registry]);
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
