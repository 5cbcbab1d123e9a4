import type { AccountsService } from '../modules/accounts/service.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 1_000;
const INTERVAL_MS = 60 * 60 * 1000;

/** Deletes dashboard sessions a day after they ended, and the throttles of attempts that no longer count. */
export function sessionCleanup(accounts: AccountsService): Worker {
  return { name: 'session-cleanup', intervalMs: INTERVAL_MS, batchMax: BATCH_MAX, runOnce: () => accounts.deleteEnded(BATCH_MAX) };
}
