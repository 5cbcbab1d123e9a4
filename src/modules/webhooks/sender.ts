// One HTTP attempt of a delivery. Connections go only to public addresses (unless allowed otherwise): the check runs on
// the addresses the host name resolves to, at connect time, so a name cannot be re-pointed between check and use.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import { isPrivateAddress } from './addresses.js';

const CONNECT_TIMEOUT_MS = 5_000;
const RESPONSE_BODY_MAX_BYTES = 64 * 1024;
export const RESPONSE_EXCERPT_MAX_CHARS = 1_000;
const CONNECTIONS_PER_ORIGIN = 32;

export type Lookup = typeof dnsLookup;

export interface Attempt {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** The first characters of the answer's body, as text. */
  responseExcerpt: string | null;
}

export interface Sender {
  send(url: string, headers: Record<string, string>, body: string): Promise<Attempt>;
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

  const agent = new Agent({
    connect: { lookup: guardedLookup, timeout: Math.min(CONNECT_TIMEOUT_MS, options.timeoutMs) },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connections: CONNECTIONS_PER_ORIGIN,
    keepAliveTimeout: 10_000,
  });

  return {
    async send(url, headers, body) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
      // An address written in the URL is not looked up, so it is checked here.
      if (!options.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) {
        return { ok: false, statusCode: null, durationMs: 0, error: new RefusedAddress().message, responseExcerpt: null };
      }
      try {
        const response = await request(url, {
          dispatcher: agent,
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        const responseExcerpt = await excerpt(response.body);
        const ok = response.statusCode >= 200 && response.statusCode < 300;
        return { ok, statusCode: response.statusCode, durationMs: elapsed(), error: ok ? null : `answered ${response.statusCode}`, responseExcerpt };
      } catch (error) {
        return { ok: false, statusCode: null, durationMs: elapsed(), error: describe(error, options.timeoutMs), responseExcerpt: null };
      }
    },
    close: () => agent.close(),
  };
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

/**
 * Why an attempt got no HTTP answer, as one of a few classified reasons: never the raw error, which would tell the
 * merchant what Tolov's network can reach.
 */
function describe(error: unknown, timeoutMs: number): string {
  const cause = (error as { cause?: unknown }).cause ?? error;
  if (cause instanceof RefusedAddress) return cause.message;
  const { name, code = '' } = cause as { name?: string; code?: string };
  if (name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return `timed out: no answer within ${timeoutMs} ms`;
  }
  if (REASONS[code]) return REASONS[code];
  if (/^(ERR_SSL|ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL)/.test(code)) return 'TLS error: no secure connection to the endpoint';
  return 'connection failed';
}
