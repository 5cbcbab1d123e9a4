// Fiscal receipts: a sale receipt written in the transaction that makes a payment SUCCEEDED, a return receipt in the
// one that makes its refund SUCCEEDED; both registered afterwards by the fiscalization worker with the fiscal module,
// under the receipt's own id, so that no retry or crash registers one twice. Fiscalizing never touches the money.
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Transaction } from '../../db/types.js';
import { TASHKENT_OFFSET_MS } from '../../core/calendar.js';
import type { Merchant } from '../../core/merchant.js';
import { notFound } from '../../core/errors.js';
import { listPage, type List, type ListFilter } from '../../core/pagination.js';
import { newId } from '../../core/ids.js';
import { randomBase62 } from '../../lib/random.js';
import type { FiscalOutcome, FiscalReceipt } from '../../rails/fiscal.js';
import type { FiscalModules } from '../../rails/index.js';
import type { EventRecorder } from '../webhooks/service.js';
import { receiptLinesFor, receiptRequired, shippingLine, vatAmountOf } from './lines.js';
import type { Receipt, ReceiptLines, ReceiptRequest, ReceiptsQuery } from './schema.js';
import * as store from './store.js';
import type { LeasedReceipt, ReceiptRow } from './store.js';

export { fiscalizedBetween } from './store.js';
export type { ReceiptRow } from './store.js';

const PUBLIC_TOKEN_RANDOM_CHARS = 40; // ≈ 238 bits: the token alone opens the buyer's receipt
/** How long a leased receipt is one worker's beyond its module's call windows. */
const LEASE_MARGIN_MS = 5_000;
/** The module calls one attempt makes at most, one after the other: status, register, fence. */
const CALLS_PER_ATTEMPT_MAX = 3;
/** A receipt that ends FAILED without a refusal by the module: it never registered it, or it could not be asked. */
type Unsettled = { status: 'UNSETTLED'; failureCode: 'FISCAL_UNAVAILABLE' | 'FISCAL_UNSETTLED' };
const NEVER_REGISTERED: Unsettled = { status: 'UNSETTLED', failureCode: 'FISCAL_UNAVAILABLE' };
/** Fences tried after the schedule is used up, at its longest delay, before an unreachable module fails the receipt. */
const FENCE_RETRIES_MAX = 10;

export interface ReceiptSettings {
  checkoutUrl: string;
  vatRates: readonly number[];
  /** Seconds before each attempt at the fiscal module; its length is the attempt count. */
  retryScheduleSeconds: readonly number[];
}


/** A payment as its sale receipt needs it. */
export interface PaidWithLines {
  id: string;
  product_id: string;
  livemode: boolean;
  amount: number;
  masked_pan: string;
  receipt_lines: ReceiptLines;
}

/** A receipt as its buyer's printable page shows it. */
export interface BuyerReceipt {
  receipt: Receipt;
  /** The card that paid, masked: the only card data a receipt shows. */
  maskedPan: string;
  shop: { name: string; brandColor: string | null; logoDigest: string | null };
}

/** `yyyyMMddHHmmss` in Tashkent time (UTC+5, no daylight saving), as the tax authority's check link writes it. */
function tashkentStamp(at: Date): string {
  return new Date(at.getTime() + TASHKENT_OFFSET_MS).toISOString().slice(0, 19).replace(/[-T:]/g, '');
}

export function qrUrlOf(row: Pick<ReceiptRow, 'terminal_id' | 'receipt_number' | 'fiscal_sign' | 'fiscalized_at'>): string | null {
  if (row.terminal_id === null || row.receipt_number === null || row.fiscal_sign === null || row.fiscalized_at === null) return null;
  const query = new URLSearchParams({ t: row.terminal_id, r: row.receipt_number, c: tashkentStamp(row.fiscalized_at), s: row.fiscal_sign });
  return `https://ofd.soliq.uz/check?${query.toString()}`;
}

function fiscalReceiptOf(row: ReceiptRow): FiscalReceipt {
  const lines = row.lines.items.map((item) => ({ ...item }));
  if (row.lines.shipping !== null) lines.push(shippingLine(row.lines.shipping));
  return { id: row.id, type: row.type, amount: row.amount, vatAmount: row.vat_amount, lines };
}

