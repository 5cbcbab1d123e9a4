// The signed HTTP exchange that Tolov's gateway clients share: the bank gateway (http-rail.ts) and the fiscal gateway
// (http-fiscal.ts) speak the same transport of docs/rail-protocol.md, so its signing, timeouts, answer checks, bounded
// retries and deadline live here once.
//
// Every exchange is classified exactly: a signed, readable answer below 500 is certain; a 5xx, a timeout after the
// request was sent, a reset connection, an unsigned, oversized or unreadable answer is "unclear" (the call may or may not
// have been executed).
import { Pool } from 'undici';
import { gatewaySignature, gatewaySignatureValid, SIGNATURE_HEADER, TIMESTAMP_HEADER, type GatewayAnswer } from './protocol.js';

const CONNECT_TIMEOUT_MS = 2_000;
const ATTEMPTS_MAX = 3;
const RETRY_DELAYS_MS = [100, 400];
/**
 * A call holds its connection for as long as the gateway takes to answer, and a call waiting for a free one spends its
 * own timeout waiting: at 300 ms a call, 1,024 connections carry about 3,400 calls a second before any waits.
 */
const CONNECTIONS = 1_024;
/** Above the largest answer of the protocol: a list of 10,000 entries of about 200 bytes each. */
const ANSWER_MAX_BYTES = 4 * 1024 * 1024;
const REASON_MAX_CHARS = 200;

export class GatewayCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GatewayCallError';
  }
}

/** What one HTTP exchange gave: a signed, readable answer, or nothing certain. */
export type Exchange = { answer: GatewayAnswer; status: number } | { unclear: string };

export interface GatewayOptions {
  /** How errors name the gateway ("bank gateway", "fiscal gateway"). */
  name: string;
  url: string;
  secret: string;
  /** How long the gateway has to answer one call. */
  timeoutMs: number;
}

/** The body of an answer, or null when it is larger than any answer of the protocol (the rest is not read). */
async function boundedText(body: AsyncIterable<Uint8Array> & { destroy(): unknown }): Promise<string | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > ANSWER_MAX_BYTES) {
      body.destroy();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export class GatewayClient {
  /**
   * The longest a call can take, its retries included, before it has certainly ended: the deadline of the calls that
   * carry one, and how long an operation the gateway does not know may still be on its way.
   */
  readonly callWindowMs: number;
  readonly name: string;
  readonly #base: URL;
  readonly #secret: string;
  readonly #timeoutMs: number;
  readonly #connectTimeoutMs: number;
  readonly #pool: Pool;

  constructor(options: GatewayOptions) {
    this.name = options.name;
    this.#base = new URL(options.url);
    this.#secret = options.secret;
    this.#timeoutMs = options.timeoutMs;
    this.#connectTimeoutMs = Math.min(CONNECT_TIMEOUT_MS, options.timeoutMs);
    this.#pool = new Pool(this.#base.origin, {
      connections: CONNECTIONS,
      connect: { timeout: this.#connectTimeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    this.callWindowMs = ATTEMPTS_MAX * (this.#connectTimeoutMs + options.timeoutMs) + RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
  }

  /** One signed exchange, never repeated. */
  async once(path: string, payload: unknown): Promise<Exchange> {
    const body = JSON.stringify(payload);
    const timestamp = Math.floor(Date.now() / 1000);
    try {
      const response = await this.#pool.request({
        method: 'POST',
        path: `${this.#base.pathname.replace(/\/$/, '')}${path}`,
        headers: { 'content-type': 'application/json', [TIMESTAMP_HEADER]: String(timestamp), [SIGNATURE_HEADER]: gatewaySignature(this.#secret, timestamp, body) },
        body,
        signal: AbortSignal.timeout(this.#timeoutMs + this.#connectTimeoutMs),
      });
      const text = await boundedText(response.body);
      if (text === null) return { unclear: 'answer too large' };
      const signed = gatewaySignatureValid(this.#secret, response.headers[TIMESTAMP_HEADER] as string, response.headers[SIGNATURE_HEADER] as string, text);
      if (!signed) return { unclear: `unsigned answer (HTTP ${response.statusCode})` };
      const answer = JSON.parse(text) as GatewayAnswer;
      if (response.statusCode >= 500) return { unclear: `HTTP ${response.statusCode}` };
      return { answer, status: response.statusCode };
    } catch (error) {
      return { unclear: (error as Error).message.slice(0, REASON_MAX_CHARS) };
    }
  }

  /** Repeats an exchange that gave nothing certain, or `pending`, a bounded number of times; for calls safe to repeat only. */
  async retrying(path: string, payload: unknown): Promise<Exchange> {
    let last: Exchange = { unclear: 'not sent' };
    for (let attempt = 0; attempt < ATTEMPTS_MAX; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt - 1]));
      last = await this.once(path, payload);
      if (!('unclear' in last) && last.answer.result !== 'pending') return last;
    }
    return last;
  }

  /**
   * A call that changes the gateway's books (a debit, a refund, a receipt's registration), idempotent by its id, under
   * a deadline its retries share: the gateway executes it before the deadline or never, so that Tolov stops waiting no
   * earlier than the gateway stops trying.
   */
  beforeDeadline(path: string, payload: Record<string, unknown>): Promise<Exchange> {
    const deadline = new Date(Date.now() + this.callWindowMs).toISOString();
    return this.retrying(path, { ...payload, deadline });
  }

  /** One exchange, not repeated, whose failure is an error for the caller to report (a buyer's card steps, which the buyer retries). */
  async answer(path: string, payload: unknown): Promise<GatewayAnswer> {
    const result = await this.once(path, payload);
    if ('unclear' in result) throw new GatewayCallError(`${this.name} ${path}: ${result.unclear}`);
    return result.answer;
  }

  /** A repeatable exchange that must give a certain answer, or an error naming the call. */
  async certain(path: string, payload: unknown): Promise<GatewayAnswer> {
    const result = await this.retrying(path, payload);
    if ('unclear' in result) throw new GatewayCallError(`${this.name} ${path}: ${result.unclear}`);
    return result.answer;
  }
}
