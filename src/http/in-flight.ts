// Requests being answered at once, bounded. Every request in flight holds memory, and may hold a place in the database
// pool's queue and in the bank client's; past the limit a request is refused at once, before it is authenticated or
// reads anything, so an overload answers 503 quickly instead of growing the process until it fails.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../core/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * False: the route's requests are not counted against the limit and never refused by it: the operator's probes,
     * which must answer during an overload, and event streams, which stay open and have limits of their own.
     */
    inFlightLimit?: false;
  }
}

/** How many requests are in flight, for the metrics. */
export interface RequestsInFlight {
  readonly max: number;
  count(): number;
}

export const atCapacity = () =>
  new ApiError('SERVICE_UNAVAILABLE', 'The service is answering as many requests as it can; retry after Retry-After seconds', { headers: { 'Retry-After': '1' } });

/**
 * Counts each request from its arrival until its response closes (sent, or its connection dropped), and refuses one
 * that arrives with `max` already counted. A request whose client went away is no longer counted while its work ends
 * within that work's own limits (a statement's timeout, a bank call's deadline).
 */
export function limitRequestsInFlight(app: FastifyInstance, max: number): RequestsInFlight {
  let count = 0;
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config?.inFlightLimit === false) return;
    if (count >= max) {
      reply.header('Request-Id', request.id);
      throw atCapacity();
    }
    count += 1;
    reply.raw.once('close', () => (count -= 1));
  });
  return { max, count: () => count };
}
