// Payment links: a merchant's reusable URL that sells without code. Each buyer who presses Pay on the link's page gets
// an order of their own (made by the orders module, with the link's id, description, fiscal lines and the orders' TTL)
// and goes on to its hosted payment page. The link's row lock orders everything that decides whether an order may be
// opened: a deactivation, and the places `quantityMax` allows, which concurrent buyers compete for.
import type { Db, Transaction } from '../../db/types.js';
import { assertActive, type Merchant } from '../../core/merchant.js';
import { ApiError, notFound } from '../../core/errors.js';
import type { Answer, Commands, Invocation } from '../../core/commands.js';
import { newId } from '../../core/ids.js';
import { listPage, type List, type ListFilter } from '../../core/pagination.js';
import { randomBase62 } from '../../lib/random.js';
import type { OrdersService } from '../orders/service.js';
import type { ProductsService } from '../products/service.js';
import type { ReceiptLines, ReceiptRequest } from '../receipts/schema.js';
import type { ReceiptsService } from '../receipts/service.js';
import { CHOSEN_AMOUNT_MAX, CHOSEN_AMOUNT_MIN, type CreatePaymentLinkBody, type PaymentLink, type PaymentLinksQuery, type UpdatePaymentLinkBody } from './schema.js';
import * as store from './store.js';
import type { PaymentLinkPageRow, PaymentLinkRow } from './store.js';

/** 62^10 ≈ 8·10^17 slugs: a link cannot be found by guessing, and two links drawing the same one is not to be expected. */
const SLUG_CHARS = 10;
const SLUG = /^[0-9A-Za-z]{10}$/;

/** What opening a link came to: an order to pay, or why there is none. */
export type OpenedLink =
  | { outcome: 'opened'; paymentUrl: string; orderId: string }
  | { outcome: 'not_found' }
  | { outcome: 'inactive' }
  | { outcome: 'sold_out' }
  | { outcome: 'amount'; min: number; max: number };

/** What the link's page shows: the link, its slug, and its product as the hosted payment page shows it. */
export interface PaymentLinkPage extends PaymentLink {
  slug: string;
  productId: string;
  shop: {
    /** The name buyers see: the product's display name, else its name. */
    name: string;
    /** The logo's digest, served at /brand/logos/{digest}; null: no logo. */
    logoDigest: string | null;
    /** `#rrggbb`, or null for Tolov's colour; served at /brand/colors/{hex}.css. */
    brandColor: string | null;
    /** Tolov suspended the product: `open` refuses with PRODUCT_SUSPENDED. */
    suspended: boolean;
  };
}

/** The lines as a request gives them, which is how the link shows them: the optional fields left out when unset. */
function requestOf(lines: ReceiptLines): ReceiptRequest {
  return {
    items: lines.items.map(({ commissionTin, ...item }) => (commissionTin === null ? item : { ...item, commissionTin })),
    ...(lines.shipping === null ? {} : { shipping: lines.shipping }),
  };
}

const invalid = (param: string, message: string) => new ApiError('VALIDATION_ERROR', message, { param });

export class PaymentLinksService {
  constructor(
    private readonly db: Db,
    private readonly settings: { checkoutUrl: string },
    private readonly orders: Pick<OrdersService, 'insert' | 'placesHeld'>,
    private readonly receipts: Pick<ReceiptsService, 'linesFor'>,
    private readonly products: Pick<ProductsService, 'find'>,
    private readonly commands: Commands,
  ) {}

  present(row: PaymentLinkRow): PaymentLink {
    const url = `${this.settings.checkoutUrl}/l/${row.slug}`;
    return {
      id: row.id,
      object: 'payment_link',
      url,
      qrSvgUrl: `${url}/qr.svg`,
      amount: row.amount,
      amountMin: row.amount_min,
      amountMax: row.amount_max,
      description: row.description,
      receipt: row.receipt_lines === null ? null : requestOf(row.receipt_lines),
      active: row.active,
      quantityMax: row.quantity_max,
      livemode: row.livemode,
      created: row.created_at.toISOString(),
    };
  }

  /** A new link (201); a suspended product may not make one. Audited when a dashboard user makes it. */
  create(invocation: Invocation, body: CreatePaymentLinkBody): Promise<Answer<PaymentLink>> {
    const audit = { action: 'payment_link.created', target: (link: PaymentLink) => link.id };
    return this.commands.change(invocation, 201, (tx) => this.insert(tx, invocation.scope, body), { activeOnly: true, audit });
  }

  /** Changes `active` and `description` (200), under the link's lock: see `open`. Audited when a dashboard user does it. */
  update(invocation: Invocation, id: string, body: UpdatePaymentLinkBody): Promise<Answer<PaymentLink>> {
    const action = body.active === undefined ? 'payment_link.updated' : body.active ? 'payment_link.activated' : 'payment_link.deactivated';
    const write = async (tx: Transaction) => {
      const row = await store.updateLink(tx, invocation.scope, id, { active: body.active ?? null, description: body.description ?? null });
      if (!row) throw notFound('payment link');
      return this.present(row);
    };
    return this.commands.change(invocation, 200, write, { audit: { action, target: id } });
  }

  async get(merchant: Merchant, id: string): Promise<PaymentLink> {
    const row = await store.findLink(this.db, merchant, id);
    if (!row) throw notFound('payment link');
    return this.present(row);
  }

