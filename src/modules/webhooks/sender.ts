// One HTTP attempt of a delivery. Connections go only to public addresses (unless allowed otherwise): the check runs on
// the addresses the host name resolves to, at connect time, so a name cannot be re-pointed between check and use.
// Each endpoint has connections of its own: endpoints of many merchants on one host never wait for each other's.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { Pool, request } from 'undici';
import { isPrivateAddress } from './addresses.js';
import { SENDS_IN_FLIGHT_MAX, SENDS_PER_ENDPOINT_MAX } from './dispatch.js';

const CONNECT_TIMEOUT_MS = 5_000;
const RESPONSE_BODY_MAX_BYTES = 64 * 1024;
export const RESPONSE_EXCERPT_MAX_CHARS = 1_000;
/** As many as the attempts an endpoint may have in flight: an attempt never queues in its pool behind another. */
const CONNECTIONS_PER_ENDPOINT = SENDS_PER_ENDPOINT_MAX;
/** An idle connection is closed after this long; an endpoint's pool, with nothing in flight that long, is forgotten. */
const KEEP_ALIVE_MS = 10_000;
/** Pools held at once: more than the endpoints that can have attempts in flight, so an idle one can always make room. */
const POOLS_MAX = 4 * SENDS_IN_FLIGHT_MAX;

export type Lookup = typeof dnsLookup;

export interface Attempt {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** The first characters of the answer's body, as text. */
  responseExcerpt: string | null;
  /** It ended at its timeout, unanswered (a failed connection is not a timeout). */
  timedOut: boolean;
}

export interface Sender {
  /** One attempt to `endpointId` at `url`, over that endpoint's own connections. */
  send(endpointId: string, url: string, headers: Record<string, string>, body: string): Promise<Attempt>;
  close(): Promise<void>;
}

class RefusedAddress extends Error {
  constructor() {
    super('refused: the host resolves to a private address');
  }
}

