// The API's resources, each call typed by the schemas of the API's OpenAPI description (openapi.ts, generated).
import type { CallOptions, Transport } from './client.js';
import type { components, operations } from './openapi.js';
import { streamEvents, type StreamParams } from './stream.js';

type Schemas = components['schemas'];
export type Order = Schemas['Order'];
/** An address to share, where each buyer who presses Pay gets an order of their own. */
export type PaymentLink = Schemas['PaymentLink'];
export type PaymentIntent = Schemas['PaymentIntent'];
/** What a capture of a hold takes: `amount` (at most the held amount; all of it when absent) and its fiscal lines. */
export type CaptureParams = Schemas['CaptureBody'];
export type Refund = Schemas['Refund'];
export type Receipt = Schemas['Receipt'];
/** The fiscal lines sent as `receipt` with an order, a charge or a payment intent. */
export type ReceiptRequest = Schemas['ReceiptRequest'];
export type Card = Schemas['Card'];
export type CardBinding = Schemas['CardBinding'];
export type Balance = Schemas['Balance'];
/** Money sent from the available balance to the payout account: automatic (daily) or asked for. */
export type Payout = Schemas['Payout'];
/** Where payouts go; set only in the dashboard, read here with its number masked. */
export type PayoutAccount = Schemas['PayoutAccount'];
/** One movement of the balance: a payment, a refund, a payout; `net` is what it adds to the balance. */
export type BalanceTransaction = Schemas['BalanceTransaction'];
export type Event = Schemas['Event'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type RequestLogEntry = Schemas['RequestLogEntry'];

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

/** A list's query parameters as the API describes them: its filters, `created[gte]`, `created[lt]`, `limit`. */
type QueryOf<Operation extends keyof operations> = NonNullable<operations[Operation]['parameters']['query']>;

export interface ListParams {
  /** 1 to 100; default 10. */
  limit?: number;
  starting_after?: string;
}

/**
 * A page of a list, as a promise, that is also an async iterable over every item of every page after it:
 * `for await (const order of tolov.orders.list({ limit: 100 }))`.
 */
export class ListPromise<T extends { id: string }> implements PromiseLike<List<T>>, AsyncIterable<T> {
  private first: Promise<List<T>> | null = null;

  constructor(private readonly page: (startingAfter?: string) => Promise<List<T>>) {}

  private firstPage(): Promise<List<T>> {
    this.first ??= this.page();
    return this.first;
  }

  then<A = List<T>, B = never>(onFulfilled?: ((list: List<T>) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.firstPage().then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let list = await this.firstPage();
    for (;;) {
      yield* list.data;
      const last = list.data.at(-1);
      if (!list.has_more || last === undefined) return;
      list = await this.page(last.id);
    }
  }
}

const query = (params: object): string => {
  const entries = Object.entries(params).filter(([, value]) => value !== undefined).map(([name, value]) => [name, String(value)]);
  return entries.length === 0 ? '' : `?${new URLSearchParams(entries)}`;
};
const id = (value: string) => encodeURIComponent(value);

function lister<T extends { id: string }, P extends ListParams>(transport: Transport, path: string) {
  return (params: P = {} as P, options?: CallOptions) =>
    new ListPromise<T>((startingAfter) =>
      transport.request<List<T>>('GET', `${path}${query({ ...params, ...(startingAfter ? { starting_after: startingAfter } : {}) })}`, undefined, options),
    );
}

export function orders(transport: Transport) {
  return {
    create: (body: Schemas['CreateOrderBody'], options?: CallOptions) => transport.request<Order>('POST', '/merchant/v1/orders', body, options),
    retrieve: (orderId: string, options?: CallOptions) => transport.request<Order>('GET', `/merchant/v1/orders/${id(orderId)}`, undefined, options),
    cancel: (orderId: string, options?: CallOptions) => transport.request<Order>('POST', `/merchant/v1/orders/${id(orderId)}/cancel`, undefined, options),
    list: lister<Order, QueryOf<'listOrders'>>(transport, '/merchant/v1/orders'),
  };
}

export function charges(transport: Transport) {
  return {
    create: (body: Schemas['CreateChargeBody'], options?: CallOptions) => transport.request<PaymentIntent>('POST', '/subscribe/v1/charges', body, options),
    retrieve: (intentId: string, options?: CallOptions) => transport.request<PaymentIntent>('GET', `/subscribe/v1/charges/${id(intentId)}`, undefined, options),
    list: lister<PaymentIntent, QueryOf<'listCharges'>>(transport, '/subscribe/v1/charges'),
    /**
     * Takes a hold (`REQUIRES_CAPTURE`, made with `capture: 'manual'`): all of it, or `amount` of it (the rest goes back
     * to the card; with fiscal lines, `receipt` lines for that amount). `SUCCEEDED` with the amount captured.
     */
    capture: (intentId: string, body: CaptureParams = {}, options?: CallOptions) =>
      transport.request<PaymentIntent>('POST', `/subscribe/v1/charges/${id(intentId)}/capture`, body, options),
    /** Releases a hold: the whole amount goes back to the card, and the payment is `CANCELED`. */
    cancel: (intentId: string, options?: CallOptions) => transport.request<PaymentIntent>('POST', `/subscribe/v1/charges/${id(intentId)}/cancel`, undefined, options),
  };
}

export function paymentIntents(transport: Transport) {
  return {
    create: (body: Schemas['CreateIntentBody'], options?: CallOptions) => transport.request<PaymentIntent>('POST', '/v1/payment_intents', body, options),
    confirm: (intentId: string, options?: CallOptions) => transport.request<PaymentIntent>('POST', `/v1/payment_intents/${id(intentId)}/confirm`, undefined, options),
    cancel: (intentId: string, options?: CallOptions) => transport.request<PaymentIntent>('POST', `/v1/payment_intents/${id(intentId)}/cancel`, undefined, options),
    retrieve: (intentId: string, options?: CallOptions) => transport.request<PaymentIntent>('GET', `/v1/payment_intents/${id(intentId)}`, undefined, options),
  };
}

export function refunds(transport: Transport) {
  return {
    create: (body: Schemas['CreateRefundBody'], options?: CallOptions) => transport.request<Refund>('POST', '/v1/refunds', body, options),
    retrieve: (refundId: string, options?: CallOptions) => transport.request<Refund>('GET', `/v1/refunds/${id(refundId)}`, undefined, options),
    list: lister<Refund, QueryOf<'listRefunds'>>(transport, '/v1/refunds'),
  };
}

export function receipts(transport: Transport) {
  return {
    retrieve: (receiptId: string, options?: CallOptions) => transport.request<Receipt>('GET', `/v1/receipts/${id(receiptId)}`, undefined, options),
    list: lister<Receipt, QueryOf<'listReceipts'>>(transport, '/v1/receipts'),
  };
}

export function cards(transport: Transport) {
  return {
    retrieve: (cardId: string, options?: CallOptions) => transport.request<Card>('GET', `/subscribe/v1/cards/${id(cardId)}`, undefined, options),
    list: lister<Card, QueryOf<'listCards'>>(transport, '/subscribe/v1/cards'),
    delete: (cardId: string, options?: CallOptions) => transport.request<Card>('DELETE', `/subscribe/v1/cards/${id(cardId)}`, undefined, options),
  };
}

export function cardBindings(transport: Transport) {
  return {
    create: (body: Schemas['CreateBindingBody'] = {}, options?: CallOptions) => transport.request<CardBinding>('POST', '/subscribe/v1/card_bindings', body, options),
    retrieve: (bindingId: string, options?: CallOptions) => transport.request<CardBinding>('GET', `/subscribe/v1/card_bindings/${id(bindingId)}`, undefined, options),
  };
}

export function balance(transport: Transport) {
  return { retrieve: (options?: CallOptions) => transport.request<Balance>('GET', '/v1/balance', undefined, options) };
}

export function balanceTransactions(transport: Transport) {
  return {
    retrieve: (transactionId: string, options?: CallOptions) =>
      transport.request<BalanceTransaction>('GET', `/v1/balance_transactions/${id(transactionId)}`, undefined, options),
    list: lister<BalanceTransaction, QueryOf<'listBalanceTransactions'>>(transport, '/v1/balance_transactions'),
  };
}

export function paymentLinks(transport: Transport) {
  return {
    /** A link with a fixed `amount`, or one whose buyer enters it (`amountMin`..`amountMax`); `url` and `qrSvgUrl` to share. */
    create: (body: Schemas['CreatePaymentLinkBody'], options?: CallOptions) => transport.request<PaymentLink>('POST', '/v1/payment_links', body, options),
    retrieve: (linkId: string, options?: CallOptions) => transport.request<PaymentLink>('GET', `/v1/payment_links/${id(linkId)}`, undefined, options),
    /** Changes `active` (false: the link opens no more orders) and `description`. */
    update: (linkId: string, body: Schemas['UpdatePaymentLinkBody'], options?: CallOptions) =>
      transport.request<PaymentLink>('POST', `/v1/payment_links/${id(linkId)}`, body, options),
    list: lister<PaymentLink, QueryOf<'listPaymentLinks'>>(transport, '/v1/payment_links'),
  };
}

export function payouts(transport: Transport) {
  return {
    /** Pays out `amount` (the whole available balance when absent) now: `PENDING`, sent to the bank within seconds. */
    create: (body: Schemas['CreatePayoutBody'] = {}, options?: CallOptions) => transport.request<Payout>('POST', '/v1/payouts', body, options),
    retrieve: (payoutId: string, options?: CallOptions) => transport.request<Payout>('GET', `/v1/payouts/${id(payoutId)}`, undefined, options),
    list: lister<Payout, QueryOf<'listPayouts'>>(transport, '/v1/payouts'),
    /** Cancels a payout still `PENDING`; its amount is back in the available balance. */
    cancel: (payoutId: string, options?: CallOptions) => transport.request<Payout>('POST', `/v1/payouts/${id(payoutId)}/cancel`, undefined, options),
  };
}

export function payoutAccount(transport: Transport) {
  return { retrieve: (options?: CallOptions) => transport.request<PayoutAccount>('GET', '/v1/payout_account', undefined, options) };
}

export function events(transport: Transport) {
  return {
    retrieve: (eventId: string, options?: CallOptions) => transport.request<Event>('GET', `/v1/events/${id(eventId)}`, undefined, options),
    list: lister<Event, QueryOf<'listEvents'>>(transport, '/v1/events'),
    resend: (eventId: string, body: Schemas['ResendBody'], options?: CallOptions) =>
      transport.request<WebhookDelivery>('POST', `/v1/events/${id(eventId)}/resend`, body, options),
    /**
     * The key's events as they happen, reconnecting on its own and resuming after the last one given:
     * `for await (const event of tolov.events.stream({ signal }))`.
     */
    stream: (params?: StreamParams) => streamEvents(transport, params),
  };
}

export function webhookEndpoints(transport: Transport) {
  const path = (endpointId: string) => `/v1/webhook_endpoints/${id(endpointId)}`;
  return {
    create: (body: Schemas['CreateEndpointBody'], options?: CallOptions) => transport.request<WebhookEndpoint>('POST', '/v1/webhook_endpoints', body, options),
    retrieve: (endpointId: string, options?: CallOptions) => transport.request<WebhookEndpoint>('GET', path(endpointId), undefined, options),
    update: (endpointId: string, body: Schemas['UpdateEndpointBody'], options?: CallOptions) => transport.request<WebhookEndpoint>('POST', path(endpointId), body, options),
    delete: (endpointId: string, options?: CallOptions) => transport.request<Schemas['DeletedWebhookEndpoint']>('DELETE', path(endpointId), undefined, options),
    rollSecret: (endpointId: string, body: Schemas['RollSecretBody'] = {}, options?: CallOptions) =>
      transport.request<WebhookEndpoint>('POST', `${path(endpointId)}/roll_secret`, body, options),
    list: lister<WebhookEndpoint, QueryOf<'listWebhookEndpoints'>>(transport, '/v1/webhook_endpoints'),
    deliveries: (endpointId: string, params: ListParams = {}, options?: CallOptions) => lister<WebhookDelivery, ListParams>(transport, `${path(endpointId)}/deliveries`)(params, options),
  };
}

export function requestLogs(transport: Transport) {
  return {
    /** The latest API calls, newest first; `ending_before` gives the ones right after a call (for a tail). */
    list: lister<RequestLogEntry, QueryOf<'listRequestLogs'>>(transport, '/v1/request_logs'),
  };
}

export function testHelpers(transport: Transport) {
  return {
    orders: {
      /** Test mode: expire a PENDING order now (order.expired). */
      expire: (orderId: string, options?: CallOptions) => transport.request<Order>('POST', `/v1/test_helpers/orders/${id(orderId)}/expire`, undefined, options),
      /** Test mode: pay a PENDING order as a buyer would, with a test card (default 8600000000000007). */
      pay: (orderId: string, body: Schemas['TestCardBody'] = {}, options?: CallOptions) =>
        transport.request<Order>('POST', `/v1/test_helpers/orders/${id(orderId)}/pay`, body, options),
    },
    charges: {
      /**
       * Test mode: release a `REQUIRES_CAPTURE` hold now, as `TOLOV_HOLD_DAYS` passing would: the payment `CANCELED`
       * (payment_intent.hold_released). A payment not `REQUIRES_CAPTURE` (a repeat included) throws `INVALID_STATE`.
       */
      expireHold: (intentId: string, options?: CallOptions) =>
        transport.request<PaymentIntent>('POST', `/v1/test_helpers/charges/${id(intentId)}/expire_hold`, undefined, options),
    },
    cardBindings: {
      /** Test mode: complete a PENDING card binding as a buyer would, saving a test card (default 8600000000000007). */
      complete: (bindingId: string, body: Schemas['TestCardBody'] = {}, options?: CallOptions) =>
        transport.request<CardBinding>('POST', `/v1/test_helpers/card_bindings/${id(bindingId)}/complete`, body, options),
    },
    balance: {
      /** Test mode: make every succeeded payment's net available now, as the settlement delay would. */
      settle: (options?: CallOptions) => transport.request<Balance>('POST', '/v1/test_helpers/balance/settle', undefined, options),
    },
    payouts: {
      /**
       * Test mode: make the day's automatic payout now and send it, with every PENDING payout, to the test bank; the
       * account's last four digits decide (0002 fails `ACCOUNT_CLOSED`, 0003 stays `IN_TRANSIT`, others are `PAID`).
       */
      run: (options?: CallOptions) => transport.request<Payout>('POST', '/v1/test_helpers/payouts/run', undefined, options),
    },
    payoutAccount: {
      /** Test mode: end now the 24-hour hold a change of the payout account put on payouts. */
      releaseHold: (options?: CallOptions) => transport.request<PayoutAccount>('POST', '/v1/test_helpers/payout_account/release_hold', undefined, options),
    },
  };
}
