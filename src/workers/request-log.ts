import type { RequestLog } from '../modules/request-log/service.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 5_000;
const INTERVAL_MS = 1_000;

/** Writes the calls noted since the last round, every second, in one statement per batch. */
export function requestLogWriter(log: RequestLog): Worker {
  return { name: 'request-log', intervalMs: INTERVAL_MS, batchMax: BATCH_MAX, runOnce: () => log.flush(BATCH_MAX) };
}