export function createSender(options: { timeoutMs: number; allowPrivate: boolean; lookup?: Lookup }): Sender {
  const resolve = options.lookup ?? dnsLookup;
  // Resolves as net.connect asks (one address, or all of them), refusing if any address is private.
  const guardedLookup = ((hostname: string, lookupOptions: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    resolve(hostname, { ...lookupOptions, all: true }, (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (error) return callback(error);
      if (!options.allowPrivate && addresses.some((entry) => isPrivateAddress(entry.address))) return callback(new RefusedAddress());
      if (lookupOptions.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  }) as unknown as Lookup;

  const pools = new EndpointPools({
    connect: { lookup: guardedLookup, timeout: Math.min(CONNECT_TIMEOUT_MS, options.timeoutMs) },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connections: CONNECTIONS_PER_ENDPOINT,
    keepAliveTimeout: KEEP_ALIVE_MS,
  });

  return {
    async send(endpointId, url, headers, body) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
      // An address written in the URL is not looked up, so it is checked here.
      if (!options.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) {
        return { ok: false, statusCode: null, durationMs: 0, error: new RefusedAddress().message, responseExcerpt: null, timedOut: false };
      }
      const { pool, release } = pools.take(endpointId, url);
      try {
        const response = await request(url, {
          dispatcher: pool,
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        const responseExcerpt = await excerpt(response.body);
        const ok = response.statusCode >= 200 && response.statusCode < 300;
        return { ok, statusCode: response.statusCode, durationMs: elapsed(), error: ok ? null : `answered ${response.statusCode}`, responseExcerpt, timedOut: false };
      } catch (error) {
        return { ok: false, statusCode: null, durationMs: elapsed(), error: describe(error, options.timeoutMs), responseExcerpt: null, timedOut: isTimeout(error) };
      } finally {
        release();
      }
    },
    close: () => pools.close(),
  };
}

interface Held {
  key: string;
  pool: Pool;
  inFlight: number;
  /** When it was last taken or released: the pools are kept in this order, oldest first. */
  touchedMs: number;
}

/**
 * A connection pool per endpoint and origin, made on first use and closed once it had nothing in flight for
 * KEEP_ALIVE_MS (looked at as pools are taken), at most POOLS_MAX at once.
 */
class EndpointPools {
  private readonly held = new Map<string, Held>();

  constructor(private readonly options: Pool.Options) {}

  /** The pool for an attempt to `endpointId` at `url`, and its release once the attempt ended. */
  take(endpointId: string, url: string): { pool: Pool; release: () => void } {
    const origin = new URL(url).origin;
    const key = `${endpointId} ${origin}`;
    this.closeIdle();
    let held = this.held.get(key);
    if (held === undefined) {
      if (this.held.size >= POOLS_MAX) this.closeOldestIdle();
      held = { key, pool: new Pool(origin, this.options), inFlight: 0, touchedMs: 0 };
    }
    const taken = held;
    taken.inFlight += 1;
    this.touch(taken);
    return {
      pool: taken.pool,
      release: () => {
        taken.inFlight -= 1;
        if (this.held.get(key) === taken) this.touch(taken);
      },
    };
  }

  async close(): Promise<void> {
    const pools = [...this.held.values()].map((held) => held.pool);
    this.held.clear();
    await Promise.all(pools.map((pool) => pool.close()));
  }

  private touch(held: Held): void {
    this.held.delete(held.key);
    held.touchedMs = Date.now();
    this.held.set(held.key, held);
  }

  /** Closes the pools untouched for KEEP_ALIVE_MS with nothing in flight; a pool in flight that long stays. */
  private closeIdle(): void {
    const before = Date.now() - KEEP_ALIVE_MS;
    for (const held of this.held.values()) {
      if (held.touchedMs > before) return;
      if (held.inFlight === 0) this.forget(held);
    }
  }

  private closeOldestIdle(): void {
    for (const held of this.held.values()) {
      if (held.inFlight === 0) return this.forget(held);
    }
    // Each pool holds an attempt, yet Dispatch lets fewer than POOLS_MAX be in flight.
    throw new Error(`more than ${POOLS_MAX} endpoints with attempts in flight`);
  }

  private forget(held: Held): void {
    this.held.delete(held.key);
    void held.pool.close().catch(() => {});
  }
}

/**
 * The first characters of an answer's body, as text the database can store (no U+0000), reading at most
 * RESPONSE_BODY_MAX_BYTES: a longer body is cut off with its connection.
 */
async function excerpt(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string | null> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let readBytes = 0;
  for await (const chunk of body) {
    readBytes += chunk.length;
    if (keptBytes < RESPONSE_EXCERPT_MAX_CHARS * 4) {
      kept.push(chunk);
      keptBytes += chunk.length;
    }
    if (readBytes > RESPONSE_BODY_MAX_BYTES) {
      body.destroy();
      break;
    }
  }
  const text = Buffer.concat(kept).toString('utf8').replaceAll('\u0000', '');
  return text === '' ? null : Array.from(text).slice(0, RESPONSE_EXCERPT_MAX_CHARS).join('');
}

/** Socket and DNS error codes, as the reasons a merchant reads in the delivery log. */
const REASONS: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the endpoint',
  UND_ERR_SOCKET: 'connection closed before an answer',
  EPIPE: 'connection closed before an answer',
  ENOTFOUND: 'DNS: host name not found',
  EAI_AGAIN: 'DNS: lookup failed, temporarily',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** Whether an attempt ended at its timeout, unanswered. */
function isTimeout(error: unknown): boolean {
  const { name, code = '' } = ((error as { cause?: unknown }).cause ?? error) as { name?: string; code?: string };
  return name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}

/**
 * Why an attempt got no HTTP answer, as one of a few classified reasons: never the raw error, which would tell the
 * merchant what Tolov's network can reach.
 */
function describe(error: unknown, timeoutMs: number): string {
  const cause = (error as { cause?: unknown }).cause ?? error;
  if (cause instanceof RefusedAddress) return cause.message;
  if (isTimeout(error)) return `timed out: no answer within ${timeoutMs} ms`;
  const { code = '' } = cause as { code?: string };
  if (REASONS[code]) return REASONS[code];
  if (/^(ERR_SSL|ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL)/.test(code)) return 'TLS error: no secure connection to the endpoint';
  return 'connection failed';
}
