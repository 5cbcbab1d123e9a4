// The daily reconciliation report: Tolov's record of money moved against the bank's, operation by operation, and of
// receipts fiscalized against the fiscal module's registrations, receipt by receipt.
import type { Db } from '../../db/types.js';
import { isCalendarDay } from '../../core/calendar.js';
import type { RegisteredReceipt } from '../../rails/fiscal.js';
import type { FiscalModules, Rails } from '../../rails/index.js';
import type { RecordedOperation } from '../../rails/rail.js';
import { debitOperationsBetween, type OperationsPage, type RecordedMoney } from '../payments/service.js';
import { fiscalizedBetween } from '../receipts/service.js';
import { holdEndOperationsBetween } from '../holds/service.js';
import { refundOperationsBetween } from '../refunds/service.js';
import { transfersBetween } from '../payouts/service.js';
import { joinedById, mergedById, paged } from './streams.js';
import type { Mismatch, MismatchProblem, ReceiptMismatch, ReceiptProblem, ReceiptsReconciliation, ReconciliationReport } from './schema.js';

/** The days a report can be asked for: real calendar days whose next day is still a date. */
const FIRST_DAY = '1970-01-01';
const LAST_DAY = '9998-12-31';

/** Whether `date` is a real UTC calendar day, YYYY-MM-DD, within the days a report covers (not 2026-13-45). */
export function isReportDay(date: string): boolean {
  return isCalendarDay(date) && date >= FIRST_DAY && date <= LAST_DAY;
}

export const REPORT_DAY_RULE = `a real UTC day, YYYY-MM-DD, from ${FIRST_DAY} to ${LAST_DAY}`;

/** Receipts compared per side in one report; beyond this the report says its receipts part is truncated. */
export const REPORT_OPERATIONS_MAX = 10_000;
/** Mismatches a report lists; beyond this it says it is truncated. */
export const REPORT_MISMATCHES_MAX = 1_000;
/**
 * The most two sides' dating of one operation can differ: Tolov dates it when it records it, the bank when it executes
 * it, which is before the call's deadline or never.
 */
const DATING_MARGIN_MS = 3_600_000;

const view = (operation: { status: string; amount: number } | null) => (operation ? { status: operation.status, amount: operation.amount } : null);

/** What is wrong with one operation as the two sides hold it, or null when they agree on the money. */
function mismatchOf(ours: RecordedMoney | null, theirs: RecordedOperation | null): Mismatch | null {
  const oursMoved = ours?.status === 'SUCCEEDED';
  const theirsMoved = theirs?.status === 'SUCCEEDED';
  const problem: MismatchProblem | null =
    oursMoved && !theirsMoved ? 'missing_at_bank' : !oursMoved && theirsMoved ? 'missing_at_tolov' : oursMoved && theirs!.amount !== ours!.amount ? 'amount_differs' : null;
  if (problem === null) return null;
  return { operationId: (ours?.operation_id ?? theirs?.operationId)!, type: (ours?.type ?? theirs?.type)!, problem, tolov: view(ours), bank: view(theirs) };
}

export class ReconciliationService {
  constructor(
    private readonly db: Db,
    private readonly rails: Rails,
    private readonly fiscal: FiscalModules,
  ) {}

