// Live streams of a product's events (GET /v1/events/stream, behind `tolov listen`). Each stream reads its product's
// events in the order they became final, so one that resumes after the last event it sent misses none. It is woken by
// the database's notification when events of its product commit, in any process, and looks every few seconds too, in
// case a notification was lost with a dropped connection.
import type { Db } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { ApiError } from '../../core/errors.js';
import type { LedgerService } from '../ledger/service.js';
import { presentEvent } from './service.js';
import { readStream, SENT_EVENT_TYPES, streamCursorAfter, streamStart, type StreamCursor } from './events.js';
import type { Event } from './schema.js';

/** Open streams a product that has taken a live payment may have in each mode, per process. */
export const STREAMS_PER_PRODUCT_MAX = 10;
/** Open streams a product may have in each mode, per process, until its first live payment: a sign-up trying Tolov. */
export const STREAMS_PER_NEW_PRODUCT_MAX = 2;
/**
 * Open streams of all the products without a live payment together, per process: accounts anyone can make never take
 * the room of the products taking payments.
 */
export const NEW_PRODUCTS_STREAMS_MAX = 100;
/** Open streams a process serves in all. */
export const STREAMS_MAX = 500;
/** Streams read at most this many at once, so that they never hold more of the pool's connections. */
const READS_AT_ONCE = 2;
const BATCH_MAX = 100;
const SWEEP_MS = 5_000;
/** Events of a transaction still running wait for it; the stream looks again after this long, doubling up to 1 s. */
const HELD_RETRY_MS = 50;
const HELD_RETRY_MAX_MS = 1_000;
const CHANNEL = 'tolov_events';

export interface StreamOptions {
  /** Only these types (default: every type Tolov sends). */
  types?: readonly string[];
  /** Resume after this event of the merchant's (the SSE Last-Event-ID). */
  after?: string;
}

/** Where a stream's events go: resolves once they are written out, so a slow reader slows its own stream alone. */
export type StreamSend = (events: Event[]) => Promise<void>;

export interface OpenStream {
  /** Starts sending, from the stream's starting place; called once the reader is ready. */
  start(): void;
  close(): void;
  /** Settles when the stream ends: closed, or its sending failed. */
  readonly ended: Promise<void>;
}

const keyOf = (productId: string, livemode: boolean) => `${productId}/${livemode ? 'live' : 'test'}`;

/** A bound on reads in flight across every stream. */
class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly max: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active += 1;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}

export class EventStreams {
  private readonly byProduct = new Map<string, Set<EventStream>>();
  private readonly slots = new Slots();
  private readonly gate = new Gate(READS_AT_ONCE);
  private sweep: NodeJS.Timeout | null = null;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly db: Db,
    private readonly ledger: Pick<LedgerService, 'hadLivePayment'>,
  ) {}

  /** Follows the database's notifications, and looks at every stream every few seconds. */
  async start(): Promise<void> {
    this.unlisten = await this.db.listen(CHANNEL, {
      notified: (key) => this.byProduct.get(key)?.forEach((stream) => stream.wake()),
      listening: (heard) => heard && this.wakeAll(),
    });
    this.sweep = setInterval(() => this.wakeAll(), SWEEP_MS);
    this.sweep.unref();
  }

  /** Ends every stream and stops listening. */
  async stop(): Promise<void> {
    if (this.sweep) clearInterval(this.sweep);
    for (const streams of [...this.byProduct.values()]) for (const stream of [...streams]) stream.close();
    await this.unlisten?.();
  }

  /**
   * Opens a stream of the merchant's events, starting now or after `options.after`, to send each batch through `send`
   * once started.
   * Refused with 429 when the product (in this mode), the products without a live payment, or the process have as many
   * open as they may.
   */
  async open(merchant: Merchant, options: StreamOptions, send: StreamSend): Promise<OpenStream> {
    const [cursor, established] = await Promise.all([
      options.after === undefined ? streamStart(this.db) : streamCursorAfter(this.db, merchant, options.after),
      this.ledger.hadLivePayment(merchant.productId),
    ]);
    if (cursor === undefined) {
      throw new ApiError('VALIDATION_ERROR', `Last-Event-ID must be the id of an event of this key's product and mode from the last 30 days`, {
        param: 'Last-Event-ID',
      });
    }
    // From here to the stream's registration nothing waits, so concurrent opens cannot pass the limits together.
    const key = keyOf(merchant.productId, merchant.livemode);
    const streams = this.byProduct.get(key) ?? new Set<EventStream>();
    const release = this.slots.take(streams.size, established);
    const types = new Set(options.types ?? SENT_EVENT_TYPES);
    const stream = new EventStream(cursor, (from) => this.read(merchant, from), types, send, () => {
      streams.delete(stream);
      if (streams.size === 0) this.byProduct.delete(key);
      release();
    });
    this.byProduct.set(key, streams.add(stream));
    return stream;
  }

  private read(merchant: Merchant, cursor: StreamCursor) {
    return this.gate.run(() => readStream(this.db, merchant, cursor, BATCH_MAX));
  }

  private wakeAll(): void {
    for (const streams of this.byProduct.values()) for (const stream of streams) stream.wake();
  }
}

