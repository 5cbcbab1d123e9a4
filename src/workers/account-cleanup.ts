import type { AccountsService } from '../modules/accounts/service.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 1_000;
const INTERVAL_MS = 60 * 60 * 1000;

/** Deletes what accounts no longer need: sessions and mailed links a day after they ended, spent throttles, old mail. */
export function accountCleanup(accounts: AccountsService): Worker {
  return { name: 'account-cleanup', intervalMs: INTERVAL_MS, batchMax: BATCH_MAX, runOnce: () => accounts.deleteEnded(BATCH_MAX) };
}
