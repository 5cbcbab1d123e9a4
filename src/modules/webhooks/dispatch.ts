// Fair sending: each endpoint has a few attempts in flight at most and waits a while after failing to answer, and each
// product a share of the process's attempts, so that slow or dead endpoints hold only their own deliveries back, never
// another endpoint's, never another merchant's (however many endpoints a few accounts make).
import { setNewest } from '../../lib/bounded-map.js';

/** Attempts in flight at once in this process, over every endpoint. */
export const SENDS_IN_FLIGHT_MAX = 256;
/** Attempts in flight at once to one endpoint. */
export const SENDS_PER_ENDPOINT_MAX = 8;
/** Attempts in flight at once to one product's endpoints: a quarter of the process's, so three products cannot fill it. */
export const SENDS_PER_PRODUCT_MAX = 64;
/** After an attempt without an answer, an endpoint waits this long, doubling with each such failure, up to the max. */
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_MAX_MS = 60_000;
/** Endpoints remembered (in flight or backing off); past it the oldest are forgotten, erring towards sending. */
const ENDPOINTS_TRACKED_MAX = 10_000;

interface EndpointState {
  inFlight: number;
  failures: number;
  backoffUntil: number;
}

export class Dispatch {
  private readonly endpoints = new Map<string, EndpointState>();
  /** Attempts in flight per product, for products with any. */
  private readonly products = new Map<string, number>();
  private inFlight = 0;
  private readonly running = new Set<Promise<void>>();

  /**
   * Room left: in all, for each endpoint that has less than SENDS_PER_ENDPOINT_MAX (0 while it backs off), and for
   * each product with attempts in flight.
   */
  room(nowMs = Date.now()): { total: number; endpoints: Map<string, number>; products: Map<string, number> } {
    const endpoints = new Map<string, number>();
    for (const [id, state] of this.endpoints) {
      const room = state.backoffUntil > nowMs ? 0 : SENDS_PER_ENDPOINT_MAX - state.inFlight;
      if (room < SENDS_PER_ENDPOINT_MAX) endpoints.set(id, Math.max(0, room));
    }
    const products = new Map([...this.products].map(([id, inFlight]) => [id, Math.max(0, SENDS_PER_PRODUCT_MAX - inFlight)]));
    return { total: SENDS_IN_FLIGHT_MAX - this.inFlight, endpoints, products };
  }

  /**
   * Runs one attempt to `endpointId` in the background; `answered` says whether the endpoint answered at all (any HTTP
   * status), which ends its backoff, or not (a timeout, a refused connection), which lengthens it.
   */
  start(target: { endpointId: string; productId: string }, send: () => Promise<{ answered: boolean }>): Promise<void> {
    const { endpointId, productId } = target;
    const state = this.endpoints.get(endpointId) ?? { inFlight: 0, failures: 0, backoffUntil: 0 };
    setNewest(this.endpoints, endpointId, state, ENDPOINTS_TRACKED_MAX);
    state.inFlight += 1;
    this.products.set(productId, (this.products.get(productId) ?? 0) + 1);
    this.inFlight += 1;
    const run = (async () => {
      try {
        const { answered } = await send();
        state.failures = answered ? 0 : state.failures + 1;
        state.backoffUntil = answered ? 0 : Date.now() + Math.min(BACKOFF_BASE_MS * 2 ** (state.failures - 1), BACKOFF_MAX_MS);
      } finally {
        state.inFlight -= 1;
        const productLeft = this.products.get(productId)! - 1;
        if (productLeft === 0) this.products.delete(productId);
        else this.products.set(productId, productLeft);
        this.inFlight -= 1;
        if (state.inFlight === 0 && state.failures === 0) this.endpoints.delete(endpointId);
      }
    })();
    this.running.add(run);
    void run.finally(() => this.running.delete(run)).catch(() => {});
    return run;
  }

  /** Resolves once every attempt started so far has ended. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