/**
 * The process's stream slots. A product that has taken a live payment has STREAMS_PER_PRODUCT_MAX per mode; one that
 * has not (known at the stream's opening: a payment later does not move open streams) has a smaller share, from a
 * pool of their own, so the rest of the process's slots stay for products taking payments.
 */
class Slots {
  private total = 0;
  private ofNewProducts = 0;

  /** Takes a slot for a product with `productOpen` streams open in its mode; returns its release. */
  take(productOpen: number, established: boolean): () => void {
    if (established && productOpen >= STREAMS_PER_PRODUCT_MAX) throw tooMany(`A product may have ${STREAMS_PER_PRODUCT_MAX} event streams open in each mode`);
    if (!established && productOpen >= STREAMS_PER_NEW_PRODUCT_MAX) {
      throw tooMany(`A product may have ${STREAMS_PER_NEW_PRODUCT_MAX} event streams open in each mode until its first live payment (then ${STREAMS_PER_PRODUCT_MAX})`);
    }
    if (!established && this.ofNewProducts >= NEW_PRODUCTS_STREAMS_MAX) {
      throw tooMany('This server has as many event streams open for products without a live payment as it serves');
    }
    if (this.total >= STREAMS_MAX) throw tooMany('This server has as many event streams open as it serves');
    this.total += 1;
    if (!established) this.ofNewProducts += 1;
    return () => {
      this.total -= 1;
      if (!established) this.ofNewProducts -= 1;
    };
  }
}

const tooMany = (message: string) => new ApiError('RATE_LIMITED', `${message}: close one first`, { headers: { 'Retry-After': '5' } });

class EventStream implements OpenStream {
  private started = false;
  private reading = false;
  private again = false;
  private closed = false;
  private heldMs = 0;
  private heldTimer: NodeJS.Timeout | null = null;
  private end!: () => void;
  readonly ended = new Promise<void>((resolve) => (this.end = resolve));

  constructor(
    private cursor: StreamCursor,
    private readonly read: (cursor: StreamCursor) => ReturnType<typeof readStream>,
    private readonly types: ReadonlySet<string>,
    private readonly send: StreamSend,
    private readonly forget: () => void,
  ) {}

  start(): void {
    this.started = true;
    this.wake();
  }

  /** Reads what is new; a wake while reading makes it read once more afterwards. */
  wake(): void {
    if (this.closed || !this.started) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    void this.readWhileNew();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.heldTimer) clearTimeout(this.heldTimer);
    this.forget();
    this.end();
  }

  private async readWhileNew(): Promise<void> {
    this.reading = true;
    try {
      do {
        this.again = false;
        if (await this.readOnce()) this.again = true;
      } while (this.again && !this.closed);
    } catch {
      // The database failed a read: the next wake or sweep reads again from the same place. A failed send ended the stream.
    } finally {
      this.reading = false;
    }
  }

  /** Sends the next final events; true when a full batch came back (more may follow at once). */
  private async readOnce(): Promise<boolean> {
    const { xmin, rows } = await this.read(this.cursor);
    // Rows come in transaction order, so the final ones (written before the oldest transaction running) come first.
    const final = rows.filter((row) => BigInt(row.txid) < BigInt(xmin));
    const last = final.at(-1);
    if (last !== undefined && !this.closed) {
      const events = final.filter((row) => this.types.has(row.type)).map(presentEvent);
      if (events.length > 0) await this.send(events).catch((error: unknown) => (this.close(), Promise.reject(error)));
      this.cursor = { txid: last.txid, seq: last.seq };
    }
    this.lookAgainIfHeld(final.length < rows.length);
    return final.length === BATCH_MAX;
  }

  private lookAgainIfHeld(held: boolean): void {
    if (!held) {
      this.heldMs = 0;
      return;
    }
    this.heldMs = Math.min(this.heldMs === 0 ? HELD_RETRY_MS : this.heldMs * 2, HELD_RETRY_MAX_MS);
    if (this.heldTimer) clearTimeout(this.heldTimer);
    this.heldTimer = setTimeout(() => this.wake(), this.heldMs);
  }
}