  list(merchant: Merchant, query: PaymentLinksQuery): Promise<List<PaymentLink>> {
    const filters: ListFilter[] = query.active === undefined ? [] : [{ column: 'active', value: query.active }];
    return listPage(this.db, store.PAYMENT_LINK_LIST, merchant, query, (row: PaymentLinkRow) => this.present(row), filters);
  }

  /** What the link's page renders; null for a slug no link has. */
  async bySlug(slug: string): Promise<PaymentLinkPage | null> {
    const row = SLUG.test(slug) ? await store.findPageBySlug(this.db, slug) : undefined;
    if (!row) return null;
    return this.pageOf(row);
  }

  /**
   * Opens an order for a buyer who pressed Pay on the link's page, in one transaction under the link's lock: nothing on
   * a link that is unknown or inactive (a deactivation holds the same lock, so it comes wholly before or after), an
   * amount outside the link's bounds, a link whose `quantityMax` places are all held (two buyers racing for the last
   * place queue on the lock: the second sees the first's order), or a product that may not take orders now (inactive;
   * a suspended one throws PRODUCT_SUSPENDED, as its API calls answer). The chosen amount (tiyin) is read only when the
   * link has no fixed one.
   */
  async open(slug: string, chosenAmount: number | null): Promise<OpenedLink> {
    if (!SLUG.test(slug)) return { outcome: 'not_found' };
    return this.db.transaction(async (tx): Promise<OpenedLink> => {
      const link = await store.lockBySlug(tx, slug);
      if (!link) return { outcome: 'not_found' };
      if (!link.active) return { outcome: 'inactive' };
      const amount = link.amount ?? chosenAmount;
      if (amount === null || (link.amount === null && !this.withinBounds(link, amount))) {
        return { outcome: 'amount', min: link.amount_min!, max: link.amount_max! };
      }
      if (link.quantity_max !== null && (await this.orders.placesHeld(tx, link.id, link.quantity_max)) >= link.quantity_max) {
        return { outcome: 'sold_out' };
      }
      if (!(await this.takesOrders(tx, link))) return { outcome: 'inactive' };
      const order = await this.orders.insert(tx, {
        productId: link.product_id,
        livemode: link.livemode,
        amount,
        description: link.description,
        customerRef: null,
        returnUrl: null,
        receiptLines: link.receipt_lines,
        paymentLinkId: link.id,
        captureMethod: 'automatic',
      });
      return { outcome: 'opened', paymentUrl: order.paymentUrl, orderId: order.id };
    });
  }

  private withinBounds(link: PaymentLinkRow, amount: number): boolean {
    return Number.isSafeInteger(amount) && amount >= link.amount_min! && amount <= link.amount_max!;
  }

  /**
   * Whether the link's product may take an order now: live mode on for a live link, and, for a live link without fiscal
   * lines, not required to give them (the operator may require them after the link was made). A suspended product is
   * refused with PRODUCT_SUSPENDED.
   */
  private async takesOrders(tx: Transaction, link: PaymentLinkRow): Promise<boolean> {
    const product = await this.products.find(link.product_id, tx);
    assertActive({ suspended: product.suspended_at !== null });
    if (!link.livemode) return true;
    return product.live_enabled && (link.receipt_lines !== null || !product.receipt_required);
  }

  private async insert(tx: Transaction, merchant: Merchant, body: CreatePaymentLinkBody): Promise<PaymentLink> {
    const row = await store.insertLink(tx, {
      id: newId('plink'),
      product_id: merchant.productId,
      livemode: merchant.livemode,
      slug: randomBase62(SLUG_CHARS),
      ...this.priceOf(merchant, body),
      description: body.description,
      active: body.active ?? true,
      quantity_max: body.quantityMax ?? null,
    });
    return this.present(row);
  }

  /**
   * A fixed amount with the fiscal lines its orders carry (checked as an order's are), or the bounds of the buyer's
   * choice; a 400 naming the field that does not fit.
   */
  private priceOf(merchant: Merchant, body: CreatePaymentLinkBody): Pick<PaymentLinkRow, 'amount' | 'amount_min' | 'amount_max' | 'receipt_lines'> {
    if (body.amount !== undefined) {
      const bound = body.amountMin !== undefined ? 'amountMin' : body.amountMax !== undefined ? 'amountMax' : null;
      if (bound !== null) throw invalid(bound, `${bound} bounds an amount the buyer chooses; a link with amount has a fixed one`);
      return { amount: body.amount, amount_min: null, amount_max: null, receipt_lines: this.receipts.linesFor(merchant, body.receipt, body.amount) };
    }
    if (body.receipt !== undefined) throw invalid('receipt', 'receipt needs amount: fiscal lines add up to a fixed amount, and without amount the buyer chooses it');
    if (merchant.livemode && merchant.receiptRequired) {
      // Lines must add up to the amount, which the buyer has not chosen yet.
      throw new ApiError('RECEIPT_REQUIRED', 'A live payment link needs amount and receipt: every live payment of this product needs fiscal lines', { param: 'amount' });
    }
    const min = body.amountMin ?? CHOSEN_AMOUNT_MIN;
    const max = body.amountMax ?? CHOSEN_AMOUNT_MAX;
    if (min > max) throw invalid('amountMin', `amountMin (${min}) is more than amountMax (${max})`);
    return { amount: null, amount_min: min, amount_max: max, receipt_lines: null };
  }

  private pageOf(row: PaymentLinkPageRow): PaymentLinkPage {
    return {
      ...this.present(row),
      slug: row.slug,
      productId: row.product_id,
      shop: { name: row.product_name, logoDigest: row.logo_digest, brandColor: row.brand_color, suspended: row.product_suspended },
    };
  }
}
