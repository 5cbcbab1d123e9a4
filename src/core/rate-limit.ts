import { afterRollback, type Transaction } from '../db/types.js';
import { setNewest } from '../lib/bounded-map.js';
import { ApiError } from './errors.js';

/**
 * A fixed-window request counter per key (a session token, a client address), held in this process's memory and
 * bounded in size: when full, the oldest windows are dropped first. Each process limits on its own.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { startedMs: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly keysMax = 100_000,
  ) {}

  /** Counts one request for `key`; throws 429 RATE_LIMITED with Retry-After once the window is full. */
  hit(key: string, nowMs = Date.now()): void {
    this.tally(key, nowMs);
    this.refuseOver(key, this.limit + 1, nowMs);
  }

  /**
   * `hit` for a request whose work is `tx`: the count is given back if `tx` rolls back, so that a request that changed
   * nothing (an idempotent replay, a duplicate that lost its race) uses up none of the window.
   */
  hitWithin(tx: Transaction, key: string, nowMs = Date.now()): void {
    const window = this.tally(key, nowMs);
    afterRollback(tx, () => {
      if (this.windows.get(key) === window) window.count -= 1;
    });
    this.refuseOver(key, this.limit + 1, nowMs);
  }

  /** Counts one event for `key` (a failed authentication) without refusing anything. */
  count(key: string, nowMs = Date.now()): void {
    this.tally(key, nowMs);
  }

  /** Adds one to `key`'s current window, a new one if it ended, and returns that window. */
  private tally(key: string, nowMs: number): { startedMs: number; count: number } {
    let window = this.windows.get(key);
    if (window === undefined || nowMs - window.startedMs >= this.windowMs) {
      window = { startedMs: nowMs, count: 0 };
      setNewest(this.windows, key, window, this.keysMax);
    }
    window.count += 1;
    return window;
  }

  /** Throws 429 RATE_LIMITED with Retry-After if `key` used up its window already; counts nothing. */
  check(key: string, nowMs = Date.now()): void {
    this.refuseOver(key, this.limit, nowMs);
  }

  /** The 429 that `check` would throw for `key`, or null if it has room; counts nothing. */
  refusal(key: string, nowMs = Date.now()): ApiError | null {
    return this.refusalOver(key, this.limit, nowMs);
  }

  /** Seconds until `key`'s full window ends, or null if it has room; counts nothing (a refusal given as a value). */
  waitSeconds(key: string, nowMs = Date.now()): number | null {
    return this.secondsOver(key, this.limit, nowMs);
  }

  private refuseOver(key: string, count: number, nowMs: number): void {
    const refusal = this.refusalOver(key, count, nowMs);
    if (refusal !== null) throw refusal;
  }

  private refusalOver(key: string, count: number, nowMs: number): ApiError | null {
    const seconds = this.secondsOver(key, count, nowMs);
    if (seconds === null) return null;
    return new ApiError('RATE_LIMITED', `Too many requests; retry in ${seconds} s`, { headers: { 'Retry-After': String(seconds) } });
  }

  private secondsOver(key: string, count: number, nowMs: number): number | null {
    const window = this.windows.get(key);
    if (window === undefined || nowMs - window.startedMs >= this.windowMs || window.count < count) return null;
    return Math.max(1, Math.ceil((window.startedMs + this.windowMs - nowMs) / 1000));
  }
}