  /** The day's report: its money (the fields the report always had) and its receipts. */
  async report(date: string, livemode: boolean): Promise<ReconciliationReport> {
    const from = new Date(`${date}T00:00:00.000Z`);
    const to = new Date(from.getTime() + 86_400_000);
    const [money, receipts] = await Promise.all([this.#money(livemode, from, to), this.#receipts(livemode, from, to)]);
    return { object: 'reconciliation_report', date, mode: livemode ? 'live' : 'test', ...money, receipts };
  }

  /**
   * Compares every debit and refund Tolov recorded in [from, to), and every payout it sent then, with what the bank
   * executed then, by operation id over the whole day: a succeeded operation on one side (a PAID payout) must be a
   * succeeded operation of the same amount on the other. Both sides are read a page at a time in id order, each over
   * the day widened by DATING_MARGIN_MS, so that an operation Tolov dates just before midnight and the bank just after
   * is matched, not reported twice.
   */
  async #money(livemode: boolean, from: Date, to: Date): Promise<Pick<ReconciliationReport, 'compared' | 'truncated' | 'mismatches'>> {
    const wide = { livemode, from: new Date(from.getTime() - DATING_MARGIN_MS), to: new Date(to.getTime() + DATING_MARGIN_MS) };
    const rail = this.rails.forMode(livemode);
    const bank = paged((after, limit) => rail.operations({ from: wide.from, to: wide.to, after, limit }), (operation) => operation.operationId);
    const within = (at: Date) => at >= from && at < to;
    const compared = { tolov: 0, bank: 0 };
    const mismatches: Mismatch[] = [];
    let truncated = false;
    for await (const [ours, theirs] of joinedById(this.#tolovOperations(wide), bank, (operation) => operation.operation_id, (operation) => operation.operationId)) {
      const oursToday = ours !== null && within(ours.created_at);
      const theirsToday = theirs !== null && within(theirs.executedAt);
      if (!oursToday && !theirsToday) continue;
      if (oursToday) compared.tolov += 1;
      if (theirsToday) compared.bank += 1;
      const mismatch = mismatchOf(ours, theirs);
      if (mismatch === null) continue;
      if (mismatches.length < REPORT_MISMATCHES_MAX) mismatches.push(mismatch);
      else truncated = true;
    }
    return { compared, truncated, mismatches };
  }

  /** Tolov's debits and holds, holds' captures and releases, refunds and transfers of a span, as one stream by operation id. */
  #tolovOperations(span: Omit<OperationsPage, 'after' | 'limit'>): AsyncGenerator<RecordedMoney> {
    const id = (operation: RecordedMoney) => operation.operation_id;
    const debits = paged((after, limit) => debitOperationsBetween(this.db, { ...span, after, limit }), id);
    const holdEnds = paged((after, limit) => holdEndOperationsBetween(this.db, { ...span, after, limit }), id);
    const refunds = paged((after, limit) => refundOperationsBetween(this.db, { ...span, after, limit }), id);
    const transfers = paged(
      async (after, limit) =>
        (await transfersBetween(this.db, { ...span, after, limit })).map((row) => ({ ...row, status: row.status === 'PAID' ? 'SUCCEEDED' : row.status, type: 'transfer' as const })),
      id,
    );
    return mergedById([debits, holdEnds, refunds, transfers], id);
  }

  /**
   * Compares the receipts Tolov counts FISCALIZED in [from, to) with those the fiscal module registered then, by
   * receipt id (both sides date a receipt by the module's registration time); null when the mode has no module.
   */
  async #receipts(livemode: boolean, from: Date, to: Date): Promise<ReceiptsReconciliation | null> {
    const module = this.fiscal.forMode(livemode);
    if (module === null) return null;
    const tolov = await fiscalizedBetween(this.db, livemode, from, to, REPORT_OPERATIONS_MAX);
    let fiscal: RegisteredReceipt[];
    try {
      fiscal = await module.registrations(from, to, REPORT_OPERATIONS_MAX);
    } catch (error) {
      // The money's comparison stands whatever the fiscal module does: the report says why its receipts part is empty.
      return { compared: { tolov: tolov.length, fiscal: 0 }, truncated: false, mismatches: [], error: (error as Error).message.slice(0, 200) };
    }
    const fiscalById = new Map<string, RegisteredReceipt>(fiscal.map((receipt) => [receipt.id, receipt]));
    const tolovIds = new Set(tolov.map((receipt) => receipt.id));
    const view = (receipt: RegisteredReceipt | undefined) => (receipt ? { type: receipt.type, amount: receipt.amount } : null);
    const mismatches: ReceiptMismatch[] = [];
    for (const ours of tolov) {
      const theirs = fiscalById.get(ours.id);
      const problem: ReceiptProblem | null =
        theirs === undefined ? 'missing_at_fiscal' : theirs.amount !== ours.amount ? 'amount_differs' : theirs.type !== ours.type ? 'type_differs' : null;
      if (problem) mismatches.push({ receiptId: ours.id, problem, tolov: view(ours), fiscal: view(theirs) });
    }
    for (const theirs of fiscal) {
      if (!tolovIds.has(theirs.id)) mismatches.push({ receiptId: theirs.id, problem: 'missing_at_tolov', tolov: null, fiscal: view(theirs) });
    }
    return {
      compared: { tolov: tolov.length, fiscal: fiscal.length },
      truncated: tolov.length >= REPORT_OPERATIONS_MAX || fiscal.length >= REPORT_OPERATIONS_MAX,
      mismatches,
      error: null,
    };
  }
}
