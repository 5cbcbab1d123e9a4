// The money checks: what must hold at every instant for the books to be right, each found true or listed as
// broken, for the operator's page and for monitoring (`GET /admin/v1/checks`).
import type { Db } from '../../db/types.js';
import type { ReconciliationService } from '../reconciliation/service.js';
import type { Check, CheckList, CheckProblem } from './schema.js';
import * as store from './store.js';

/** Problems listed per check; a check with more says it is truncated. */
export const PROBLEMS_MAX = 100;
const HOUR_SECONDS = 3600;
/** How long a final failure (a receipt, a payout) stays on the checks: long enough for someone to act on it. */
const FAILURES_LISTED_DAYS = 30;

type Finding = Omit<CheckProblem, 'productId' | 'livemode' | 'objectId'> & Partial<Pick<CheckProblem, 'productId' | 'livemode' | 'objectId'>>;

/** A check from what it found: at most PROBLEMS_MAX problems, each with every field present. */
function checked(name: string, description: string, found: Finding[]): Check {
  const problems = found.slice(0, PROBLEMS_MAX).map((problem) => ({ objectId: null, productId: null, livemode: null, ...problem }));
  return { object: 'check', name, description, ok: found.length === 0, problems, truncated: found.length > PROBLEMS_MAX };
}

const mode = (livemode: boolean) => (livemode ? 'live' : 'test');
/** Tolov's statuses of an operation whose outcome it is still asking the bank about. */
const OPEN_STATUSES = new Set(['PROCESSING', 'PENDING', 'IN_TRANSIT']);

async function ledgerTotal(db: Db): Promise<Check> {
  const totals = await store.ledgerTotals(db);
  const found = totals.map((row) => ({ message: `The ${mode(row.livemode)} ledger sums to ${row.total} tiyin, not 0`, livemode: row.livemode }));
  return checked('ledger_total_zero', "The ledger's entries sum to zero in each mode", found);
}

async function ledgerBalanced(db: Db): Promise<Check> {
  const rows = await store.unbalancedTransactions(db, PROBLEMS_MAX + 1);
  const found = rows.map((row) => ({
    message: `Ledger transaction ${row.transaction_id} is unbalanced by ${row.total} tiyin`,
    objectId: row.transaction_id,
    productId: row.product_id,
    livemode: row.livemode,
  }));
  return checked('ledger_transactions_balanced', "Every ledger transaction's entries sum to zero", found);
}

async function balances(db: Db): Promise<Check> {
  const found: Finding[] = [];
  for (const row of await store.productMoney(db)) {
    const where = { productId: row.product_id, livemode: row.livemode };
    if (row.available !== row.statement_available || row.pending !== row.statement_pending) {
      found.push({
        ...where,
        message: `The balance (available ${row.available}, pending ${row.pending}) differs from its statement (available ${row.statement_available}, pending ${row.statement_pending})`,
      });
    }
    const total = BigInt(row.available) + BigInt(row.pending);
    if (total !== BigInt(row.expected)) {
      found.push({ ...where, message: `available + pending is ${total} tiyin; payments − fees − refunds − payouts make ${row.expected}` });
    }
  }
  return checked(
    'balances',
    "Each product's balance equals its statement, and available + pending = succeeded payments − fees − succeeded refunds − payouts not FAILED or CANCELED",
    found,
  );
}

/**
 * The checks of the books alone: the ledger sums to zero, each transaction balances, each balance equals its statement.
 * A restored backup must pass them (`npm run restore-drill`).
 */
export async function bookChecks(db: Db): Promise<Check[]> {
  return [await ledgerTotal(db), await ledgerBalanced(db), await balances(db)];
}

export class ChecksService {
  constructor(
    private readonly db: Db,
    private readonly reconciliation: Pick<ReconciliationService, 'report'>,
  ) {}

