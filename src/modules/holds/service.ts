// Two-step payments' second step: a hold (REQUIRES_CAPTURE) ends by a capture of at most the held amount, or by a
// release, asked for by the merchant or by the expiry worker once the hold is TOLOV_HOLD_DAYS old. Each end runs the
// phases of any money movement: recorded PENDING with its own operation id (the intent PROCESSING) → the rail call →
// the outcome applied once, or left to reconciliation. One end per hold at a time: the intent's status and a unique
// index let exactly one of a capture, a cancel and the worker start it.
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { ApiError, notFound } from '../../core/errors.js';
import { foreignCall, type PhaseResult, type Steps } from '../../core/idempotency.js';
import type { Answer, Commands, Invocation } from '../../core/commands.js';
import { newId } from '../../core/ids.js';
import type { Rails } from '../../rails/index.js';
import type { RailOutcome } from '../../rails/rail.js';
import { reconcileBatch } from '../../rails/reconciliation.js';
import { feeOf, presentIntent, type HoldEndMove, type IntentRow, type PaymentsService } from '../payments/service.js';
import type { CaptureBody, PaymentIntent } from '../payments/schema.js';
import type { ReceiptsService } from '../receipts/service.js';
import type { ReceiptLines, ReceiptRequest } from '../receipts/schema.js';
import * as store from './store.js';
import type { HoldEndRow, NewHoldEnd } from './store.js';

/** Pages of the captures and releases made in [from, to), by id: what reconciliation compares with the bank's. */
export { holdEndOperationsBetween } from './store.js';

/** The refusal that says the bank no longer holds the money (it let the hold lapse): the hold is over. */
const HOLD_NOT_ACTIVE = 'HOLD_NOT_ACTIVE';

/** Why the bank would not end the hold, as the answer to the request that asked. */
function refusal(end: HoldEndRow): ApiError {
  const code = end.failure_code!;
  const message =
    code === HOLD_NOT_ACTIVE
      ? 'The bank no longer holds the money of this payment: it is CANCELED'
      : `The bank refused the ${end.kind} (${code}); the money is still held: ${end.kind === 'capture' ? 'capture' : 'cancel'} again, or let the hold expire`;
  return new ApiError('PAYMENT_FAILED', message, { failureCode: code });
}

const notHeld = (intent: IntentRow, what: string) =>
  new ApiError('INVALID_STATE', `Only a REQUIRES_CAPTURE payment can be ${what}; this one is ${intent.status}`);

/** What an end's outcome does to its intent. */
function intentMove(end: HoldEndRow, outcome: Exclude<RailOutcome, { status: 'UNKNOWN' }>): HoldEndMove {
  if (outcome.status === 'FAILED') return { on: outcome.failureCode === HOLD_NOT_ACTIVE ? 'hold_released' : 'hold_kept' };
  if (end.kind === 'release') return { on: 'hold_released' };
  return { on: 'capture_succeeded', amount: end.amount, fee: end.fee!, receiptLines: end.receipt_lines };
}

export class HoldsService {
  constructor(
    private readonly db: Db,
    private readonly rails: Rails,
    private readonly payments: PaymentsService,
    private readonly receipts: Pick<ReceiptsService, 'linesFor'>,
    private readonly commands: Commands,
    private readonly log: FastifyBaseLogger,
    /** TOLOV_HOLD_DAYS: how long a hold waits for its capture before the worker releases it. */
    private readonly holdDays: number,
  ) {}

