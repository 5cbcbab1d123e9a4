import type { HoldsService } from '../modules/holds/service.js';
import type { Worker } from './loop.js';

/** Holds released per batch: each is a call to the bank, made one after the other. */
const BATCH_MAX = 50;

/** Releases two-step payments' holds that waited TOLOV_HOLD_DAYS for a capture (payment_intent.hold_released). */
export function holdExpiry(holds: HoldsService, intervalMs: number): Worker {
  return { name: 'hold-expiry', intervalMs, batchMax: BATCH_MAX, runOnce: () => holds.releaseExpired(BATCH_MAX) };
}
