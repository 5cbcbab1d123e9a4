// What reconciliation makes of the rail's own record, shared by debits and refunds.
import type { FastifyBaseLogger } from 'fastify';
import type { Rail, RailOutcome } from './rail.js';

/** How long one process keeps an operation to itself while it asks the rail. */
export const RECONCILE_LEASE_MS = 60_000;
const BACKOFF_BASE_MS = 5_000;
const BACKOFF_MAX_MS = 60 * 60 * 1000;

/** The wait before asking again after `attempts` unclear answers: doubling, never longer than an hour. */
export function reconcileBackoffMs(attempts: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** Math.min(attempts, 20), BACKOFF_MAX_MS);
}

/**
 * The final truth about an operation, or UNKNOWN. Callers ask only after the operation's call window has passed, so an
 * operation the rail never recorded will not arrive any more: it failed and moved no money.
 */
export async function askRail(rail: Rail, operationId: string, log: FastifyBaseLogger): Promise<RailOutcome> {
  try {
    const status = await rail.status(operationId);
    return status.status === 'NOT_FOUND' ? { status: 'FAILED', failureCode: 'PROCESSING_ERROR' } : status;
  } catch (error) {
    log.warn({ err: error, operationId }, 'rail status unavailable; will ask again');
    return { status: 'UNKNOWN' };
  }
}
