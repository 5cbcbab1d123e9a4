// Tolov's API from Node.js 20+: `const tolov = new Tolov(process.env.TOLOV_API_KEY)`.
import { Transport, type ClientOptions } from './client.js';
import * as resources from './resources.js';
import { constructEvent, signedHeaders } from './webhooks.js';

export class Tolov {
  readonly orders;
  /** Payment links: an address (and its QR code) where each buyer who presses Pay gets an order of their own. */
  readonly paymentLinks;
  readonly charges;
  readonly paymentIntents;
  readonly refunds;
  /** Fiscal receipts: a sale receipt per payment sent with lines, a return receipt per refund of it. */
  readonly receipts;
  readonly cards;
  readonly cardBindings;
  readonly balance;
  /** The statement: every movement of the balance; the available rows' `net` sums to `available`, the pending ones' to `pending`. */
  readonly balanceTransactions;
  /** Payouts of the available balance to the payout account: the daily automatic one and those asked for. */
  readonly payouts;
  /** Where payouts go: read only (an owner sets it in the dashboard, with the second factor). */
  readonly payoutAccount;
  readonly events;
  readonly webhookEndpoints;
  /** The product's latest API calls in the key's mode. */
  readonly requestLogs;
  /** Test mode only: produce what a buyer or time would, at once. */
  readonly testHelpers;
  /** Verifies a webhook delivery on its raw body: `tolov.webhooks.constructEvent(rawBody, headers, secret)`; signs one for tests. */
  readonly webhooks = { constructEvent, signedHeaders };

  constructor(apiKey: string, options: ClientOptions = {}) {
    const transport = new Transport(apiKey, options);
    this.orders = resources.orders(transport);
    this.paymentLinks = resources.paymentLinks(transport);
    this.charges = resources.charges(transport);
    this.paymentIntents = resources.paymentIntents(transport);
    this.refunds = resources.refunds(transport);
    this.receipts = resources.receipts(transport);
    this.cards = resources.cards(transport);
    this.cardBindings = resources.cardBindings(transport);
    this.balance = resources.balance(transport);
    this.balanceTransactions = resources.balanceTransactions(transport);
    this.payouts = resources.payouts(transport);
    this.payoutAccount = resources.payoutAccount(transport);
    this.events = resources.events(transport);
    this.webhookEndpoints = resources.webhookEndpoints(transport);
    this.requestLogs = resources.requestLogs(transport);
    this.testHelpers = resources.testHelpers(transport);
  }
}

export default Tolov;
export type { CallOptions, ClientOptions } from './client.js';
export { TolovConnectionError, TolovError, type ErrorCode } from './errors.js';
export type {
  Balance,
  BalanceTransaction,
  CaptureParams,
  Card,
  CardBinding,
  Event,
  List,
  ListParams,
  Order,
  PaymentIntent,
  PaymentLink,
  Payout,
  PayoutAccount,
  Receipt,
  ReceiptRequest,
  Refund,
  RequestLogEntry,
  WebhookDelivery,
  WebhookEndpoint,
} from './resources.js';
export { ListPromise } from './resources.js';
export type { StreamParams } from './stream.js';
export { constructEvent, signedHeaders, WebhookSignatureError, type TolovEvent, type UnknownEvent } from './webhooks.js';
export type { components, paths, webhooks as webhookPayloads } from './openapi.js';
