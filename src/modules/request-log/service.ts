// The request log: each product's and mode's latest API calls (no bodies, no secrets). A request only adds its entry
// to this process's buffer; a worker writes the buffer every second in one statement, so the log costs a request
// nothing it waits for. Entries still in the buffer when a process is killed are lost: the log is for looking, not
// for accounting.
import type { Db } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { ApiError } from '../../core/errors.js';
import { listPage, type List } from '../../core/pagination.js';
import type { RequestLogEntry, RequestLogQuery } from './schema.js';
import * as store from './store.js';
import type { EntryRow, NewEntry } from './store.js';

/** Entries kept per product and mode. */
export const REQUEST_LOG_KEPT = 1_000;
/** Entries a process holds before writing; past it, new ones are dropped until the next write. */
const BUFFER_MAX = 10_000;

function present(row: EntryRow): RequestLogEntry {
  return {
    id: row.id,
    object: 'request_log',
    method: row.method,
    path: row.path,
    status: row.status,
    durationMs: row.duration_ms,
    idempotencyKey: row.idempotency_key,
    livemode: row.livemode,
    created: row.created_at.toISOString(),
  };
}

export class RequestLog {
  private pending: NewEntry[] = [];

  constructor(private readonly db: Db) {}

  /** Notes one call; written by the next `flush`. */
  record(entry: NewEntry): void {
    if (this.pending.length < BUFFER_MAX) this.pending.push(entry);
  }

  /** Writes up to `batchMax` buffered entries and trims the logs they belong to; returns how many it wrote. */
  async flush(batchMax: number): Promise<number> {
    const batch = this.pending.splice(0, batchMax);
    if (batch.length === 0) return 0;
    await store.insertEntries(this.db, batch);
    const pairs = new Map(batch.map((entry) => [`${entry.productId}/${entry.livemode}`, { productId: entry.productId, livemode: entry.livemode }]));
    await store.trim(this.db, [...pairs.values()], REQUEST_LOG_KEPT);
    return batch.length;
  }

  /** The merchant's latest calls, newest first; this process's buffer is written first, so its calls are all there. */
  async list(merchant: Merchant, query: RequestLogQuery): Promise<List<RequestLogEntry>> {
    await this.flush(BUFFER_MAX);
    if (query.ending_before === undefined) return listPage(this.db, store.REQUEST_LOG_LIST, merchant, query, present);
    if (query.starting_after !== undefined) {
      throw new ApiError('VALIDATION_ERROR', 'Give starting_after or ending_before, not both', { param: 'ending_before' });
    }
    const rows = await store.entriesAfter(this.db, merchant, query.ending_before, query.limit + 1);
    if (rows === undefined) {
      throw new ApiError('VALIDATION_ERROR', 'ending_before must be the id of a request in this log', { param: 'ending_before' });
    }
    return { object: 'list', data: rows.slice(0, query.limit).reverse().map(present), has_more: rows.length > query.limit };
  }
}
