// Payments: a charge to a saved card (and the legacy create + confirm pair, on the same code path) runs as atomic
// phases: record the intent with its operation id → call the rail → record the outcome with its ledger entries and
// event. An unclear outcome stays PROCESSING until the reconciler learns the truth from the rail by operation id.
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Transaction } from '../../db/types.js';
import { Statement, type Items } from '../../core/statement.js';
import type { Merchant } from '../../core/merchant.js';
import { ApiError, notFound } from '../../core/errors.js';
import { addKeyWrites, foreignPhase, type Phase, type PhaseResult } from '../../core/idempotency.js';
import { listPage, type List, type ListFilter } from '../../core/pagination.js';
import { PhaseWriter } from '../../core/phase-writer.js';
import { NO_TIMINGS, type Recorder } from '../../lib/timings.js';
import { newId } from '../../core/ids.js';
import type { Rails } from '../../rails/index.js';
import type { RailOutcome } from '../../rails/rail.js';
import { reconcileBatch } from '../../rails/reconciliation.js';
import { addBlockCards, findCard } from '../cards/store.js';
import { addEvents } from '../webhooks/events.js';
import { addPostings, post, type Entry } from '../ledger/store.js';
import type { OrdersService } from '../orders/service.js';
import type { ChargesQuery, CreateChargeBody, PaymentIntent } from './schema.js';
import * as store from './store.js';
import type { FinalOutcome, IntentRow, NewCharge } from './store.js';

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
    livemode: row.livemode,
    created: row.created_at.toISOString(),
  };
}

const nonZero = (entries: Entry[]) => entries.filter((entry) => entry.amount !== 0);

/**
 * Adds to `st` what finished debits (`rows[i - 1]` for item i, as each is once finished) bring with them, for the items
 * `guard` holds (null: every item): the ledger entries of a success, the blocking of a card the bank reported blocked,
 * and the event.
 */
function addDebitConsequences(st: Statement, rows: IntentRow[], guard: Items | null): void {
  addPostings(
    st,
    rows.map((row) =>
      row.status === 'SUCCEEDED'
        ? {
            productId: row.product_id,
            livemode: row.livemode,
            reason: 'payment_succeeded',
            referenceId: row.id,
            entries: nonZero([
              { account: 'rail_clearing', amount: -row.amount },
              { account: 'merchant_pending', amount: row.amount - row.fee },
              { account: 'platform_fees', amount: row.fee },
            ]),
          }
        : null,
    ),
    guard,
  );
  const blocked = rows.map((row) => (row.failure_code === 'CARD_BLOCKED' ? row.card_id : null));
  if (blocked.some((cardId) => cardId !== null)) addBlockCards(st, blocked, guard);
  addEvents(
    st,
    rows.map((row) => {
      const data = presentIntent(row);
      return {
        productId: row.product_id,
        livemode: row.livemode,
        type: row.status === 'SUCCEEDED' ? 'payment_intent.succeeded' : 'payment_intent.failed',
        data: { ...data, status: data.status.toLowerCase() },
      };
    }),
    guard,
  );
}

/**
 * The charge's two writes are written in groups: the phases of concurrent charges go to the database together, one
 * statement and one commit for all, each charge's writes still all or nothing. One group in flight at a time: with two,
 * the groups were smaller and the database did more work per charge, for a lower rate.
 */
const CHARGE_WRITES = { batchMax: 64, waitingMax: 4_096 };

/** A debit's final outcome, with the intent as it is once finished (the card an order payment saved included). */
interface FinishedDebit {
  row: IntentRow;
  outcome: FinalOutcome;
}

const finishedAs = (row: IntentRow, outcome: FinalOutcome): IntentRow => ({
  ...row,
  status: outcome.status,
  failure_code: outcome.status === 'FAILED' ? outcome.failureCode : null,
});

export class PaymentsService {
  /** New charges' intents on usable cards, each with its key's write: the intent, or undefined when none was written. */
  private readonly chargeStarts: PhaseWriter<NewCharge, IntentRow>;
  /**
   * Debits' final outcomes, each with its key's write, ledger entries, card blocking and event: true once written, or
   * undefined when the intent was no longer PROCESSING (nothing written). The finished row is the one the caller gave.
   */
  private readonly debitFinishes: PhaseWriter<FinishedDebit, true>;

