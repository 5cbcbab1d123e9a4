// Orders: created PENDING with their hosted payment page, by the API or by a buyer who opened a payment link; paid
// through their checkout session (PAID or FAILED, with an event), canceled by the merchant, or EXPIRED past their time
// (with an event) unless a debit is in progress.
import type { Db, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { ApiError, notFound } from '../../core/errors.js';
import type { Steps } from '../../core/idempotency.js';
import type { Answer, Commands, Invocation } from '../../core/commands.js';
import { listPage, type List, type ListFilter } from '../../core/pagination.js';
import type { CaptureMethod } from '../../core/schemas.js';
import { newId } from '../../core/ids.js';
import { randomBase62 } from '../../lib/random.js';
import type { CardsService } from '../cards/service.js';
import type { EventRecorder } from '../webhooks/service.js';
import type { ReceiptLines } from '../receipts/schema.js';
import type { ReceiptsService } from '../receipts/service.js';
import type { CreateOrderBody, Order, OrdersQuery } from './schema.js';
import * as store from './store.js';
import type { OrderRow } from './store.js';

const CHECKOUT_TOKEN_RANDOM_CHARS = 40; // ≈ 238 bits: the token alone authorizes paying the order

export interface OrderSettings {
  checkoutUrl: string;
  orderTtlSeconds: number;
}

/** An order to make: by the API (no payment link), or by a buyer who opened a payment link. */
export interface NewOrder {
  productId: string;
  livemode: boolean;
  amount: number;
  description: string | null;
  customerRef: string | null;
  returnUrl: string | null;
  /** Its fiscal lines, checked for `amount` (null without). */
  receiptLines: ReceiptLines | null;
  paymentLinkId: string | null;
  captureMethod: CaptureMethod;
}

/** What an order needs to know of its payment intent once the debit is final. */
export interface FinishedPayment {
  id: string;
  order_id: string | null;
  status: string;
  failure_code: string | null;
  product_id: string;
  livemode: boolean;
  rail: 'uzcard' | 'humo';
  rail_token: string;
  receipt_id: string | null;
}

/** What an order needs of its hosted page's session, which the checkout keeps: opened with the order, closed with it. */
export interface OrderSessions {
  open(tx: Transaction, kind: 'order', order: OrderRow): Promise<unknown>;
  closeOrderSession(tx: Transaction, orderId: string, on: 'debit_succeeded' | 'debit_failed' | 'order_closed'): Promise<void>;
  capturedCardOfOrder(tx: Transaction, orderId: string): Promise<{ save_card: boolean; network: 'uzcard' | 'humo'; masked_pan: string; card_expiry: string }>;
}

export class OrdersService {
  constructor(
    private readonly db: Db,
    private readonly settings: OrderSettings,
    private readonly sessions: OrderSessions,
    private readonly cards: CardsService,
    private readonly events: EventRecorder,
    private readonly receipts: Pick<ReceiptsService, 'linesFor'>,
    private readonly commands: Commands,
  ) {}

  /** Creates a PENDING order with its checkout session: 201 with the order. */
  create(invocation: Invocation, body: CreateOrderBody): Promise<Answer<Order>> {
    return this.commands.run(invocation, this.createPhases(invocation.scope, body), { activeOnly: true });
  }

  /** Cancels a PENDING order: 200 with the order; audited when a dashboard user cancels it. */
  cancel(invocation: Invocation, id: string): Promise<Answer<Order>> {
    return this.commands.run(invocation, this.cancelPhases(invocation.scope, id), { audit: { action: 'order.canceled', target: id } });
  }

  present(row: OrderRow): Order {
    return {
      id: row.id,
      object: 'order',
      amount: row.amount,
      currency: row.currency,
      status: row.status,
      description: row.description,
      customerRef: row.customer_ref,
      paymentUrl: `${this.settings.checkoutUrl}/pay/${row.checkout_token}`,
      returnUrl: row.return_url,
      saveCard: row.save_card,
      paymentIntent: row.payment_intent_id,
      captureMethod: row.capture_method,
      savedCard: row.saved_card_id,
      paidAt: row.paid_at?.toISOString() ?? null,
      failureCode: row.failure_code,
      expiresAt: row.expires_at.toISOString(),
      receipt: row.receipt_id,
      paymentLink: row.payment_link_id,
      livemode: row.livemode,
      created: row.created_at.toISOString(),
    };
  }

  /** Creating an order is a single atomic phase: the order, its session and the stored response commit together. */
  private createPhases(merchant: Merchant, body: CreateOrderBody): Steps {
    return {
      started: async (tx) => {
        // Checked under the key, so that a retry gets the first answer even if the product's settings changed since.
        const receiptLines = this.receipts.linesFor(merchant, body.receipt, body.amount);
        if (body.capture === 'manual' && !merchant.scopes.includes('subscribe')) {
          throw new ApiError('SCOPE_REQUIRED', 'A held payment is captured with the charges calls: capture "manual" needs a key with the scope subscribe', {
            param: 'capture',
          });
        }
        const order = await this.insert(tx, {
          productId: merchant.productId,
          livemode: merchant.livemode,
          amount: body.amount,
          description: body.description ?? null,
          customerRef: body.customerRef ?? null,
          returnUrl: body.returnUrl ?? null,
          receiptLines,
          paymentLinkId: null,
          captureMethod: body.capture ?? 'automatic',
        });
        return { response: { status: 201, body: order } };
      },
    };
  }

  /**
   * Makes a PENDING order and opens its checkout session in `tx`, due the orders' TTL from now: every order is made
   * here, the API's and those a buyer opens through a payment link. Its fiscal lines are checked by the caller.
   */
  async insert(tx: Transaction, order: NewOrder): Promise<Order> {
    const created = new Date();
    const row: OrderRow = {
      id: newId('ord'),
      product_id: order.productId,
      livemode: order.livemode,
      amount: order.amount,
      currency: 'UZS',
      status: 'PENDING',
      description: order.description,
      customer_ref: order.customerRef,
      return_url: order.returnUrl,
      checkout_token: `cs_${randomBase62(CHECKOUT_TOKEN_RANDOM_CHARS)}`,
      save_card: false,
      payment_intent_id: null,
      saved_card_id: null,
      paid_at: null,
      failure_code: null,
      receipt_id: null,
      payment_link_id: order.paymentLinkId,
      capture_method: order.captureMethod,
      expires_at: new Date(created.getTime() + this.settings.orderTtlSeconds * 1000),
      created_at: created,
    };
    store.insertOrder(tx, row, order.receiptLines);
    await this.sessions.open(tx, 'order', row);
    return this.present(row);
  }

  /**
   * How many orders of a payment link hold a place now, counting up to `max`: PAID, or PENDING and still payable. An
   * order that expired, failed or was canceled (or is past its time with no debit in progress) holds none.
   */
  placesHeld(tx: Transaction, paymentLinkId: string, max: number): Promise<number> {
    return store.placesHeld(tx, paymentLinkId, max);
  }

  /**
   * Locks an order by id alone, for a session that already belongs to it: a payment orders itself against a cancel.
   * Its fiscal lines come with it, for the payment to carry.
   */
  lockById(tx: Transaction, id: string): Promise<OrderRow & { receipt_lines: ReceiptLines | null }> {
    return store.lockOrderById(tx, id);
  }

  /**
   * Expires a PENDING order past its time, once, with its event and its session; false when it may not expire. It takes
   * the order's lock first, as a payment does before it starts its debit, and only then asks whether a debit is in
   * progress: the question is asked after any payment holding the order has committed, so exactly one of them wins.
   */
  async expire(tx: Transaction, id: string): Promise<boolean> {
    await store.lockOrderById(tx, id);
    const row = await store.markExpired(tx, id);
    if (!row) return false;
    await this.sessions.closeOrderSession(tx, id, 'order_closed');
    this.events.record(tx, { productId: row.product_id, livemode: row.livemode, type: 'order.expired', data: this.present(row) });
    return true;
  }

  /**
   * Test mode's helper: expires a PENDING order now, as its time passing would (order.expired), unless the buyer is
   * paying it. Another product's or mode's order is not found.
   */
  async expireNow(merchant: Merchant, id: string): Promise<Order> {
    return this.db.transaction(async (tx) => {
      const order = await store.lockOrder(tx, merchant, id);
      if (!order) throw notFound('order');
      if (order.status !== 'PENDING') throw new ApiError('INVALID_STATE', `Only a PENDING order expires; this one is ${order.status}`);
      store.endNow(tx, id);
      if (!(await this.expire(tx, id))) throw new ApiError('ORDER_DEBIT_IN_PROGRESS', 'The buyer is paying this order right now');
      return this.present(await store.orderById(tx, id));
    });
  }

  /** The token of a PENDING order's payment page, which the buyer (or test mode's "pay" helper) pays through. */
  async checkoutTokenOf(merchant: Merchant, id: string): Promise<string> {
    const row = await store.findOrder(this.db, merchant, id);
    if (!row) throw notFound('order');
    const fresh = await this.fresh(row);
    if (fresh.status !== 'PENDING') throw new ApiError('INVALID_STATE', `Only a PENDING order can be paid; this one is ${fresh.status}`);
    return fresh.checkout_token;
  }

  /** An order past its time never reads as PENDING: it is expired on the way, unless a debit is in progress. */
  private async fresh(row: OrderRow): Promise<OrderRow> {
    if (row.status !== 'PENDING' || row.expires_at.getTime() > Date.now()) return row;
    const expired = await this.db.transaction((tx) => this.expire(tx, row.id));
    return expired ? store.orderById(this.db, row.id) : row;
  }

  async get(merchant: Merchant, id: string): Promise<Order> {
    const row = await store.findOrder(this.db, merchant, id);
    if (!row) throw notFound('order');
    return this.present(await this.fresh(row));
  }

  async list(merchant: Merchant, query: OrdersQuery): Promise<List<Order>> {
    const filters: ListFilter[] = [];
    if (query.status !== undefined) filters.push({ column: 'status', value: query.status });
    if (query.customerRef !== undefined) filters.push({ column: 'customer_ref', value: query.customerRef });
    if (query.paymentLink !== undefined) filters.push({ column: 'payment_link_id', value: query.paymentLink });
    const page = await listPage(this.db, store.ORDER_LIST, merchant, query, (row: OrderRow) => row, filters);
    // An order read past its expiry is expired as it is read: it has left a list of PENDING orders.
    const rows = (await Promise.all(page.data.map((row) => this.fresh(row)))).filter((row) => query.status === undefined || row.status === query.status);
    return { ...page, data: rows.map((row) => this.present(row)) };
  }

  private cancelPhases(merchant: Merchant, id: string): Steps {
    return {
      started: async (tx) => {
        const order = await store.lockOrder(tx, merchant, id);
        if (!order) throw notFound('order');
        if (order.status === 'PENDING' && (await store.debitInProgress(tx, id))) {
          throw new ApiError('ORDER_DEBIT_IN_PROGRESS', 'The buyer is paying this order right now; its outcome comes as an event');
        }
        // Past its time the order reads as EXPIRED (reads and the worker record it so): no longer cancelable.
        if (order.status === 'PENDING' && order.due) {
          throw new ApiError('ORDER_NOT_CANCELABLE', `This order expired at ${order.expires_at.toISOString()}`);
        }
        const canceled = await store.markCanceled(tx, id);
        if (!canceled) throw new ApiError('ORDER_NOT_CANCELABLE', `Only a PENDING order can be canceled; this one is ${order.status}`);
        await this.sessions.closeOrderSession(tx, id, 'order_closed');
        return { response: { status: 200, body: this.present(canceled) } };
      },
    };
  }

  /** One expiry batch: PENDING orders past their time, skipping those with a debit in progress. */
  async expireDue(batchMax: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      const due = await store.lockDueForExpiry(tx, batchMax);
      for (const id of due) await this.expire(tx, id);
      return due.length;
    });
  }

  /**
   * Applies a final debit to its order, in the transaction that made the debit final: PAID (saving the card when the
   * buyer asked) or FAILED, the session closed, and the event. Returns the card saved, if any. Should an order have
   * expired under its debit, a success still pays it (late, with its order.paid) and a refusal leaves it EXPIRED.
   */
  async applyPayment(tx: Transaction, payment: FinishedPayment): Promise<string | null> {
    if (payment.order_id === null) return null;
    const order = await store.orderById(tx, payment.order_id);
    // A hold is the buyer's payment done: the order is paid, its payment captured (or released) by the merchant later.
    if (payment.status === 'SUCCEEDED' || payment.status === 'REQUIRES_CAPTURE') {
      const captured = await this.sessions.capturedCardOfOrder(tx, order.id);
      const card =
        captured.save_card && order.customer_ref !== null
          ? await this.cards.insert(tx, {
              id: newId('card'),
              product_id: order.product_id,
              livemode: order.livemode,
              rail: captured.network,
              rail_token: payment.rail_token,
              masked_pan: captured.masked_pan,
              expiry: captured.card_expiry,
              customer_ref: order.customer_ref,
            })
          : null;
      const paid = await store.markPaid(tx, order.id, payment, card?.id ?? null);
      if (!paid) throw new Error(`order ${order.id} was ${order.status} while its debit succeeded`);
      await this.sessions.closeOrderSession(tx, order.id, 'debit_succeeded');
      this.events.record(tx, { productId: paid.product_id, livemode: paid.livemode, type: 'order.paid', data: this.present(paid) });
      return card?.id ?? null;
    }
    // An order no longer PENDING (it expired) keeps its status: a refused debit moved no money.
    await this.fail(tx, order.id, payment.id, payment.failure_code ?? 'PROCESSING_ERROR');
    return null;
  }

  /** The sale receipt of an order whose held payment was captured. */
  attachReceipt(tx: Transaction, id: string, receiptId: string): void {
    store.attachReceipt(tx, id, receiptId);
  }

  /** PENDING → FAILED with why, its session closed, and order.failed; false if it was no longer PENDING. */
  async fail(tx: Transaction, id: string, paymentIntentId: string | null, failureCode: string): Promise<boolean> {
    const failed = await store.markFailed(tx, id, paymentIntentId, failureCode);
    if (!failed) return false;
    await this.sessions.closeOrderSession(tx, id, 'debit_failed');
    this.events.record(tx, { productId: failed.product_id, livemode: failed.livemode, type: 'order.failed', data: this.present(failed) });
    return true;
  }
}
