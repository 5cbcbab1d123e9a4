// What the dashboard's pages are given: the services they call, and where the service is reached from outside.
import type { FastifyRequest } from 'fastify';
import type { AccountLinks } from '../../modules/accounts/links.js';
import type { ActivationsService } from '../../modules/activations/service.js';
import type { HoldsService } from '../../modules/holds/service.js';
import type { AccountsService } from '../../modules/accounts/service.js';
import type { OrdersService } from '../../modules/orders/service.js';
import type { PaymentLinksService } from '../../modules/payment-links/service.js';
import type { PaymentsService } from '../../modules/payments/service.js';
import type { PayoutsService } from '../../modules/payouts/service.js';
import type { RefundsService } from '../../modules/refunds/service.js';
import type { ReceiptsService } from '../../modules/receipts/service.js';
import type { CardsService } from '../../modules/cards/service.js';
import type { RequestLog } from '../../modules/request-log/service.js';
import type { PaymentActivity } from '../../modules/payments/activity.js';
import type { LedgerService } from '../../modules/ledger/service.js';
import type { ProductsService } from '../../modules/products/service.js';
import type { WebhooksService } from '../../modules/webhooks/service.js';

export interface DashboardDeps {
  accounts: AccountsService;
  /** Sign-up and password resets by mailed link, and password changes. */
  accountLinks: AccountLinks;
  products: ProductsService;
  webhooks: WebhooksService;
  payments: PaymentsService;
  /** Two-step payments: a hold captured (all of it or less) or released from the payment's page. */
  holds: HoldsService;
  orders: OrdersService;
  /** Payment links: listed, made, shared and turned off or on again; their orders are the orders service's. */
  paymentLinks: PaymentLinksService;
  refunds: RefundsService;
  /** Fiscal receipts: their list, a payment's, and the failed ones the overview flags. */
  receipts: ReceiptsService;
  cards: CardsService;
  requestLog: RequestLog;
  activity: PaymentActivity;
  ledger: LedgerService;
  /** The payout account: shown to everyone, set by an owner with the second factor, its hold on every page. */
  payouts: PayoutsService;
  /** The request to go live: its status for everyone, submitted by an owner with the second factor. */
  activations: ActivationsService;
  /** The public address of the service (TOLOV_CHECKOUT_URL): invitation links start with it. */
  publicUrl: string;
}

/** A posted form: repeated names (checkboxes) become lists. */
export type Form = Record<string, string | string[]>;

/** A post to a payment's or an order's page, or a read of it with what a change just did (`done`) or refused (`error`). */
export type DetailRequest = FastifyRequest<{ Params: { id: string }; Querystring: { done?: string; error?: string }; Body: Form }>;