export class ReceiptsService {
  constructor(
    private readonly db: Db,
    private readonly fiscal: FiscalModules,
    private readonly events: EventRecorder,
    private readonly settings: ReceiptSettings,
    private readonly log: FastifyBaseLogger,
  ) {}

  present(row: ReceiptRow): Receipt {
    return {
      id: row.id,
      object: 'receipt',
      type: row.type,
      status: row.status,
      paymentIntent: row.payment_intent_id,
      refund: row.refund_id,
      items: row.lines.items,
      shipping: row.lines.shipping,
      amount: row.amount,
      vatAmount: row.vat_amount,
      terminalId: row.terminal_id,
      receiptNumber: row.receipt_number,
      fiscalSign: row.fiscal_sign,
      qrUrl: qrUrlOf(row),
      fiscalizedAt: row.fiscalized_at?.toISOString() ?? null,
      failureCode: row.failure_code,
      url: `${this.settings.checkoutUrl}/receipts/${row.public_token}`,
      livemode: row.livemode,
      created: row.created_at.toISOString(),
    };
  }

  /**
   * The lines a request for `amount` carries, checked before anything is written; null without lines, unless the
   * merchant is live and must give them.
   */
  linesFor(merchant: Merchant, request: ReceiptRequest | undefined, amount: number): ReceiptLines | null {
    if (request === undefined) {
      if (merchant.livemode && merchant.receiptRequired) throw receiptRequired();
      return null;
    }
    return receiptLinesFor(request, amount, this.settings.vatRates);
  }

