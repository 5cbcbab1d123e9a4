// Refunds: full amount only, at most one that has not failed per payment. The same phases as a debit: record the
// refund with its operation id → call the rail → record the outcome (and its ledger entries) once.
import type { FastifyBaseLogger } from 'fastify';
import { afterCommit, isUniqueViolation, type Db, type Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { ApiError, notFound } from '../../core/errors.js';
import { foreignCall, type PhaseResult, type Steps } from '../../core/idempotency.js';
import type { Answer, Commands, Invocation } from '../../core/commands.js';
import { listPage, type List, type ListFilter } from '../../core/pagination.js';
import { newId } from '../../core/ids.js';
import type { Rails } from '../../rails/index.js';
import type { RailOutcome } from '../../rails/rail.js';
import { reconcileBatch } from '../../rails/reconciliation.js';
import type { LedgerService } from '../ledger/service.js';
import type { Outcomes } from '../monitoring/outcomes.js';
import type { PaymentsService } from '../payments/service.js';
import type { ReceiptsService } from '../receipts/service.js';
import type { CreateRefundBody, Refund, RefundsQuery } from './schema.js';
import * as store from './store.js';
import type { RefundRow } from './store.js';

/** Pages of the refunds created in [from, to) that went to the bank, by id: what reconciliation compares with the bank's. */
export { refundOperationsBetween } from './store.js';

export function presentRefund(row: RefundRow): Refund {
  return {
    id: row.id,
    object: 'refund',
    amount: row.amount,
    currency: row.currency,
    paymentIntent: row.payment_intent_id,
    status: row.status,
    failureCode: row.failure_code,
    reason: row.reason,
    receipt: row.receipt_id,
    livemode: row.livemode,
    created: row.created_at.toISOString(),
  };
}

const alreadyRefunded = () => new ApiError('ALREADY_REFUNDED', 'This payment already has a refund');

export class RefundsService {
  constructor(
    private readonly db: Db,
    private readonly rails: Rails,
    private readonly payments: PaymentsService,
    private readonly ledger: LedgerService,
    private readonly receipts: Pick<ReceiptsService, 'recordReturn'>,
    private readonly commands: Commands,
    private readonly log: FastifyBaseLogger,
    private readonly outcomes: Outcomes,
  ) {}

  /** Refunds a SUCCEEDED payment's full amount: 201 with the refund; audited when a dashboard user refunds it. */
  create(invocation: Invocation, body: CreateRefundBody): Promise<Answer<Refund>> {
    return this.commands.run(invocation, this.createPhases(invocation.scope, body), { audit: { action: 'payment.refunded', target: body.paymentIntent } });
  }

  /**
   * Applies a rail outcome to a PENDING refund, once; a success debits the merchant's available balance and writes the
   * return receipt of a payment that had a sale receipt.
   */
  async applyRefundOutcome(tx: Transaction, id: string, outcome: RailOutcome, retryInMs: number): Promise<RefundRow> {
    if (outcome.status === 'UNKNOWN') {
      store.deferRefund(tx, id, retryInMs);
      return store.refundById(tx, id);
    }
    const finished = await store.finishRefund(tx, id, outcome);
    if (!finished) return store.refundById(tx, id);
    afterCommit(tx, () => this.outcomes.payment('refund', outcome.status === 'SUCCEEDED' ? 'succeeded' : 'failed', finished.livemode));
    if (finished.status !== 'SUCCEEDED') return finished;
    const receiptId = await this.receipts.recordReturn(tx, finished);
    const row = receiptId === null ? finished : await store.attachReceipt(tx, id, receiptId);
    this.payments.recordRefunded(tx, row.payment_intent_id, row.amount);
    this.ledger.post(tx, {
      productId: row.product_id,
      livemode: row.livemode,
      reason: 'refund_succeeded',
      referenceId: row.id,
      entries: [
        { account: 'merchant_available', amount: -row.amount },
        { account: 'rail_clearing', amount: row.amount },
      ],
      statement: { type: 'refund', amount: -row.amount, fee: 0, status: 'available' },
    });
    return row;
  }

  private async callRefund(id: string): Promise<RailOutcome> {
    const refund = await store.refundCallOf(this.db, id);
    try {
      return await this.rails.forMode(refund.livemode).refund({
        operationId: id,
        debitOperationId: refund.debit_operation_id,
        token: refund.rail_token,
        amount: refund.amount,
      });
    } catch (error) {
      this.log.warn({ err: error, refund: id }, 'refund call failed; left PENDING for reconciliation');
      return { status: 'UNKNOWN' };
    }
  }

  private createPhases(merchant: Merchant, body: CreateRefundBody): Steps {
    const window = this.rails.forMode(merchant.livemode).callWindowMs;
    const respond = (row: RefundRow): PhaseResult => ({ response: { status: 201, body: presentRefund(row) } });
    return {
      started: async (tx) => {
        const intent = await this.payments.lockIntent(tx, merchant, body.paymentIntent);
        if (!intent) throw notFound('payment intent');
        if (body.amount !== undefined && body.amount !== intent.amount) {
          throw new ApiError('PARTIAL_REFUND_NOT_SUPPORTED', `Only full refunds are supported: amount must be ${intent.amount} or omitted`, {
            param: 'amount',
          });
        }
        if (intent.status !== 'SUCCEEDED') {
          throw new ApiError('PAYMENT_NOT_REFUNDABLE', `Only a SUCCEEDED payment can be refunded; this one is ${intent.status}`);
        }
        if (await store.activeRefundOf(tx, intent.id)) throw alreadyRefunded();
        try {
          const refund = await store.insertRefund(tx, merchant, {
            id: newId('re'),
            paymentIntentId: intent.id,
            amount: intent.amount,
            reason: body.reason ?? null,
            inFlightMs: window,
          });
          return { next: 'refund', resourceId: refund.id };
        } catch (error) {
          if (isUniqueViolation(error)) throw alreadyRefunded();
          throw error;
        }
      },
      refund: foreignCall<RailOutcome>({
        call: (id) => this.callRefund(id!),
        record: async (tx, id, outcome) => respond(await this.applyRefundOutcome(tx, id!, outcome, window)),
        resume: async (tx, id) => respond(await store.refundById(tx, id!)),
      }),
    };
  }

  async get(merchant: Merchant, id: string): Promise<Refund> {
    const row = await store.findRefund(this.db, merchant, id);
    if (!row) throw notFound('refund');
    return presentRefund(row);
  }

  /** The payment each of these refunds gave back, by refund id, in one read. */
  paymentsOf(merchant: Merchant, refundIds: string[]): Promise<Map<string, string>> {
    return store.paymentsOfRefunds(this.db, merchant, refundIds);
  }

  list(merchant: Merchant, query: RefundsQuery): Promise<List<Refund>> {
    const filters: ListFilter[] = [];
    if (query.status !== undefined) filters.push({ column: 'status', value: query.status });
    if (query.paymentIntent !== undefined) filters.push({ column: 'payment_intent_id', value: query.paymentIntent });
    return listPage(this.db, store.REFUND_LIST, merchant, query, presentRefund, filters);
  }

  /** One reconciliation batch for PENDING refunds. */
  reconcile(batchMax: number): Promise<number> {
    return reconcileBatch(
      this.db,
      this.rails,
      this.log,
      (leaseMs) => store.leaseRefundsToReconcile(this.db, batchMax, leaseMs),
      (tx, id, outcome, retryInMs) => this.applyRefundOutcome(tx, id, outcome, retryInMs),
    );
  }
}
