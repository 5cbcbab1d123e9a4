import type { PayoutsService } from '../modules/payouts/service.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 100;
const INTERVAL_MS = 10_000;

/**
 * Runs each day's automatic payouts once Tashkent's payout time has come (each product once a day, whichever process
 * gets there first), and sends PENDING payouts to the bank.
 */
export function payouts(service: PayoutsService): Worker {
  return {
    name: 'payouts',
    intervalMs: INTERVAL_MS,
    batchMax: BATCH_MAX,
    runOnce: async () => Math.max(await service.runDaily(BATCH_MAX), await service.sendDue(BATCH_MAX)),
  };
}
