import type { PaymentsService } from '../modules/payments/service.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 200;
const INTERVAL_MS = 10_000;

/** Moves succeeded payments' net amounts from pending to available once the settlement delay has passed. */
export function settlement(payments: PaymentsService, delaySeconds: number): Worker {
  return {
    name: 'settlement',
    intervalMs: INTERVAL_MS,
    batchMax: BATCH_MAX,
    runOnce: () => payments.settle(delaySeconds, BATCH_MAX),
  };
}
