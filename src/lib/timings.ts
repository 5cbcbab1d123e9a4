// Where the time of requests goes: durations recorded by name into histograms of bounded size, and the event loop's
// own delay, for the operator (and the benchmark) to read. Recording is a few arithmetic operations; nothing is kept
// per request.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** Names recorded at most: the code records a fixed set (phases of routes, group writers), far below this. */
const SERIES_MAX = 256;
/** Each bucket is 5% wider than the one before, from 10 µs to over 10 minutes: quantiles within 5%. */
const GROWTH = 1.05;
const SMALLEST_MS = 0.01;
const BUCKETS = 400;
/** How often the event loop's delay is sampled (ms); each sample counts this interval too, which is taken off. */
const LOOP_RESOLUTION_MS = 10;

export interface Recorder {
  /** Records `ms` under `name`, `times` times over (one wait shared by several items counts once per item). */
  record(name: string, ms: number, times?: number): void;
}

/** Records nothing: for code run where nobody reads the timings (tests, tools). */
export const NO_TIMINGS: Recorder = { record: () => {} };

export interface SeriesSummary {
  name: string;
  count: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
}

export interface TimingsSnapshot {
  since: string;
  /** How late the event loop ran its timers: a busy loop delays every request it holds. */
  eventLoopDelay: { p50Ms: number; p99Ms: number; maxMs: number };
  series: SeriesSummary[];
}

class Series {
  readonly buckets = new Uint32Array(BUCKETS);
  count = 0;
  sumMs = 0;

  add(ms: number, times: number): void {
    const index = ms <= SMALLEST_MS ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(ms / SMALLEST_MS) / Math.log(GROWTH)));
    this.buckets[index]! += times;
    this.count += times;
    this.sumMs += ms * times;
  }

  /** The upper bound of the bucket that holds quantile `q`. */
  quantile(q: number): number {
    let seen = 0;
    const rank = Math.ceil(q * this.count);
    for (let index = 0; index < BUCKETS; index++) {
      seen += this.buckets[index]!;
      if (seen >= rank) return SMALLEST_MS * GROWTH ** index;
    }
    return Number.POSITIVE_INFINITY;
  }
}

const rounded = (ms: number) => Math.round(ms * 100) / 100;

export class Timings implements Recorder {
  #series = new Map<string, Series>();
  #since = new Date();
  readonly #loop: IntervalHistogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });

  constructor() {
    this.#loop.enable();
  }

  record(name: string, ms: number, times = 1): void {
    let series = this.#series.get(name);
    if (series === undefined) {
      if (this.#series.size >= SERIES_MAX) return;
      series = new Series();
      this.#series.set(name, series);
    }
    series.add(ms, times);
  }

  snapshot(): TimingsSnapshot {
    const late = (ns: number) => rounded(Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS));
    return {
      since: this.#since.toISOString(),
      eventLoopDelay: { p50Ms: late(this.#loop.percentile(50)), p99Ms: late(this.#loop.percentile(99)), maxMs: late(this.#loop.max) },
      series: [...this.#series]
        .map(([name, series]) => ({
          name,
          count: series.count,
          meanMs: rounded(series.sumMs / series.count),
          p50Ms: rounded(series.quantile(0.5)),
          p99Ms: rounded(series.quantile(0.99)),
        }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    };
  }

  /** Starts counting afresh: a measurement covers what happened since. */
  reset(): void {
    this.#series = new Map();
    this.#since = new Date();
    this.#loop.reset();
  }

  stop(): void {
    this.#loop.disable();
  }
}
