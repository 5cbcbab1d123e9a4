// Requests being answered at once, bounded. Every request in flight holds memory, and may hold a place in the database
// pool's queue and in the bank client's; past the limit a request is refused before any of its work, so an overload
// answers 503 quickly instead of growing the process until it fails. A request takes its place once its body is read
// and, on the API, its key accepted: a request refused for its credentials or its body never holds one, and neither
// does a client sending its body slowly, which a place would let a few connections keep from everyone. The pages'
// sessions are looked up after it (their preHandlers run after this one), so that made-up ones queue no more lookups
// than the places allow.
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors.js';
import { sendError } from './error-reply.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** False: the route's requests are never counted or refused (the probes, which must answer during an overload). */
    inFlightLimit?: false;
  }
}

/** How many requests are in flight, for the metrics. */
export interface RequestsInFlight {
  readonly max: number;
  count(): number;
}

/** One refusal for every request: refusing must cost next to nothing when it is what the process does most. */
const AT_CAPACITY = new ApiError('SERVICE_UNAVAILABLE', 'The service is answering as many requests as it can; retry after Retry-After seconds', {
  headers: { 'Retry-After': '1' },
});
const OVER_SHARE = new ApiError('RATE_LIMITED', 'You have as many requests in flight as one client may have at once; retry after Retry-After seconds', {
  headers: { 'Retry-After': '1' },
});

/**
 * Whose share a request's place counts against: on the API its product in its key's mode (a load test in test mode
 * never refuses live payments), otherwise its client address.
 */
function holderOf({ merchant, ip }: FastifyRequest): string {
  return merchant ? `${merchant.productId} ${merchant.livemode ? 'live' : 'test'}` : `address ${ip}`;
}

/**
 * Counts each request from its handler's start until its response closes (sent, or its connection dropped), and
 * refuses one that comes with `max` already counted (503), or with `share` of its holder's (429: one product cannot
 * take every place from the others); a refusal is not logged (the metrics count it). A request whose client went away
 * is no longer counted while its work ends within that work's own limits (a bank call's deadline).
 */
export function limitRequestsInFlight(app: FastifyInstance, max: number, share: number): RequestsInFlight {
  let count = 0;
  // Holders with a place, and how many each has: never more entries than places.
  const held = new Map<string, number>();
  const holds = new ConnectionHolds();
  app.addHook('preHandler', async (request, reply) => {
    if (request.routeOptions.config?.inFlightLimit === false) return;
    // A connection closed while the request was authenticated or read: no one waits for its answer, and a place taken
    // now would never be given back (its close has passed). Refused, its work is not begun.
    if (count >= max || request.raw.socket.destroyed) return sendError(AT_CAPACITY, request, reply);
    const holder = holderOf(request);
    const holderCount = held.get(holder) ?? 0;
    if (holderCount >= share) return sendError(OVER_SHARE, request, reply);
    count += 1;
    held.set(holder, holderCount + 1);
    holds.hold(request, reply, () => {
      count -= 1;
      const left = held.get(holder)! - 1;
      if (left === 0) held.delete(holder);
      else held.set(holder, left);
    });
  });
  return { max, count: () => count };
}

/**
 * The places held on each connection. A request pipelined behind another waits for the one before it to be answered,
 * and its response never closes if the client drops the connection first: the connection's close gives it back too.
 */
class ConnectionHolds {
  readonly #held = new WeakMap<Socket, Set<() => void>>();

  /** Calls `release` once, when the response or its connection closes, whichever is first. */
  hold(request: FastifyRequest, reply: FastifyReply, release: () => void): void {
    const held = this.#on(request.raw.socket);
    const give = () => {
      if (held.delete(give)) release();
    };
    held.add(give);
    reply.raw.once('close', give);
  }

  /** What is held on `socket`, all given back when it closes. */
  #on(socket: Socket): Set<() => void> {
    const known = this.#held.get(socket);
    if (known !== undefined) return known;
    const held = new Set<() => void>();
    this.#held.set(socket, held);
    socket.once('close', () => {
      for (const give of [...held]) give();
    });
    return held;
  }
}
