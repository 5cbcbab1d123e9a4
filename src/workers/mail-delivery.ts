import type { Mail } from '../modules/mail/service.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 20;
// A sign-up or reset link is awaited by someone at a screen.
const INTERVAL_MS = 1_000;

/** Sends the mail the outbox holds. */
export function mailDelivery(mail: Mail): Worker {
  return { name: 'mail-delivery', intervalMs: INTERVAL_MS, batchMax: BATCH_MAX, runOnce: () => mail.deliver(BATCH_MAX) };
}
