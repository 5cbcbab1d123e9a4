import type { ReceiptsService } from '../modules/receipts/service.js';
import type { Worker } from './loop.js';

/** Receipts registered at once, in parallel: each call waits on the fiscal module, not on this process. */
const BATCH_MAX = 32;
/** Test mode's module signs at once: a buyer's paid screen shows its receipt within about this long. */
const INTERVAL_MS = 500;

/** Registers due PENDING receipts with the fiscal module and records the outcome once. */
export function fiscalization(receipts: ReceiptsService): Worker {
  return { name: 'fiscalization', intervalMs: INTERVAL_MS, batchMax: BATCH_MAX, runOnce: () => receipts.fiscalizeDue(BATCH_MAX) };
}
