import type { WebhooksService } from '../modules/webhooks/service.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 256;
const INTERVAL_MS = 250;

/** Sends due webhook attempts; any number of these loops, in any number of processes, may run at once. */
export function webhookDelivery(webhooks: WebhooksService): Worker {
  return { name: 'webhook-delivery', intervalMs: INTERVAL_MS, batchMax: BATCH_MAX, runOnce: () => webhooks.deliverDue(BATCH_MAX) };
}
