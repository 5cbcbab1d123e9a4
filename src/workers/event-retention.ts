import type { WebhooksService } from '../modules/webhooks/service.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 1_000;
const INTERVAL_MS = 60 * 60 * 1000;

/** Deletes events older than 30 days, with their deliveries. */
export function eventRetention(webhooks: WebhooksService): Worker {
  return { name: 'event-retention', intervalMs: INTERVAL_MS, batchMax: BATCH_MAX, runOnce: () => webhooks.deleteOldEvents(BATCH_MAX) };
}