  constructor(
    private readonly db: Db,
    private readonly rails: Rails,
    private readonly orders: OrdersService,
    private readonly log: FastifyBaseLogger,
    timings: Recorder = NO_TIMINGS,
  ) {
    this.chargeStarts = new PhaseWriter(
      db,
      (on, writes) =>
        store.insertIntentsOnActiveCards(
          on,
          writes.map((write) => write.item),
          (st, usable) => addKeyWrites(st, writes.map((write) => write.key), usable),
        ),
      CHARGE_WRITES,
      { recorder: timings, name: 'charges started' },
    );
    this.debitFinishes = new PhaseWriter(
      db,
      async (on, writes) => {
        const st = new Statement();
        const debits = writes.map(({ item }) => ({ id: item.row.id, outcome: item.outcome, cardId: item.row.card_id }));
        const { finished, finishedItems } = store.addFinishDebits(st, debits);
        addKeyWrites(st, writes.map((write) => write.key), finishedItems);
        addDebitConsequences(st, writes.map((write) => write.item.row), finishedItems);
        const rows = await st.run<{ id: string }>(on, `SELECT id FROM ${finished}`);
        const written = new Set(rows.map((row) => row.id));
        return writes.map(({ item }) => (written.has(item.row.id) ? true : undefined));
      },
      CHARGE_WRITES,
      { recorder: timings, name: 'debits finished' },
    );
  }

  /**
   * Applies a rail outcome to a PROCESSING debit. Under the intent's lock, whoever applies it (the request, or the
   * reconciler) applies it once, with the order's outcome, the ledger entries and the events, in this transaction.
   */
  async applyDebitOutcome(tx: Transaction, id: string, outcome: RailOutcome, retryInMs: number): Promise<IntentRow> {
    if (outcome.status === 'UNKNOWN') {
      await store.deferDebit(tx, id, retryInMs);
      return store.intentById(tx, id);
    }
    const processing = await store.lockProcessingIntent(tx, id);
    if (!processing) return store.intentById(tx, id);
    const finished = finishedAs(processing, outcome);
    const savedCard = await this.orders.applyPayment(tx, finished);
    const row = savedCard === null ? finished : { ...finished, card_id: savedCard };
    const written = await this.debitFinishes.write(tx, { item: { row, outcome }, key: null });
    if (!written) throw new Error(`payment intent ${id} left PROCESSING under its lock`);
    return row;
  }

  /** The rail call of a debit, outside any transaction. Any failure to get a clear answer is UNKNOWN: the money may have moved. */
  async callDebit(intent: Pick<IntentRow, 'id' | 'livemode' | 'rail_token' | 'amount'>): Promise<RailOutcome> {
    try {
      return await this.rails.forMode(intent.livemode).debit({ operationId: intent.id, token: intent.rail_token, amount: intent.amount });
    } catch (error) {
      this.log.warn({ err: error, paymentIntent: intent.id }, 'debit call failed; left PROCESSING for reconciliation');
      return { status: 'UNKNOWN' };
    }
  }

  /**
   * The debit phase shared by charges, confirmations and orders paid on the hosted page; `respond` makes the answer. `started` holds the
   * intent as the previous phase wrote it, which spares reading it again; a transaction retried by the engine makes a
   * new intent, so the row is used only when it is the committed one.
   */
  debitPhase(livemode: boolean, respond: (row: IntentRow) => PhaseResult, started: { row?: IntentRow }): Phase {
    const window = this.rails.forMode(livemode).callWindowMs;
    return foreignPhase<RailOutcome>({
      call: async (id) => this.callDebit(started.row?.id === id ? started.row : await store.intentById(this.db, id!)),
      // Outside a transaction, the common case: a final answer for a debit without an order, written in a group. Its row
      // is the one this request wrote: nobody but a finisher changes a PROCESSING intent, and then nothing is written.
      record: async (tx, id, outcome, key) => {
        if (tx !== null) return respond(await this.applyDebitOutcome(tx, id!, outcome, window));
        const row = started.row;
        if (outcome.status === 'UNKNOWN' || row === undefined || row.id !== id || row.order_id !== null) return null;
        const finished = finishedAs(row, outcome);
        const result = respond(finished);
        return (await this.debitFinishes.write(null, { item: { row: finished, outcome }, key: key && { write: key, result } })) ? result : null;
      },
      // A crashed request's debit may have reached the bank: never debit again; reconciliation finishes it.
      resume: async (tx, id) => respond(await store.intentById(tx, id!)),
    });
  }

