// The transport: one call to the API, its Idempotency-Key made once and kept across the SDK's own retries, retried
// with backoff and jitter on what may succeed later (no answer, 409 IDEMPOTENCY_KEY_IN_USE, 429, 5xx), each attempt
// under a timeout.
import { randomUUID } from 'node:crypto';
import { TolovConnectionError, TolovError, type ErrorBody } from './errors.js';

export interface ClientOptions {
  /** Where the API is; default `http://127.0.0.1:4000` (or `TOLOV_API_BASE`). */
  baseUrl?: string;
  /** Retries after the first attempt, at most; default 2, at most 10. */
  maxNetworkRetries?: number;
  /** How long one attempt may take; default 30 seconds. */
  timeoutMs?: number;
  /** The fetch to use (tests, proxies); default the global one. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  /** Your own key for a POST; without one the SDK makes one, and sends it again on its own retries. */
  idempotencyKey?: string;
  timeoutMs?: number;
  maxNetworkRetries?: number;
}

const RETRIES_MAX = 10;
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 8_000;
const RETRY_AFTER_MAX_SECONDS = 60;

/** Full jitter: a random wait up to the doubling bound, so that clients retrying together spread out. */
const backoffMs = (attempt: number) => Math.random() * Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt);

export function retryable(status: number, body: ErrorBody | null): boolean {
  return status === 429 || status >= 500 || (status === 409 && body?.code === 'IDEMPOTENCY_KEY_IN_USE');
}

export class Transport {
  readonly baseUrl: string;
  private readonly retries: number;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(
    private readonly apiKey: string,
    options: ClientOptions = {},
  ) {
    if (typeof apiKey !== 'string' || !/^sk_(test|live)_/.test(apiKey)) throw new TypeError('Tolov needs a secret key: sk_test_… or sk_live_…');
    this.baseUrl = (options.baseUrl ?? process.env.TOLOV_API_BASE ?? 'http://127.0.0.1:4000').replace(/\/+$/, '');
    this.retries = Math.min(RETRIES_MAX, Math.max(0, options.maxNetworkRetries ?? 2));
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.apiKey}`, 'user-agent': 'tolov-node/0.1.0' };
  }

  /** A GET whose answer is read as it arrives (a stream): neither timed out nor retried here; the caller reads it. */
  open(path: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Response> {
    return this.fetch(`${this.baseUrl}${path}`, { headers: { ...this.headers(), ...headers }, ...(signal ? { signal } : {}) });
  }

  async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, options: CallOptions = {}): Promise<T> {
    const headers = this.headers();
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method === 'POST') headers['idempotency-key'] = options.idempotencyKey ?? `tolov-node-${randomUUID()}`;
    const retries = Math.min(RETRIES_MAX, options.maxNetworkRetries ?? this.retries);
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retries;
      let response: Response;
      try {
        response = await this.fetch(`${this.baseUrl}${path}`, {
          method,
          headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs),
        });
      } catch (error) {
        if (last) throw new TolovConnectionError(`no answer from ${this.baseUrl} after ${attempt + 1} attempts: ${(error as Error).message}`, error);
        await sleep(backoffMs(attempt));
        continue;
      }
      const text = await response.text();
      const parsed = text === '' ? null : (JSON.parse(text) as unknown);
      if (response.ok) return parsed as T;
      const errorBody = parsed as ErrorBody | null;
      if (last || !retryable(response.status, errorBody)) throw errorOf(response, errorBody);
      await sleep(retryWaitMs(response, attempt));
    }
  }
}

/** The error an answer other than a success stands for. */
export function errorOf(response: Response, body: ErrorBody | null): TolovError {
  return new TolovError(body ?? { statusCode: response.status, error: response.statusText, code: 'INTERNAL_ERROR', message: `HTTP ${response.status}`, requestId: '' });
}

/** How long to wait before attempt `attempt + 1`: the answer's Retry-After (bounded), else backoff with jitter. */
export function retryWaitMs(response: Response | null, attempt: number): number {
  const retryAfter = Number(response?.headers.get('retry-after'));
  return Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, RETRY_AFTER_MAX_SECONDS) * 1000 : backoffMs(attempt);
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
