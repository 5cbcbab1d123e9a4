// The daily reconciliation report: Tolov's record of money moved against the bank's, operation by operation, and of
// receipts fiscalized against the fiscal module's registrations, receipt by receipt.
import type { Db } from '../../db/types.js';
import { isCalendarDay } from '../../core/calendar.js';
import type { RegisteredReceipt } from '../../rails/fiscal.js';
import type { FiscalModules, Rails } from '../../rails/index.js';
import type { RecordedOperation } from '../../rails/rail.js';
import { debitOperationsBetween, type RecordedMoney } from '../payments/service.js';
import { fiscalizedBetween } from '../receipts/service.js';
import { refundOperationsBetween } from '../refunds/service.js';
import { transfersBetween } from '../payouts/service.js';
import type { Mismatch, MismatchProblem, ReceiptMismatch, ReceiptProblem, ReceiptsReconciliation, ReconciliationReport } from './schema.js';

/** The days a report can be asked for: real calendar days whose next day is still a date. */
const FIRST_DAY = '1970-01-01';
const LAST_DAY = '9998-12-31';

/** Whether `date` is a real UTC calendar day, YYYY-MM-DD, within the days a report covers (not 2026-13-45). */
export function isReportDay(date: string): boolean {
  return isCalendarDay(date) && date >= FIRST_DAY && date <= LAST_DAY;
}

export const REPORT_DAY_RULE = `a real UTC day, YYYY-MM-DD, from ${FIRST_DAY} to ${LAST_DAY}`;

/** Operations, and receipts, compared per side in one report; beyond this the report says it is truncated. */
export const REPORT_OPERATIONS_MAX = 10_000;

interface TolovOperation extends RecordedMoney {
  type: RecordedOperation['type'];
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
   * executed, by operation id: a succeeded operation on one side (a PAID payout) must be a succeeded operation of the
   * same amount on the other.
   */
  async #money(livemode: boolean, from: Date, to: Date): Promise<Pick<ReconciliationReport, 'compared' | 'truncated' | 'mismatches'>> {
    // Each side's first operations of the day, merged: the day's first REPORT_OPERATIONS_MAX of both.
    const [debits, refunds, transfers] = await Promise.all([
      debitOperationsBetween(this.db, livemode, from, to, REPORT_OPERATIONS_MAX),
      refundOperationsBetween(this.db, livemode, from, to, REPORT_OPERATIONS_MAX),
      transfersBetween(this.db, livemode, from, to, REPORT_OPERATIONS_MAX),
    ]);
    const tolov: TolovOperation[] = [
      ...debits.map((operation) => ({ ...operation, type: 'debit' as const })),
      ...refunds.map((operation) => ({ ...operation, type: 'refund' as const })),
      ...transfers.map((operation) => ({ ...operation, status: operation.status === 'PAID' ? 'SUCCEEDED' : operation.status, type: 'transfer' as const })),
    ]
      .sort((a, b) => a.created_at.getTime() - b.created_at.getTime())
      .slice(0, REPORT_OPERATIONS_MAX);
    const bank = await this.rails.forMode(livemode).operations(from, to, REPORT_OPERATIONS_MAX);
    const bankById = new Map<string, RecordedOperation>(bank.map((operation) => [operation.operationId, operation]));
    const tolovById = new Map(tolov.map((operation) => [operation.operation_id, operation]));

    const mismatches: Mismatch[] = [];
    const view = (operation: { status: string; amount: number } | undefined) => (operation ? { status: operation.status, amount: operation.amount } : null);
    for (const ours of tolov) {
      const theirs = bankById.get(ours.operation_id);
      const oursMoved = ours.status === 'SUCCEEDED';
      const theirsMoved = theirs?.status === 'SUCCEEDED';
      const problem: MismatchProblem | null =
        oursMoved && !theirsMoved ? 'missing_at_bank' : !oursMoved && theirsMoved ? 'missing_at_tolov' : oursMoved && theirs!.amount !== ours.amount ? 'amount_differs' : null;
      if (problem) mismatches.push({ operationId: ours.operation_id, type: ours.type, problem, tolov: view(ours), bank: view(theirs) });
    }
    for (const theirs of bank) {
      if (theirs.status === 'SUCCEEDED' && !tolovById.has(theirs.operationId)) {
        mismatches.push({ operationId: theirs.operationId, type: theirs.type, problem: 'missing_at_tolov', tolov: null, bank: view(theirs) });
      }
    }
    return {
      compared: { tolov: tolov.length, bank: bank.length },
      truncated: tolov.length >= REPORT_OPERATIONS_MAX || bank.length >= REPORT_OPERATIONS_MAX,
      mismatches,
    };
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
