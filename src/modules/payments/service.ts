// Payments: a charge to a saved card (and the legacy create + confirm pair, on the same code path) runs as atomic
// phases: record the intent with its operation id → call the rail → record the outcome with its ledger entries and
// event. An unclear outcome stays PROCESSING until the reconciler learns the truth from the rail by operation id.
import type { FastifyBaseLogger } from 'fastify';
import { afterCommit, refusedAs, type Db, type Queryable, type Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { ApiError, notFound } from '../../core/errors.js';
import { foreignCall, type PhaseResult, type Step, type Steps } from '../../core/idempotency.js';
import type { Answer, Commands, Invocation } from '../../core/commands.js';
import { listPage, type List, type ListFilter } from '../../core/pagination.js';
import { newId } from '../../core/ids.js';
import type { Rails } from '../../rails/index.js';
import type { RailOutcome } from '../../rails/rail.js';
import { reconcileBatch } from '../../rails/reconciliation.js';
import type { CardsService } from '../cards/service.js';
import type { Entry, LedgerService } from '../ledger/service.js';
import type { EventRecorder } from '../webhooks/service.js';
import type { EventType } from '../webhooks/events.js';
import type { ReceiptLines } from '../receipts/schema.js';
import type { Outcomes } from '../monitoring/outcomes.js';
import type { OrdersService } from '../orders/service.js';
import type { ReceiptsService } from '../receipts/service.js';
import type { ChargesQuery, CreateChargeBody, PaymentIntent } from './schema.js';
import * as store from './store.js';
import type { HoldEndMove, IntentRow } from './store.js';

export type { HoldEndMove, IntentRow, OperationsPage, RecordedMoney } from './store.js';
/** Pages of the debits created in [from, to) that went to the bank, by id: what reconciliation compares with the bank's. */
export { debitOperationsBetween } from './store.js';

/** `round_half_up(amount × feeBps / 10000)`, exactly: the product can exceed 2^53, so it is done in BigInt. */
export function feeOf(amount: number, feeBps: number): number {
  return Number((BigInt(amount) * BigInt(feeBps) + 5_000n) / 10_000n);
}

export function presentIntent(row: IntentRow): PaymentIntent {
  return {
    id: row.id,
    object: 'payment_intent',
    amount: row.amount,
    fee: row.fee,
    currency: row.currency,
    status: row.status,
    failureCode: row.failure_code,
    rail: row.rail,
    card: row.card_id,
    maskedPan: row.masked_pan,
    order: row.order_id,
    description: row.description,
    metadata: row.metadata,
    amountRefunded: row.amount_refunded,
    captureMethod: row.capture_method,
    amountCapturable: row.status === 'REQUIRES_CAPTURE' ? row.amount_held! : 0,
    receipt: row.receipt_id,
    livemode: row.livemode,
    created: row.created_at.toISOString(),
  };
}

const nonZero = (entries: Entry[]) => entries.filter((entry) => entry.amount !== 0);

/**
 * A transaction's failure as the refusal of a card that cannot be charged, when the database refused it: one the
 * merchant does not have, or one that is not ACTIVE.
 */
function refusedCard(error: unknown): unknown {
  const status = store.refusedCard(error);
  if (status === undefined) return error;
  return status === null ? notFound('card') : new ApiError('CARD_INACTIVE', `The card is ${status}: it cannot be charged`, { param: 'card' });
}

export class PaymentsService {
  constructor(
    private readonly db: Db,
    private readonly rails: Rails,
    private readonly orders: OrdersService,
    private readonly cards: CardsService,
    private readonly ledger: LedgerService,
    private readonly events: EventRecorder,
    private readonly receipts: ReceiptsService,
    private readonly commands: Commands,
    private readonly log: FastifyBaseLogger,
    private readonly outcomes: Outcomes,
  ) {}

  /** Charges a saved card: 201 with the payment, whatever the bank answered (its status says). */
  charge(invocation: Invocation, body: CreateChargeBody): Promise<Answer<PaymentIntent>> {
    return this.commands.run(invocation, this.chargePhases(invocation.scope, body), { activeOnly: true });
  }

  /** The legacy pair's first step: an intent that moves no money until confirmed (201). */
  create(invocation: Invocation, body: CreateChargeBody): Promise<Answer<PaymentIntent>> {
    return this.commands.run(invocation, this.createPhases(invocation.scope, body), { activeOnly: true });
  }

  /** The legacy pair's second step: the charge's debit, on the intent created before (200). */
  confirm(invocation: Invocation, id: string): Promise<Answer<PaymentIntent>> {
    return this.commands.run(invocation, this.confirmPhases(invocation.scope, id), { activeOnly: true });
  }

  /** Cancels an intent that awaits confirmation (200). */
  cancel(invocation: Invocation, id: string): Promise<Answer<PaymentIntent>> {
    return this.commands.run(invocation, this.cancelPhases(invocation.scope, id));
  }

  /**
   * Applies a rail outcome to a PROCESSING debit (or hold). Under the intent's lock, whoever applies it (the request,
   * or the reconciler) applies it once, with the order's outcome, the ledger entries and the events, in this transaction.
   */
  async applyDebitOutcome(tx: Transaction, id: string, outcome: RailOutcome, retryInMs: number): Promise<IntentRow> {
    if (outcome.status === 'UNKNOWN') {
      store.deferDebit(tx, id, retryInMs);
      return store.intentById(tx, id);
    }
    // The move itself takes the intent's lock: whoever finds it PROCESSING finishes it, the others read it finished.
    const finished = await store.finishDebit(tx, id, outcome);
    if (!finished) return store.intentById(tx, id);
    if (finished.status === 'REQUIRES_CAPTURE') {
      const row = await this.#applyToOrder(tx, finished);
      this.#recordEvent(tx, row, 'payment_intent.requires_capture');
      return row;
    }
    afterCommit(tx, () => this.outcomes.payment('charge', outcome.status === 'SUCCEEDED' ? 'succeeded' : 'failed', finished.livemode));
    return this.#recordFinished(tx, finished);
  }

  /** REQUIRES_CAPTURE → PROCESSING, under the intent's lock: a capture or release is under way. */
  async startHoldEnd(tx: Transaction, id: string): Promise<void> {
    if (!(await store.startHoldEnd(tx, id))) throw new Error(`payment intent ${id} left REQUIRES_CAPTURE under its lock`);
  }

  /**
   * Applies the end of a hold to its intent, once: a capture makes it a payment like any other (its receipt, ledger
   * entries and event, as a debit's success brings them); a release makes it CANCELED (payment_intent.hold_released);
   * a refusal that left the hold in place makes it REQUIRES_CAPTURE again.
   */
  async applyHoldEnd(tx: Transaction, id: string, end: HoldEndMove): Promise<IntentRow> {
    // Only the one who finished the end applies it, under the end's lock: an intent not waiting for it is a broken invariant.
    const ended = await store.endHold(tx, id, end);
    if (!ended) throw new Error(`payment intent ${id} was not waiting for the end of its hold`);
    if (end.on === 'hold_released') this.#recordEvent(tx, ended, 'payment_intent.hold_released');
    if (end.on !== 'capture_succeeded') return ended;
    afterCommit(tx, () => this.outcomes.payment('capture', 'succeeded', ended.livemode));
    return this.#recordFinished(tx, ended);
  }

  /** The fiscal lines a payment was made with, for a capture that keeps them. */
  receiptLinesOf(tx: Transaction, id: string): Promise<ReceiptLines | null> {
    return store.receiptLinesOf(tx, id);
  }

  /** The oldest hold of a mode older than `holdDays`, locked for the transaction that starts its release. */
  expiredHold(tx: Transaction, livemode: boolean, holdDays: number): Promise<IntentRow | undefined> {
    return store.lockExpiredHold(tx, livemode, holdDays);
  }

  /**
   * What a payment's final status brings, in its transaction: its sale receipt, its order's outcome (an order whose
   * payment was held was paid by the hold: a capture gives it its receipt), its consequences.
   */
  async #recordFinished(tx: Transaction, finished: IntentRow & { receipt_lines: ReceiptLines | null }): Promise<IntentRow> {
    // The sale receipt first, so that the order's event names it.
    const lines = finished.status === 'SUCCEEDED' ? finished.receipt_lines : null;
    const receipted = lines === null ? finished : await store.attachReceipt(tx, finished.id, this.receipts.recordSale(tx, { ...finished, receipt_lines: lines }));
    const captured = finished.held_at !== null;
    if (captured && receipted.receipt_id !== null && receipted.order_id !== null) this.orders.attachReceipt(tx, receipted.order_id, receipted.receipt_id);
    const row = captured ? receipted : await this.#applyToOrder(tx, receipted);
    await this.recordDebitConsequences(tx, row);
    return row;
  }

  /** The payment's outcome on its order, if it has one: paid (the card saved when the buyer asked) or failed. */
  async #applyToOrder(tx: Transaction, payment: IntentRow): Promise<IntentRow> {
    const savedCard = await this.orders.applyPayment(tx, payment);
    return savedCard === null ? payment : store.attachSavedCard(tx, payment.id, savedCard);
  }

  #recordEvent(tx: Transaction, row: IntentRow, type: EventType): void {
    const data = presentIntent(row);
    this.events.record(tx, { productId: row.product_id, livemode: row.livemode, type, data: { ...data, status: data.status.toLowerCase() } });
  }

  /**
   * What a finished debit brings with it, in its transaction: the ledger entries of a success, the blocking of a card the
   * bank reported blocked, and the event.
   */
  private async recordDebitConsequences(tx: Transaction, row: IntentRow): Promise<void> {
    if (row.failure_code === 'CARD_BLOCKED' && row.card_id !== null) this.cards.block(tx, row.card_id);
    this.#recordEvent(tx, row, row.status === 'SUCCEEDED' ? 'payment_intent.succeeded' : 'payment_intent.failed');
    // Last: the balance rows are the ones concurrent payments of the merchant share, held only until the commit.
    if (row.status === 'SUCCEEDED') {
      this.ledger.post(tx, {
        productId: row.product_id,
        livemode: row.livemode,
        reason: 'payment_succeeded',
        referenceId: row.id,
        entries: nonZero([
          { account: 'rail_clearing', amount: -row.amount },
          { account: 'merchant_pending', amount: row.amount - row.fee },
          { account: 'platform_fees', amount: row.fee },
        ]),
        statement: { type: 'charge', amount: row.amount, fee: row.fee, status: 'pending' },
      });
    }
  }

  /** The rail call of a debit, outside any transaction. Any failure to get a clear answer is UNKNOWN: the money may have moved. */
  async callDebit(intent: Pick<IntentRow, 'id' | 'livemode' | 'rail_token' | 'amount' | 'capture_method'>): Promise<RailOutcome> {
    const operation = { operationId: intent.id, token: intent.rail_token, amount: intent.amount };
    const rail = this.rails.forMode(intent.livemode);
    try {
      return await (intent.capture_method === 'manual' ? rail.hold(operation) : rail.debit(operation));
    } catch (error) {
      this.log.warn({ err: error, paymentIntent: intent.id }, 'debit call failed; left PROCESSING for reconciliation');
      return { status: 'UNKNOWN' };
    }
  }

  /**
   * The result of a phase that starts a debit: the debit step next, handed the intent the phase wrote (or its promise,
   * kept once the phase has committed).
   */
  debitStarted(id: string, intent: IntentRow | Promise<IntentRow>): PhaseResult {
    // A refusal the debit step does not wait for (a crash between the steps) must not end the process as unhandled.
    if (intent instanceof Promise) intent.catch(() => {});
    return { next: 'debit', resourceId: id, carried: intent };
  }

  /**
   * The debit step shared by charges, confirmations and orders paid on the hosted page, after a phase that answered
   * `debitStarted`; `respond` makes the answer.
   */
  debitStep(livemode: boolean, respond: (row: IntentRow) => PhaseResult): Step {
    const window = this.rails.forMode(livemode).callWindowMs;
    return foreignCall<RailOutcome>({
      call: async (id, started) => {
        const intent = await (started as IntentRow | Promise<IntentRow> | undefined);
        if (intent?.id !== id) throw new Error(`the debit of ${id} was called without the intent its first phase wrote`);
        return this.callDebit(intent);
      },
      record: async (tx, id, outcome) => respond(await this.applyDebitOutcome(tx, id!, outcome, window)),
      // A crashed request's debit may have reached the bank: never debit again; reconciliation finishes it.
      resume: async (tx, id) => respond(await store.intentById(tx, id!)),
    });
  }

  private chargePhases(merchant: Merchant, body: CreateChargeBody): Steps {
    // A mode without a rail refuses every charge (503 RAIL_UNAVAILABLE) before looking at anything.
    const window = this.rails.forMode(merchant.livemode).callWindowMs;
    return {
      started: async (tx) => {
        // Checked under the key, so that a retry gets the first answer even if the product's settings changed since.
        const receiptLines = this.receipts.linesFor(merchant, body.receipt, body.amount);
        const intent = {
          id: newId('pi'),
          amount: body.amount,
          fee: feeOf(body.amount, merchant.feeBps),
          description: body.description ?? null,
          metadata: body.metadata ?? {},
          receiptLines,
          inFlightMs: window,
          captureMethod: body.capture ?? 'automatic',
        };
        // Sent with the COMMIT, in one round trip: a card that cannot be charged fails the transaction, refused as such.
        refusedAs(tx, refusedCard);
        return this.debitStarted(intent.id, store.insertIntentOnActiveCard(tx, merchant, body.card, intent));
      },
      debit: this.debitStep(merchant.livemode, (row) => ({ response: { status: 201, body: presentIntent(row) } })),
    };
  }

  /** The legacy pair, step one: an intent that moves no money until confirmed. */
  private createPhases(merchant: Merchant, body: CreateChargeBody): Steps {
    return {
      started: async (tx) => {
        const receiptLines = this.receipts.linesFor(merchant, body.receipt, body.amount);
        const card = await this.cards.find(tx, merchant, body.card);
        if (!card) throw notFound('card');
        const intent = await store.insertIntent(tx, merchant, {
          id: newId('pi'),
          amount: body.amount,
          fee: feeOf(body.amount, merchant.feeBps),
          status: 'REQUIRES_PAYMENT',
          cardId: card.id,
          orderId: null,
          railToken: card.rail_token,
          rail: card.rail,
          maskedPan: card.masked_pan,
          description: body.description ?? null,
          metadata: body.metadata ?? {},
          receiptLines,
          inFlightMs: null,
          captureMethod: 'automatic',
        });
        return { response: { status: 201, body: presentIntent(intent) } };
      },
    };
  }

  /** The legacy pair, step two: the charge call's debit, on the intent created before. */
  private confirmPhases(merchant: Merchant, id: string): Steps {
    const window = this.rails.forMode(merchant.livemode).callWindowMs;
    return {
      started: async (tx) => {
        const intent = await store.findIntent(tx, merchant, id, true);
        if (!intent) throw notFound('payment intent');
        if (intent.status !== 'REQUIRES_PAYMENT') {
          throw new ApiError('INVALID_STATE', `Only a REQUIRES_PAYMENT intent can be confirmed; this one is ${intent.status}`);
        }
        // Only the legacy create makes REQUIRES_PAYMENT intents, and always with a saved card.
        if (intent.card_id === null) throw new Error(`payment intent ${id} awaits confirmation without a card`);
        refusedAs(tx, refusedCard);
        const started = await store.startDebit(tx, id, window);
        return this.debitStarted(started.id, started);
      },
      debit: this.debitStep(merchant.livemode, (row) => ({ response: { status: 200, body: presentIntent(row) } })),
    };
  }

  private cancelPhases(merchant: Merchant, id: string): Steps {
    return {
      started: async (tx) => {
        const intent = await store.findIntent(tx, merchant, id, true);
        if (!intent) throw notFound('payment intent');
        const canceled = await store.cancelIntent(tx, id);
        if (!canceled) throw new ApiError('INVALID_STATE', `Only a REQUIRES_PAYMENT intent can be canceled; this one is ${intent.status}`);
        return { response: { status: 200, body: presentIntent(canceled) } };
      },
    };
  }

  /** A new intent, in the transaction of the payment that makes it (an order paid on its page). */
  insertIntent(tx: Transaction, scope: Pick<Merchant, 'productId' | 'livemode'>, intent: store.NewIntent): Promise<IntentRow> {
    return store.insertIntent(tx, scope, intent);
  }

  /** By id alone, for a phase or worker that holds an id a scoped call made. */
  intentById(db: Queryable, id: string): Promise<IntentRow> {
    return store.intentById(db, id);
  }

  /** The merchant's intent, locked for a transaction that decides on it (a refund). */
  lockIntent(tx: Transaction, merchant: Merchant, id: string): Promise<IntentRow | undefined> {
    return store.findIntent(tx, merchant, id, true);
  }

  /** Records how much of a payment was refunded, in the refund's transaction. */
  recordRefunded(tx: Transaction, id: string, amount: number): void {
    store.recordRefunded(tx, id, amount);
  }

  async get(merchant: Merchant, id: string): Promise<PaymentIntent> {
    const row = await store.findIntent(this.db, merchant, id);
    if (!row) throw notFound('payment intent');
    return presentIntent(row);
  }

  list(merchant: Merchant, query: ChargesQuery): Promise<List<PaymentIntent>> {
    const filters: ListFilter[] = [];
    if (query.status !== undefined) filters.push({ column: 'status', value: query.status });
    if (query.card !== undefined) filters.push({ column: 'card_id', value: query.card });
    if (query.order !== undefined) filters.push({ column: 'order_id', value: query.order });
    if (query.customerRef !== undefined) filters.push({ cardOfCustomer: query.customerRef });
    return listPage(this.db, store.INTENT_LIST, merchant, query, presentIntent, filters);
  }

  /** One reconciliation batch: asks the rail about leased PROCESSING debits and applies what it knows. */
  reconcileDebits(batchMax: number): Promise<number> {
    return reconcileBatch(
      this.db,
      this.rails,
      this.log,
      (leaseMs) => store.leaseDebitsToReconcile(this.db, batchMax, leaseMs),
      (tx, id, outcome, retryInMs) => this.applyDebitOutcome(tx, id, outcome, retryInMs),
    );
  }

  /**
   * One settlement batch: moves succeeded payments' net amounts from pending to available, once each; of one product
   * and mode alone when given (test mode's helper settles a product's payments at once).
   */
  async settle(delaySeconds: number, batchMax: number, merchant: Pick<Merchant, 'productId' | 'livemode'> | null = null): Promise<number> {
    return this.db.transaction(async (tx) => {
      const due = await store.lockDueForSettlement(tx, delaySeconds, batchMax, merchant);
      for (const intent of due) {
        const net = intent.amount - intent.fee;
        if (net === 0) continue;
        this.ledger.post(tx, {
          productId: intent.product_id,
          livemode: intent.livemode,
          reason: 'settlement',
          referenceId: intent.id,
          entries: [
            { account: 'merchant_pending', amount: -net },
            { account: 'merchant_available', amount: net },
          ],
        });
      }
      if (due.length > 0) {
        const ids = due.map((intent) => intent.id);
        store.markSettled(tx, ids);
        this.ledger.markAvailable(tx, ids);
      }
      return due.length;
    });
  }
}