  /** Every check, in the order an operator reads them: the books first, then what waits too long. */
  async all(now = new Date()): Promise<CheckList> {
    const data = [
      ...(await bookChecks(this.db)),
      await this.#bank(now),
      ...(await this.#stuckObjects()),
      await this.#endpoints(),
    ];
    return { object: 'list', data, has_more: false };
  }

  /** Yesterday's and today's (UTC) reconciliation reports of both modes; a mode without a bank is not compared. */
  async #bank(now: Date): Promise<Check> {
    const today = now.toISOString().slice(0, 10);
    const yesterday = new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10);
    const found: Finding[] = [];
    for (const livemode of [false, true]) {
      for (const date of [yesterday, today]) {
        try {
          const report = await this.reconciliation.report(date, livemode);
          // An operation still open at Tolov waits for reconciliation, which settles it within its call window and
          // the reconcile interval; one open for over an hour is listed by `operations_open`.
          for (const mismatch of report.mismatches.filter((m) => !OPEN_STATUSES.has(m.tolov?.status ?? ''))) {
            found.push({ livemode, objectId: mismatch.operationId, message: `${date}: ${mismatch.type} ${mismatch.operationId} is ${mismatch.problem}` });
          }
          if (report.truncated) found.push({ livemode, message: `${date}: more mismatches than one report lists; the rest are not listed` });
        } catch (error) {
          if (livemode && (error as { code?: string }).code === 'RAIL_UNAVAILABLE') continue;
          found.push({ livemode, message: `${date}: the bank's record could not be read: ${(error as Error).message.slice(0, 200)}` });
        }
      }
    }
    return checked('bank_reconciliation', "Yesterday's and today's money operations match the bank's record, operation by operation (those Tolov is still settling aside)", found);
  }

  async #stuckObjects(): Promise<Check[]> {
    const limit = PROBLEMS_MAX + 1;
    const since = (row: { created_at: Date }) => row.created_at.toISOString();
    const open = { olderThanSeconds: HOUR_SECONDS, withinDays: null, limit };
    const processing = await store.stuck(this.db, 'payment_intents', { status: 'PROCESSING', ...open });
    const refunding = await store.stuck(this.db, 'refunds', { status: 'PENDING', ...open });
    const holdEnding = await store.stuck(this.db, 'hold_ends', { status: 'PENDING', ...open });
    const inTransit = await store.stuck(this.db, 'payouts', { status: 'IN_TRANSIT', ...open });
    const pendingReceipts = await store.stuck(this.db, 'receipts', { status: 'PENDING', olderThanSeconds: HOUR_SECONDS, withinDays: null, limit });
    const failedReceipts = await store.stuck(this.db, 'receipts', { status: 'FAILED', olderThanSeconds: 0, withinDays: FAILURES_LISTED_DAYS, limit });
    const failedPayouts = await store.stuck(this.db, 'payouts', { status: 'FAILED', olderThanSeconds: 0, withinDays: FAILURES_LISTED_DAYS, limit });
    const problem = (what: string) => (row: { id: string; product_id: string; livemode: boolean; created_at: Date }) => ({
      objectId: row.id,
      productId: row.product_id,
      livemode: row.livemode,
      message: `${row.id} ${what} (since ${since(row)})`,
    });
    return [
      checked('operations_open', "No payment stays PROCESSING, no hold's capture or release and no refund PENDING, and no payout IN_TRANSIT for over an hour: the bank has not settled them", [
        ...processing.map(problem('is still PROCESSING')),
        ...holdEnding.map(problem('is still PENDING')),
        ...refunding.map(problem('is still PENDING')),
        ...inTransit.map(problem('is still IN_TRANSIT')),
      ]),
      checked('receipts_unsettled', `No receipt stays PENDING for over an hour; receipts FAILED in the last ${FAILURES_LISTED_DAYS} days`, [
        ...pendingReceipts.map(problem('is still PENDING')),
        ...failedReceipts.map(problem('FAILED')),
      ]),
      checked('payouts_failed', `Payouts FAILED in the last ${FAILURES_LISTED_DAYS} days`, failedPayouts.map(problem('FAILED'))),
    ];
  }

  async #endpoints(): Promise<Check> {
    const rows = await store.failingEndpoints(this.db, PROBLEMS_MAX + 1);
    const found = rows.map((row) => ({
      objectId: row.id,
      productId: row.product_id,
      livemode: row.livemode,
      message: `${row.url} has failed every delivery since ${row.failing_since.toISOString()}`,
    }));
    return checked('webhook_endpoints_failing', 'No enabled webhook endpoint has failed every delivery for a day', found);
  }
}