  /** Captures a hold, all of it or less (the rest is released): 200 with the payment; audited from the dashboard. */
  capture(invocation: Invocation, id: string, body: CaptureBody): Promise<Answer<PaymentIntent>> {
    return this.commands.run(invocation, this.#capturePhases(invocation.scope, id, body), { activeOnly: true, audit: { action: 'payment.captured', target: id } });
  }

  /** Releases a hold: 200 with the payment, CANCELED once the bank returned the money. */
  cancel(invocation: Invocation, id: string): Promise<Answer<PaymentIntent>> {
    return this.commands.run(invocation, this.#cancelPhases(invocation.scope, id), { audit: { action: 'payment.hold_released', target: id } });
  }

  /**
   * Applies a rail outcome to a PENDING end, once, with its intent's move in the same transaction: captured, released,
   * or (refused while the bank still holds the money) REQUIRES_CAPTURE again.
   */
  async applyEndOutcome(tx: Transaction, id: string, outcome: RailOutcome, retryInMs: number): Promise<IntentRow> {
    if (outcome.status === 'UNKNOWN') {
      store.deferHoldEnd(tx, id, retryInMs);
      return this.payments.intentById(tx, (await store.holdEndById(tx, id)).payment_intent_id);
    }
    const end = await store.finishHoldEnd(tx, id, outcome);
    if (!end) return this.payments.intentById(tx, (await store.holdEndById(tx, id)).payment_intent_id);
    return this.payments.applyHoldEnd(tx, end.payment_intent_id, intentMove(end, outcome));
  }

  /**
   * One expiry batch: releases up to `batchMax` holds older than TOLOV_HOLD_DAYS, one after the other, each started in
   * a transaction of its own just before its call (so that its call window starts with the call), its answer applied
   * in another; a crash in between leaves it PENDING to reconciliation. A mode without a bank is left alone. Returns how many.
   */
  async releaseExpired(batchMax: number): Promise<number> {
    let released = 0;
    for (const livemode of [false, true]) {
      if (!this.#hasRail(livemode)) continue;
      for (; released < batchMax; released++) {
        const end = await this.db.transaction(async (tx) => {
          const intent = await this.payments.expiredHold(tx, livemode, this.holdDays);
          return intent && this.#startRelease(tx, intent, 'expired');
        });
        if (!end) break;
        await this.#settle(end);
      }
    }
    return released;
  }

  /** Test mode's helper: releases a hold now, as TOLOV_HOLD_DAYS passing would (payment_intent.hold_released). */
  async expireNow(merchant: Merchant, id: string): Promise<PaymentIntent> {
    const end = await this.db.transaction(async (tx) => {
      const intent = await this.payments.lockIntent(tx, merchant, id);
      if (!intent) throw notFound('payment intent');
      if (intent.status !== 'REQUIRES_CAPTURE') throw notHeld(intent, 'released');
      return this.#startRelease(tx, intent, 'expired');
    });
    return presentIntent(await this.#settle(end));
  }

  /** One reconciliation batch for PENDING captures and releases. */
  reconcile(batchMax: number): Promise<number> {
    return reconcileBatch(
      this.db,
      this.rails,
      this.log,
      (leaseMs) => store.leaseHoldEndsToReconcile(this.db, batchMax, leaseMs),
      (tx, id, outcome, retryInMs) => this.applyEndOutcome(tx, id, outcome, retryInMs),
    );
  }

  #capturePhases(merchant: Merchant, id: string, body: CaptureBody): Steps {
    return {
      started: async (tx) => {
        const intent = await this.payments.lockIntent(tx, merchant, id);
        if (!intent) throw notFound('payment intent');
        if (intent.status !== 'REQUIRES_CAPTURE') throw notHeld(intent, 'captured');
        const held = intent.amount_held!;
        const amount = body.amount ?? held;
        if (amount > held) throw new ApiError('VALIDATION_ERROR', `amount must be at most the held amount, ${held}`, { param: 'amount' });
        const receiptLines = await this.#captureLines(tx, merchant, intent, amount, body.receipt);
        const fee = feeOf(amount, merchant.feeBps);
        const end = await this.#start(tx, intent, { kind: 'capture', reason: 'requested', amount, fee, receipt_lines: receiptLines });
        return { next: 'end', resourceId: end.id };
      },
      ...this.#endSteps(merchant.livemode),
    };
  }

  #cancelPhases(merchant: Merchant, id: string): Steps {
    return {
      started: async (tx) => {
        const intent = await this.payments.lockIntent(tx, merchant, id);
        if (!intent) throw notFound('payment intent');
        if (intent.status !== 'REQUIRES_CAPTURE') throw notHeld(intent, 'canceled here (an intent awaiting confirmation is canceled at /v1/payment_intents/{id}/cancel)');
        return { next: 'end', resourceId: (await this.#startRelease(tx, intent, 'requested')).id };
      },
      ...this.#endSteps(merchant.livemode),
    };
  }

  /**
   * A capture's fiscal lines: those given, for the amount captured; else the payment's own, which fit only the whole
   * held amount (null: keep them, or there are none).
   */
  async #captureLines(tx: Transaction, merchant: Merchant, intent: IntentRow, amount: number, request: ReceiptRequest | undefined): Promise<ReceiptLines | null> {
    if (request !== undefined) return this.receipts.linesFor(merchant, request, amount);
    if (amount === intent.amount_held || (await this.payments.receiptLinesOf(tx, intent.id)) === null) return null;
    throw new ApiError('RECEIPT_MISMATCH', `The payment's fiscal lines are for ${intent.amount_held} tiyin: a capture of ${amount} needs its own (receipt)`, {
      param: 'receipt',
    });
  }

  /** The intent PROCESSING and its end PENDING, in the caller's transaction under the intent's lock. */
  async #start(tx: Transaction, intent: IntentRow, end: Omit<NewHoldEnd, 'id' | 'product_id' | 'livemode' | 'payment_intent_id'>): Promise<HoldEndRow> {
    await this.payments.startHoldEnd(tx, intent.id);
    const id = newId(end.kind === 'capture' ? 'cap' : 'rel');
    return store.insertHoldEnd(tx, { ...end, id, product_id: intent.product_id, livemode: intent.livemode, payment_intent_id: intent.id }, this.#window(intent.livemode));
  }

  #startRelease(tx: Transaction, intent: IntentRow, reason: HoldEndRow['reason']): Promise<HoldEndRow> {
    return this.#start(tx, intent, { kind: 'release', reason, amount: intent.amount_held!, fee: null, receipt_lines: null });
  }

  /** Calls the rail for an end just started, and applies its answer in a transaction of its own. */
  async #settle(end: HoldEndRow): Promise<IntentRow> {
    const outcome = await this.#call(end.id);
    return this.db.transaction((tx) => this.applyEndOutcome(tx, end.id, outcome, this.#window(end.livemode)));
  }

  /**
   * The end's rail call and its record; a request resumed after a crash answers from what is recorded. An end the
   * bank refused answers 402 PAYMENT_FAILED with its failureCode (the refusal stored under the key, as any other),
   * after its outcome has committed: a release of a hold the bank no longer held is no refusal.
   */
  #endSteps(livemode: boolean): Steps {
    const window = this.#window(livemode);
    const answer = async (tx: Transaction, id: string): Promise<PhaseResult> => {
      const end = await store.holdEndById(tx, id);
      if (end.status === 'FAILED' && !(end.kind === 'release' && end.failure_code === HOLD_NOT_ACTIVE)) return { next: 'refused', resourceId: id };
      return { response: { status: 200, body: presentIntent(await this.payments.intentById(tx, end.payment_intent_id)) } };
    };
    return {
      end: foreignCall<RailOutcome>({
        call: (id) => this.#call(id!),
        record: async (tx, id, outcome) => {
          await this.applyEndOutcome(tx, id!, outcome, window);
          return answer(tx, id!);
        },
        resume: (tx, id) => answer(tx, id!),
      }),
      refused: async (tx, id) => {
        throw refusal(await store.holdEndById(tx, id!));
      },
    };
  }

  /** The rail call of an end, outside any transaction; no clear answer is UNKNOWN (the money may have moved). */
  async #call(id: string): Promise<RailOutcome> {
    const end = await store.holdEndCallOf(this.db, id);
    const operation = { operationId: end.id, holdOperationId: end.payment_intent_id, token: end.rail_token, amount: end.amount };
    try {
      const rail = this.rails.forMode(end.livemode);
      return await (end.kind === 'capture' ? rail.capture(operation) : rail.release(operation));
    } catch (error) {
      this.log.warn({ err: error, holdEnd: id }, `${end.kind} call failed; left PENDING for reconciliation`);
      return { status: 'UNKNOWN' };
    }
  }

  #window(livemode: boolean): number {
    return this.rails.forMode(livemode).callWindowMs;
  }

  #hasRail(livemode: boolean): boolean {
    try {
      this.rails.forMode(livemode);
      return true;
    } catch {
      return false;
    }
  }
}
