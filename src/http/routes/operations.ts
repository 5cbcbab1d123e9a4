import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import { ApiError } from '../../core/errors.js';
import { secretsEqual } from '../../lib/secrets.js';
import { bearerToken, routeNotFound } from '../auth.js';

/** The parts that keep a process from serving: each named, or none when it is ready. */
export type Readiness = () => Promise<string[]>;

/**
 * What a load balancer and Prometheus ask: `/readyz` (200 while the process can serve, 503 naming what fails, and
 * during a graceful stop), `/metrics` with TOLOV_METRICS_TOKEN as a bearer token (unset: no such route).
 */
export const operationsRoutes: FastifyPluginAsync<{ readiness: Readiness; metrics: Registry; metricsToken: string | null }> = async (app, options) => {
  // Answered during an overload too: what a load balancer and Prometheus read then is how it goes.
  const config = { auth: { kind: 'public' }, inFlightLimit: false } as const;
  app.get('/readyz', { config, schema: { hide: true } }, async (_request, reply) => {
    const failing = await options.readiness();
    return failing.length === 0 ? { status: 'ready' } : reply.code(503).send({ status: 'unready', failing });
  });
  app.get('/metrics', { config, schema: { hide: true } }, async (request, reply) => {
    if (options.metricsToken === null) throw routeNotFound(request);
    const given = bearerToken(request);
    if (given === null || !secretsEqual(given, options.metricsToken)) {
      throw new ApiError('UNAUTHENTICATED', 'Send TOLOV_METRICS_TOKEN as a bearer token', { headers: { 'WWW-Authenticate': 'Bearer realm="tolov-metrics"' } });
    }
    return reply.type(options.metrics.contentType).send(await options.metrics.metrics());
  });
};