  private async usableCard(tx: Transaction, merchant: Merchant, cardId: string) {
    const card = await findCard(tx, merchant, cardId);
    if (!card) throw notFound('card');
    if (card.status !== 'ACTIVE') throw new ApiError('CARD_INACTIVE', `The card is ${card.status}: it cannot be charged`, { param: 'card' });
    return card;
  }

  chargePhases(merchant: Merchant, body: CreateChargeBody): Record<string, Phase> {
    // A mode without a rail refuses every charge (503 RAIL_UNAVAILABLE) before looking at anything.
    const window = this.rails.forMode(merchant.livemode).callWindowMs;
    const started: { row?: IntentRow } = {};
    const charge = (): NewCharge => ({
      productId: merchant.productId,
      livemode: merchant.livemode,
      cardId: body.card,
      intent: {
        id: newId('pi'),
        amount: body.amount,
        fee: feeOf(body.amount, merchant.feeBps),
        description: body.description ?? null,
        metadata: body.metadata ?? {},
        inFlightMs: window,
      },
    });
    return {
      started: {
        write: async (tx, key) => {
          const fresh = charge();
          const result = { next: 'debit', resourceId: fresh.intent.id };
          const row = await this.chargeStarts.write(tx, { item: fresh, key: key && { write: key, result } });
          if (!row) return null;
          started.row = row;
          return result;
        },
        // Only a refusal reads the card again, to say why.
        refuse: async (tx) => {
          await this.usableCard(tx, merchant, body.card);
          throw new Error(`card ${body.card} is usable but the intent was not written`);
        },
      },
      debit: this.debitPhase(merchant.livemode, (row) => ({ response: { status: 201, body: presentIntent(row) } }), started),
    };
  }

  /** The legacy pair, step one: an intent that moves no money until confirmed. */
  createPhases(merchant: Merchant, body: CreateChargeBody): Record<string, Phase> {
    return {
      started: {
        atomic: async (tx) => {
          const card = await findCard(tx, merchant, body.card);
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
            inFlightMs: null,
          });
          return { response: { status: 201, body: presentIntent(intent) } };
        },
      },
    };
  }

  /** The legacy pair, step two: the charge call's debit, on the intent created before. */
  confirmPhases(merchant: Merchant, id: string): Record<string, Phase> {
    const window = this.rails.forMode(merchant.livemode).callWindowMs;
    const started: { row?: IntentRow } = {};
    return {
      started: {
        atomic: async (tx) => {
          const intent = await store.findIntent(tx, merchant, id, true);
          if (!intent) throw notFound('payment intent');
          if (intent.status !== 'REQUIRES_PAYMENT') {
            throw new ApiError('INVALID_STATE', `Only a REQUIRES_PAYMENT intent can be confirmed; this one is ${intent.status}`);
          }
          // Only the legacy create makes REQUIRES_PAYMENT intents, and always with a saved card.
          if (intent.card_id === null) throw new Error(`payment intent ${id} awaits confirmation without a card`);
          await this.usableCard(tx, merchant, intent.card_id);
          started.row = await store.startDebit(tx, id, window);
          return { next: 'debit', resourceId: id };
        },
      },
      debit: this.debitPhase(merchant.livemode, (row) => ({ response: { status: 200, body: presentIntent(row) } }), started),
    };
  }

  cancelPhases(merchant: Merchant, id: string): Record<string, Phase> {
    return {
      started: {
        atomic: async (tx) => {
          const intent = await store.findIntent(tx, merchant, id, true);
          if (!intent) throw notFound('payment intent');
          const canceled = await store.cancelIntent(tx, id);
          if (!canceled) throw new ApiError('INVALID_STATE', `Only a REQUIRES_PAYMENT intent can be canceled; this one is ${intent.status}`);
          return { response: { status: 200, body: presentIntent(canceled) } };
        },
      },
    };
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

  /** One settlement batch: moves succeeded payments' net amounts from pending to available, once each. */
  async settle(delaySeconds: number, batchMax: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      const due = await store.lockDueForSettlement(tx, delaySeconds, batchMax);
      for (const intent of due) {
        const net = intent.amount - intent.fee;
        if (net === 0) continue;
        await post(tx, {
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
      if (due.length > 0) await store.markSettled(tx, due.map((intent) => intent.id));
      return due.length;
    });
  }
}
