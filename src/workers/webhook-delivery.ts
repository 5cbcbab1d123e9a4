import type { FastifyBaseLogger } from 'fastify';
import type { WebhooksService } from '../modules/webhooks/service.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 256;
const INTERVAL_MS = 250;

/**
 * Leases due webhook attempts and starts them, without waiting for them to end, so that a slow endpoint never holds
 * back the next batch; any number of these loops, in any number of processes, may run at once.
 */
export function webhookDelivery(webhooks: WebhooksService, log: FastifyBaseLogger): Worker {
  return {
    name: 'webhook-delivery',
    intervalMs: INTERVAL_MS,
    batchMax: BATCH_MAX,
    runOnce: async () => {
      const { leased, done } = await webhooks.startDue(BATCH_MAX);
      done.catch((error: unknown) => log.error({ err: error }, 'recording a webhook attempt failed'));
      return leased;
    },
  };
}
