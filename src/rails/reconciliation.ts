// What reconciliation makes of the rail's own record, shared by debits and refunds.
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Transaction } from '../db/types.js';
import type { Rails } from './index.js';
import type { Rail, RailOutcome } from './rail.js';

/** How long one process keeps an operation to itself while it asks the rail. */
const RECONCILE_LEASE_MS = 60_000;
const BACKOFF_BASE_MS = 5_000;
const BACKOFF_MAX_MS = 60 * 60 * 1000;

/** The wait before asking again after `attempts` unclear answers: doubling, never longer than an hour. */
function reconcileBackoffMs(attempts: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** Math.min(attempts, 20), BACKOFF_MAX_MS);
}

/**
 * The final truth about an operation, or UNKNOWN. An operation the rail never executed is fenced first, so that it never
 * executes afterwards (a call still on its way, or one the bank is slow to run): only then is it failed, having moved
 * no money. Callers ask once the operation's call window has passed, when a fence is rarely needed.
 */
async function askRail(rail: Rail, operationId: string, log: FastifyBaseLogger): Promise<RailOutcome> {
  try {
    const settled = await rail.fence(operationId);
    return settled.status === 'FENCED' ? { status: 'FAILED', failureCode: 'PROCESSING_ERROR' } : settled;
  } catch (error) {
    log.warn({ err: error, operationId }, 'rail fence unavailable; will ask again');
    return { status: 'UNKNOWN' };
  }
}

/** An operation left open (a PROCESSING debit, a PENDING refund); its id is its operation id at the rail. */
export interface OpenOperation {
  id: string;
  livemode: boolean;
  reconcile_count: number;
}

/**
 * One reconciliation batch: leases due open operations, asks the rail about each outside any transaction, and applies
 * what it says in a transaction of its own (once: `apply` changes only what is still open). Returns how many it leased.
 * An operation that cannot be reconciled now (its mode's rail not set up, its outcome failing to apply) holds up none
 * of the others: it is logged, and asked about again once its lease ends.
 */
export async function reconcileBatch(
  db: Db,
  rails: Rails,
  log: FastifyBaseLogger,
  lease: (leaseMs: number) => Promise<OpenOperation[]>,
  apply: (tx: Transaction, id: string, outcome: RailOutcome, retryInMs: number) => Promise<unknown>,
): Promise<number> {
  const leased = await lease(RECONCILE_LEASE_MS);
  for (const operation of leased) {
    try {
      const known = await askRail(rails.forMode(operation.livemode), operation.id, log);
      await db.transaction((tx) => apply(tx, operation.id, known, reconcileBackoffMs(operation.reconcile_count)));
    } catch (error) {
      log.error({ err: error, operationId: operation.id }, 'reconciliation failed; will try again once its lease ends');
    }
  }
  return leased.length;
}