  #newReceipt(): store.NewReceipt {
    return { id: newId('rcpt'), publicToken: `rc_${randomBase62(PUBLIC_TOKEN_RANDOM_CHARS)}`, firstAttemptInSeconds: this.settings.retryScheduleSeconds[0] ?? 0 };
  }

  /** Writes the sale receipt of a payment that just SUCCEEDED, in its transaction; returns its id. */
  recordSale(tx: Transaction, payment: PaidWithLines): string {
    const receipt = this.#newReceipt();
    store.insertSale(tx, { ...receipt, vatAmount: vatAmountOf(payment.receipt_lines) }, payment);
    return receipt.id;
  }

  /** Writes the return receipt of a refund that just SUCCEEDED, in its transaction; null when its payment had no receipt. */
  async recordReturn(tx: Transaction, refund: { id: string; payment_intent_id: string; amount: number }): Promise<string | null> {
    const receipt = this.#newReceipt();
    return (await store.insertReturn(tx, receipt, refund)) ? receipt.id : null;
  }

  async get(merchant: Merchant, id: string): Promise<Receipt> {
    const row = await store.findReceipt(this.db, merchant, id);
    if (!row) throw notFound('receipt');
    return this.present(row);
  }

  list(merchant: Merchant, query: ReceiptsQuery): Promise<List<Receipt>> {
    const filters: ListFilter[] = [];
    if (query.paymentIntent !== undefined) filters.push({ column: 'payment_intent_id', value: query.paymentIntent });
    if (query.type !== undefined) filters.push({ column: 'type', value: query.type });
    if (query.status !== undefined) filters.push({ column: 'status', value: query.status });
    return listPage(this.db, store.RECEIPT_LIST, merchant, query, (row: ReceiptRow) => this.present(row), filters);
  }

  /** A payment's receipts, its sale first, for the pages that show them. */
  async ofPayment(paymentIntentId: string): Promise<ReceiptRow[]> {
    return store.receiptsOfPayment(this.db, paymentIntentId);
  }


  /** A payment's sale receipt, or null when it was paid without lines. */
  async saleOf(paymentIntentId: string): Promise<Receipt | null> {
    const sale = (await store.receiptsOfPayment(this.db, paymentIntentId)).find((row) => row.type === 'sale');
    return sale ? this.present(sale) : null;
  }

  /** What a buyer's link opens: the receipt, the card as masked, and the shop as buyers see it; undefined for no receipt. */
  async forBuyer(publicToken: string): Promise<BuyerReceipt | undefined> {
    const row = await store.receiptWithShop(this.db, publicToken);
    if (!row) return undefined;
    return { receipt: this.present(row), maskedPan: row.masked_pan, shop: { name: row.shop_name, brandColor: row.brand_color, logoDigest: row.logo_digest } };
  }

  /**
   * One fiscalization batch: leases due PENDING receipts, asks the fiscal module outside any transaction, and records
   * the outcome in a transaction of its own (once: only a PENDING receipt moves). Returns how many it leased.
   */
  async fiscalizeDue(batchMax: number): Promise<number> {
    const leaseMs = (livemode: boolean) => CALLS_PER_ATTEMPT_MAX * (this.fiscal.forMode(livemode)?.callWindowMs ?? 0) + LEASE_MARGIN_MS;
    const leased = await store.leaseDue(this.db, batchMax, { test: leaseMs(false), live: leaseMs(true) });
    await Promise.all(
      leased.map(async (row) => {
        const outcome = await this.#attempt(row);
        await this.db.transaction((tx) => this.#record(tx, row, outcome));
      }),
    );
    return leased.length;
  }

  /**
   * One attempt at the module. After an earlier attempt (an unclear answer, or a process that died during its call)
   * the module is asked about the id first. Once the schedule is used up, the id is fenced, so that FISCAL_UNAVAILABLE
   * means the module will never register it; a fence that gets no answer is tried again, a bounded number of times,
   * then the receipt fails as FISCAL_UNSETTLED (the module may hold it). A return waits for its sale (see leaseDue) and
   * is refused with it.
   */
  async #attempt(row: LeasedReceipt): Promise<FiscalOutcome | Unsettled> {
    const module = this.fiscal.forMode(row.livemode);
    const scheduled = this.settings.retryScheduleSeconds.length;
    // Never settled: the module may hold the receipt, so the merchant must not register it elsewhere yet.
    const unclear: FiscalOutcome | Unsettled =
      row.attempts >= scheduled + FENCE_RETRIES_MAX ? { status: 'UNSETTLED', failureCode: 'FISCAL_UNSETTLED' } : { status: 'UNKNOWN' };
    if (row.sale_status === 'FAILED') return { status: 'REFUSED', failureCode: 'SALE_NOT_FISCALIZED' };
    // Without a module nothing was ever sent: there is nothing to fence.
    if (module === null) return row.attempts >= scheduled ? NEVER_REGISTERED : { status: 'UNKNOWN' };
    try {
      if (row.attempts <= scheduled) {
        const known = row.attempts > 1 ? await module.status(row.id) : ({ status: 'NOT_FOUND' } as const);
        const outcome = known.status === 'NOT_FOUND' ? await module.register(fiscalReceiptOf(row)) : known;
        if (outcome.status !== 'UNKNOWN' || row.attempts < scheduled) return outcome;
      }
      const settled = await module.fence(row.id);
      return settled.status === 'FENCED' ? NEVER_REGISTERED : settled;
    } catch (error) {
      this.log.warn({ err: error, receipt: row.id }, 'fiscal module call failed; the receipt stays PENDING');
      return unclear;
    }
  }

  async #record(tx: Transaction, row: LeasedReceipt, outcome: FiscalOutcome | Unsettled): Promise<void> {
    if (outcome.status === 'UNKNOWN') {
      const schedule = this.settings.retryScheduleSeconds;
      // Past the schedule, fences are tried again at its longest delay.
      store.deferAttempt(tx, row.id, schedule[row.attempts] ?? Math.max(...schedule));
      return;
    }
    const finished =
      outcome.status === 'REGISTERED'
        ? await store.markFiscalized(tx, row.id, outcome)
        : await store.markFailed(tx, row.id, outcome.failureCode);
    if (!finished) return;
    this.events.record(tx, {
      productId: finished.product_id,
      livemode: finished.livemode,
      type: finished.status === 'FISCALIZED' ? 'receipt.fiscalized' : 'receipt.failed',
      data: this.present(finished),
    });
  }
}
