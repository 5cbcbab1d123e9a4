// The API: each capability's routes, a plugin given the services it calls, registered on the server.
import type { FastifyInstance } from 'fastify';
import type { CardBindingsService } from '../modules/card-bindings/service.js';
import type { CardsService } from '../modules/cards/service.js';
import type { CheckoutService } from '../modules/checkout/service.js';
import type { Timings } from '../lib/timings.js';
import type { LedgerService } from '../modules/ledger/service.js';
import type { OrdersService } from '../modules/orders/service.js';
import type { PaymentsService } from '../modules/payments/service.js';
import type { ProductsService } from '../modules/products/service.js';
import type { ReconciliationService } from '../modules/reconciliation/service.js';
import type { RefundsService } from '../modules/refunds/service.js';
import type { HoldsService } from '../modules/holds/service.js';
import type { ReceiptsService } from '../modules/receipts/service.js';
import type { PayoutsService } from '../modules/payouts/service.js';
import type { PaymentLinksService } from '../modules/payment-links/service.js';
import { paymentLinkRoutes } from './routes/payment-links.js';
import { payoutRoutes } from './routes/payouts.js';
import { checkRoutes } from './routes/checks.js';
import { activationRoutes } from './routes/activations.js';
import { operatorRoutes } from './routes/operators.js';
import { supportRoutes } from './routes/support.js';
import type { ActivationsService } from '../modules/activations/service.js';
import type { OperatorActions } from '../modules/operators/actions.js';
import type { OperatorsService } from '../modules/operators/service.js';
import type { SupportService } from '../modules/support/service.js';
import type { ChecksService } from '../modules/checks/service.js';
import type { WebhooksService } from '../modules/webhooks/service.js';
import type { EventStreams } from '../modules/webhooks/stream.js';
import type { RequestLog } from '../modules/request-log/service.js';
import type { PaymentActivity } from '../modules/payments/activity.js';
import type { TestHelpersService } from '../modules/test-helpers/service.js';
import type { Mail } from '../modules/mail/service.js';
import type { AccountLinks } from '../modules/accounts/links.js';
import type { AccountsService } from '../modules/accounts/service.js';
import { dashboardRoutes } from '../web/dashboard/plugin.js';
import { consoleRoutes } from '../web/operator/plugin.js';
import { linkPageRoutes } from '../web/link-pages.js';
import { pageRoutes } from '../web/pages.js';
import { apiReferenceRoutes } from '../web/api-reference.js';
import type { IdempotentReplies } from './idempotency.js';
import { cardBindingRoutes } from './routes/card-bindings.js';
import { cardRoutes } from './routes/cards.js';
import { brandingRoutes } from './routes/branding.js';
import { timingRoutes } from './routes/timings.js';
import { checkoutRoutes, type CheckoutLimits } from './routes/checkout.js';
import { ledgerRoutes } from './routes/ledger.js';
import { orderRoutes } from './routes/orders.js';
import { paymentRoutes } from './routes/payments.js';
import { productRoutes } from './routes/products.js';
import { reconciliationRoutes } from './routes/reconciliation.js';
import { refundRoutes } from './routes/refunds.js';
import { receiptRoutes } from './routes/receipts.js';
import { webhookRoutes } from './routes/webhooks.js';
import { eventStreamRoutes } from './routes/event-stream.js';
import { requestLogRoutes } from './routes/request-log.js';
import { sdkPackageRoutes } from './routes/sdk-packages.js';
import { recordMerchantCalls } from './request-log.js';
import { testHelperRoutes } from './routes/test-helpers.js';

/** The capabilities' services, made once by the composition root and shared by the routes and the workers. */
export interface Services {
  accounts: AccountsService;
  accountLinks: AccountLinks;
  products: ProductsService;
  orders: OrdersService;
  /** Payment links, and the orders buyers open through them. */
  paymentLinks: PaymentLinksService;
  payments: PaymentsService;
  /** Two-step payments' captures and releases. */
  holds: HoldsService;
  refunds: RefundsService;
  receipts: ReceiptsService;
  payouts: PayoutsService;
  checks: ChecksService;
  activations: ActivationsService;
  operators: OperatorsService;
  /** What operators do to products, from the console and the operator API alike, each audited. */
  operatorActions: OperatorActions;
  /** The support search: any payment, order, refund, payout or receipt, with its timeline. */
  support: SupportService;
  cards: CardsService;
  bindings: CardBindingsService;
  checkout: CheckoutService;
  ledger: LedgerService;
  webhooks: WebhooksService;
  eventStreams: EventStreams;
  requestLog: RequestLog;
  activity: PaymentActivity;
  reconciliation: ReconciliationService;
  testHelpers: TestHelpersService;
  timings: Timings;
  mail: Mail;
}

export async function registerApi(
  app: FastifyInstance,
  { services, idempotent, checkoutLimits, publicUrl }: { services: Services; idempotent: IdempotentReplies; checkoutLimits: CheckoutLimits; publicUrl: string },
): Promise<void> {
  const { accounts, accountLinks, products, orders, paymentLinks, payments, holds, refunds, receipts, payouts, cards, bindings, checkout, ledger, webhooks, eventStreams, requestLog, activity, reconciliation, checks, activations, operators, operatorActions, support, testHelpers, timings } =
    services;
  recordMerchantCalls(app, requestLog);
  await app.register(productRoutes, { products, actions: operatorActions });
  await app.register(operatorRoutes, { operators });
  await app.register(supportRoutes, { support });
  await app.register(brandingRoutes, { products, actions: operatorActions, publicUrl });
  await app.register(reconciliationRoutes, { reconciliation });
  await app.register(checkRoutes, { checks });
  await app.register(activationRoutes, { activations, actions: operatorActions });
  await app.register(timingRoutes, { timings });
  await app.register(orderRoutes, { orders, idempotent });
  await app.register(paymentLinkRoutes, { paymentLinks, idempotent });
  await app.register(ledgerRoutes, { ledger, payouts });
  await app.register(cardBindingRoutes, { bindings, idempotent });
  await app.register(cardRoutes, { cards });
  await app.register(paymentRoutes, { payments, holds, idempotent });
  await app.register(refundRoutes, { refunds, idempotent });
  await app.register(payoutRoutes, { payouts, idempotent });
  await app.register(receiptRoutes, { receipts });
  await app.register(checkoutRoutes, { checkout, limits: checkoutLimits });
  await app.register(webhookRoutes, { webhooks, idempotent });
  await app.register(eventStreamRoutes, { streams: eventStreams });
  await app.register(requestLogRoutes, { requestLog });
  await app.register(testHelperRoutes, { helpers: testHelpers });
  await app.register(pageRoutes, { checkout, products });
  await app.register(linkPageRoutes, { paymentLinks, addressRequestsPerMinute: checkoutLimits.addressRequestsPerMinute });
  await app.register(apiReferenceRoutes);
  await app.register(sdkPackageRoutes);
  await app.register(dashboardRoutes, { prefix: '/dashboard', accounts, accountLinks, products, webhooks, payments, holds, orders, paymentLinks, refunds, receipts, cards, requestLog, activity, ledger, payouts, activations, publicUrl });
  await app.register(consoleRoutes, { prefix: '/operator', operators, actions: operatorActions, activations, products, checks, support, publicUrl });
}
