// What the OpenAPI description says beyond the schemas: what each error code and failureCode means, and per operation
// what its success answer is and which errors its own logic answers. The errors every call of a kind answers (a
// missing key, a bad field, a reused Idempotency-Key) are added from the route's declaration by openapi.ts.
import type { ErrorCode } from '../core/errors.js';

/** Each error code's meaning, as docs/errors.md gives it. */
export const ERROR_MEANINGS: Readonly<Record<ErrorCode, string>> = {
  VALIDATION_ERROR: 'A field, parameter or header is missing, of the wrong type, out of bounds or unknown, or the body is not JSON; `param` names it',
  IDEMPOTENCY_KEY_REQUIRED: 'This call needs an `Idempotency-Key` header',
  CARD_INACTIVE: 'The card is blocked or deleted, or the bank does not accept it',
  INVALID_CARD: 'The card number fails its check digit or belongs to no known network, or the card has expired',
  WRONG_CODE: 'Wrong SMS code',
  PARTIAL_REFUND_NOT_SUPPORTED: "A refund's `amount` differs from the payment's: only full refunds; nothing was created",
  RECEIPT_MISMATCH: "The `receipt` lines do not add up to `amount` (Σ(price × count − discount) + shipping price), or a discount exceeds its line; `param` names the first field that is off; nothing was created",
  RECEIPT_REQUIRED: 'A live order, charge or payment intent needs `receipt` with its fiscal lines (unless the operator turned that off for the product); nothing was created',
  UNAUTHENTICATED: 'The API key is missing, malformed, unknown or revoked (with `WWW-Authenticate: Bearer`)',
  PAYMENT_FAILED: "The bank refused an order's payment; `failureCode` says why",
  SCOPE_REQUIRED: 'The key lacks the scope: orders need `sale_of_goods`; card bindings and charges need `subscribe`',
  NOT_FOUND: "No such object for this key's product and mode (another product's object answers exactly like a missing one), or no such route",
  IDEMPOTENCY_KEY_IN_USE: 'The first request with this `Idempotency-Key` is still running; retry shortly',
  ORDER_DEBIT_IN_PROGRESS: 'The buyer is paying the order right now; its outcome comes as an event',
  ORDER_NOT_CANCELABLE: 'Only a `PENDING` order can be canceled',
  INVALID_STATE: "The object's state does not allow the call (a card-capture step out of order, a confirm of an intent that is not `REQUIRES_PAYMENT`…)",
  LIMIT_REACHED: 'A count limit is reached: 16 webhook endpoints per mode, or 10 deliveries of one event to one endpoint',
  ALREADY_REFUNDED: 'The payment already has a refund',
  PAYMENT_NOT_REFUNDABLE: 'Only a `SUCCEEDED` payment can be refunded',
  INSUFFICIENT_BALANCE: 'A payout asks for more than the available balance (or, by the test helper, less than the minimum is unpaid)',
  PAYOUTS_HELD: 'Payouts are held for 24 hours after a change of the payout account; the message says until when',
  PAYOUT_ACCOUNT_REQUIRED: 'The product has no payout account in this mode: an owner sets it in the dashboard',
  PAYOUT_NOT_CANCELABLE: 'Only a `PENDING` payout can be canceled',
  PRODUCT_SUSPENDED: 'Tolov has suspended the product: no payments, card bindings, orders or payouts until it is resumed; reads and refunds still work',
  REQUEST_TIMEOUT: 'The request did not arrive whole in time',
  SESSION_EXPIRED: 'The checkout session has expired (`"error": "Gone"`)',
  BODY_TOO_LARGE: 'The body is over 128 KiB',
  URI_TOO_LONG: 'A path parameter is longer than any id Tolov issues',
  UNSUPPORTED_MEDIA_TYPE: 'The body is not `Content-Type: application/json` in UTF-8',
  IDEMPOTENCY_KEY_REUSED: 'The `Idempotency-Key` was used before with another method, path or body, or by another API key',
  TOO_MANY_ATTEMPTS: "The session's card or code attempts are used up (3 cards, 5 codes)",
  RATE_LIMITED: 'Too many requests, too many of yours in flight at once, or too many failed authentications from your address; wait `Retry-After` seconds',
  HEADERS_TOO_LARGE: 'The request headers are larger than the server accepts',
  INTERNAL_ERROR: 'Our fault; retrying with the same `Idempotency-Key` is always safe',
  RAIL_UNAVAILABLE: 'Live mode has no bank gateway configured',
  SERVICE_UNAVAILABLE: 'The database is briefly unreachable, or the service is answering as many requests as it can; retry after `Retry-After` seconds',
};

/** Every `failureCode` a payment intent, order, card binding, checkout session, refund or payout can carry. */
export const FAILURE_CODES: Readonly<Record<string, { on: string; meaning: string }>> = {
  INSUFFICIENT_FUNDS: {
    on: 'payment intents, orders, order sessions (402 `PAYMENT_FAILED`)',
    meaning: 'The card lacks the money. Ask the buyer for another card',
  },
  CARD_BLOCKED: {
    on: 'payment intents, orders, order sessions',
    meaning: 'The bank blocked the card; a saved card becomes `BLOCKED`, and later charges to it answer 400 `CARD_INACTIVE`',
  },
  PROCESSING_ERROR: {
    on: 'payment intents, orders, refunds, payouts',
    meaning: 'The bank could not execute it, or reconciliation found that a `PROCESSING` payment (or an `IN_TRANSIT` payout) never reached it. No money moved; a failed refund may be made again, a failed payout\'s amount is back in the available balance',
  },
  ACCOUNT_CLOSED: {
    on: 'payouts',
    meaning: "The receiving bank refused the payout account (closed, or not the holder's). The amount is back in the available balance; an owner checks the account in the dashboard, and the next automatic payout pays it out",
  },
  INVALID_CODE: {
    on: 'receipts',
    meaning: 'The fiscal module refused a line: its IKPU or package code is not one the tax authority knows. Correct the code for later sales',
  },
  SALE_NOT_FISCALIZED: {
    on: 'return receipts',
    meaning: 'Its sale receipt failed, so there is no registered sale to return; register both by other means',
  },
  FISCAL_UNAVAILABLE: {
    on: 'receipts',
    meaning: 'The fiscal module could not be reached for the whole retry schedule, and will never register the receipt: register it by other means',
  },
  FISCAL_UNSETTLED: {
    on: 'receipts',
    meaning: 'The fiscal module could not be reached even to settle the receipt: it may hold it. Do not register it elsewhere before Tolov\'s operator has asked the module',
  },
  TOO_MANY_ATTEMPTS: {
    on: 'orders, card bindings, checkout sessions',
    meaning: 'The buyer used up the 3 card or 5 code attempts of the hosted page; no payment was made',
  },
};

export interface OperationNotes {
  /** The success answer, as its response's description. */
  returns: string;
  /** The error codes of the operation's own logic. */
  errors?: readonly ErrorCode[];
  /** A write that takes no Idempotency-Key: what a repeat of it does. */
  repeat?: string;
}

const ONE_ATTEMPT = 'Takes no Idempotency-Key: each call is an attempt, counted against the session';
const HELPER_REPEAT = 'Takes no Idempotency-Key: a repeat answers 409 `INVALID_STATE` once the object is no longer `PENDING`';
const TEST_HELPER_ERRORS = ['NOT_FOUND', 'INVALID_STATE', 'INVALID_CARD', 'CARD_INACTIVE'] as const;
const CAPTURE_ERRORS = ['NOT_FOUND', 'SESSION_EXPIRED', 'INVALID_STATE', 'TOO_MANY_ATTEMPTS', 'RATE_LIMITED', 'PRODUCT_SUSPENDED'] as const;
const PAGE = 'newest first; `has_more` says whether another page follows (pass the last id as `starting_after`)';

/** The merchant's operations, in the order the reference shows them. */
export const MERCHANT_OPERATIONS: Readonly<Record<string, OperationNotes>> = {
  createOrder: { returns: 'The new order: `PENDING`, with the `paymentUrl` to send the buyer to and its `expiresAt`', errors: ['RECEIPT_MISMATCH', 'RECEIPT_REQUIRED', 'SCOPE_REQUIRED', 'PRODUCT_SUSPENDED'] },
  retrieveOrder: { returns: 'The order; `paidAt` and `paymentIntent` once `PAID`, `failureCode` once `FAILED`', errors: ['NOT_FOUND'] },
  cancelOrder: { returns: 'The order, now `CANCELED`', errors: ['NOT_FOUND', 'ORDER_DEBIT_IN_PROGRESS', 'ORDER_NOT_CANCELABLE'] },
  listOrders: { returns: `A page of orders, ${PAGE}` },
  createPaymentLink: {
    returns: 'The new payment link, with the `url` to share and its QR code at `qrSvgUrl`',
    errors: ['RECEIPT_MISMATCH', 'RECEIPT_REQUIRED', 'PRODUCT_SUSPENDED'],
  },
  retrievePaymentLink: { returns: 'The payment link', errors: ['NOT_FOUND'] },
  updatePaymentLink: { returns: 'The payment link as changed', errors: ['NOT_FOUND'] },
  listPaymentLinks: { returns: `A page of payment links, ${PAGE}` },
  retrieveBalance: { returns: 'The balance in tiyin, summed from the ledger' },
  listBalanceTransactions: { returns: `A page of the statement, ${PAGE}` },
  retrieveBalanceTransaction: { returns: 'The movement of the balance', errors: ['NOT_FOUND'] },
  retrievePayoutAccount: { returns: 'The payout account, its number masked', errors: ['NOT_FOUND'] },
  createPayout: {
    returns: 'The payout, `PENDING`: its amount has left the available balance, and it is sent to the bank within about 10 seconds (`payout.paid` or `payout.failed` follows)',
    errors: ['INSUFFICIENT_BALANCE', 'PAYOUTS_HELD', 'PAYOUT_ACCOUNT_REQUIRED', 'PRODUCT_SUSPENDED'],
  },
  retrievePayout: { returns: 'The payout; `failureCode` once `FAILED`', errors: ['NOT_FOUND'] },
  listPayouts: { returns: `A page of payouts, automatic and manual, ${PAGE}` },
  cancelPayout: { returns: 'The payout, now `CANCELED`, its amount back in the available balance', errors: ['NOT_FOUND', 'PAYOUT_NOT_CANCELABLE'] },
  createCardBinding: {
    returns: "The new card binding: `PENDING`, with the hosted page's `url` and the `clientToken` of the public session calls",
    errors: ['RAIL_UNAVAILABLE', 'PRODUCT_SUSPENDED'],
  },
  retrieveCardBinding: { returns: "The card binding; once `COMPLETED`, `card` is the saved card's id", errors: ['NOT_FOUND'] },
  retrieveCard: { returns: 'The saved card', errors: ['NOT_FOUND'] },
  deleteCard: { returns: 'The card, now `DELETED`', errors: ['NOT_FOUND'], repeat: 'Deleting a deleted card answers it again, `DELETED`' },
  listCards: { returns: `A page of saved cards, ${PAGE}` },
  createCharge: {
    returns:
      "The payment intent: `SUCCEEDED`; `FAILED` with its `failureCode` (the bank's refusal is an answer, not an error); or `PROCESSING` when the bank's answer was unclear, until reconciliation settles it (do not charge again meanwhile)",
    errors: ['NOT_FOUND', 'CARD_INACTIVE', 'RAIL_UNAVAILABLE', 'RECEIPT_MISMATCH', 'RECEIPT_REQUIRED', 'PRODUCT_SUSPENDED'],
  },
  retrieveCharge: { returns: 'The payment intent', errors: ['NOT_FOUND'] },
  captureCharge: {
    returns:
      "The payment intent: `SUCCEEDED` with the amount captured, or `PROCESSING` when the bank's answer was unclear, until reconciliation settles it. A capture the bank refused answers 402 `PAYMENT_FAILED` with its `failureCode`: the payment is `REQUIRES_CAPTURE` again when the bank still holds the money, `CANCELED` (`HOLD_NOT_ACTIVE`) when it no longer does",
    errors: ['NOT_FOUND', 'INVALID_STATE', 'VALIDATION_ERROR', 'PAYMENT_FAILED', 'RECEIPT_MISMATCH', 'RECEIPT_REQUIRED', 'RAIL_UNAVAILABLE', 'PRODUCT_SUSPENDED'],
  },
  cancelCharge: {
    returns:
      "The payment intent: `CANCELED` once the bank released the hold (or no longer held it), or `PROCESSING` when its answer was unclear, until reconciliation settles it. A release the bank refused answers 402 `PAYMENT_FAILED` with its `failureCode`; the payment is `REQUIRES_CAPTURE` again",
    errors: ['NOT_FOUND', 'INVALID_STATE', 'PAYMENT_FAILED', 'RAIL_UNAVAILABLE'],
  },
  listCharges: { returns: `A page of payment intents, ${PAGE}` },
  createPaymentIntent: { returns: 'The payment intent, `REQUIRES_PAYMENT`: no money moves until it is confirmed', errors: ['NOT_FOUND', 'RECEIPT_MISMATCH', 'RECEIPT_REQUIRED', 'PRODUCT_SUSPENDED'] },
  confirmPaymentIntent: {
    returns: 'The payment intent after the debit, as the charge call answers it: `SUCCEEDED`, `FAILED` with `failureCode`, or `PROCESSING`',
    errors: ['NOT_FOUND', 'INVALID_STATE', 'CARD_INACTIVE', 'RAIL_UNAVAILABLE', 'PRODUCT_SUSPENDED'],
  },
  cancelPaymentIntent: { returns: 'The payment intent, now `CANCELED`', errors: ['NOT_FOUND', 'INVALID_STATE'] },
  retrievePaymentIntent: { returns: 'The payment intent', errors: ['NOT_FOUND'] },
  createRefund: {
    returns: "The refund: `SUCCEEDED`, or `PENDING` when the bank's answer was unclear, until reconciliation settles it",
    errors: ['NOT_FOUND', 'PARTIAL_REFUND_NOT_SUPPORTED', 'ALREADY_REFUNDED', 'PAYMENT_NOT_REFUNDABLE', 'RAIL_UNAVAILABLE'],
  },
  retrieveRefund: { returns: 'The refund', errors: ['NOT_FOUND'] },
  listRefunds: { returns: `A page of refunds, ${PAGE}` },
  retrieveReceipt: { returns: 'The receipt; its fiscal fields once `FISCALIZED`', errors: ['NOT_FOUND'] },
  listReceipts: { returns: `A page of fiscal receipts, sale and return, ${PAGE}` },
  retrieveCheckoutSession: { returns: "The session's state; nothing sensitive", errors: ['NOT_FOUND', 'SESSION_EXPIRED', 'RATE_LIMITED'] },
  submitCheckoutCard: {
    returns: "The session, `AWAITING_CODE`, with the card's `maskedPan`: the bank sent a code by SMS",
    errors: [...CAPTURE_ERRORS, 'INVALID_CARD', 'CARD_INACTIVE', 'RAIL_UNAVAILABLE'],
    repeat: `${ONE_ATTEMPT} (at most 3 cards)`,
  },
  submitCheckoutCode: {
    returns: "The session: `COMPLETED` with `returnUrl` (the card is saved, or the order paid), or `PROCESSING` while the bank's answer to an order's payment is unclear",
    errors: [...CAPTURE_ERRORS, 'WRONG_CODE', 'PAYMENT_FAILED'],
    repeat: `${ONE_ATTEMPT} (at most 5 codes); a correct code never debits twice`,
  },
  resendCheckoutCode: {
    returns: 'The session, `AWAITING_CODE`, with `resendAvailableAt`: a new code was sent',
    errors: CAPTURE_ERRORS,
    repeat: 'Takes no Idempotency-Key: codes are sent at least 30 seconds apart (429 `RATE_LIMITED` with `Retry-After` before that)',
  },
  createWebhookEndpoint: { returns: 'The new endpoint, `enabled`, with its signing `secret` (`whsec_…`), shown in this answer only', errors: ['LIMIT_REACHED'] },
  listWebhookEndpoints: { returns: `A page of webhook endpoints, ${PAGE}` },
  retrieveWebhookEndpoint: { returns: 'The endpoint, without its secret', errors: ['NOT_FOUND'] },
  updateWebhookEndpoint: { returns: 'The endpoint as changed', errors: ['NOT_FOUND'] },
  deleteWebhookEndpoint: { returns: "The endpoint's id with `deleted: true`", errors: ['NOT_FOUND'], repeat: 'Deleting it again answers 404 `NOT_FOUND`' },
  rollWebhookEndpointSecret: { returns: 'The endpoint with its new `secret`, shown in this answer only', errors: ['NOT_FOUND'] },
  listWebhookDeliveries: { returns: `A page of the endpoint's deliveries with their attempts, ${PAGE}`, errors: ['NOT_FOUND'] },
  listEvents: { returns: `A page of the events of the last 30 days, ${PAGE}` },
  retrieveEvent: { returns: 'The event', errors: ['NOT_FOUND'] },
  resendEvent: { returns: 'The new delivery, due now', errors: ['NOT_FOUND', 'INVALID_STATE', 'LIMIT_REACHED', 'RATE_LIMITED'] },
  streamEvents: { returns: 'A `text/event-stream`: per event, `id` (the event id), `event` (its type) and `data` (the Event as JSON)', errors: ['RATE_LIMITED'] },
  listRequestLogs: { returns: "A page of the product's latest API calls in the key's mode, newest first" },
  expireTestHold: { returns: 'The payment intent, `CANCELED` once the test bank released the hold', errors: ['NOT_FOUND', 'INVALID_STATE'], repeat: 'Takes no Idempotency-Key: a repeat answers 409 `INVALID_STATE` once the payment is no longer `REQUIRES_CAPTURE`' },
  expireTestOrder: { returns: 'The order, now `EXPIRED`', errors: ['NOT_FOUND', 'INVALID_STATE', 'ORDER_DEBIT_IN_PROGRESS'], repeat: HELPER_REPEAT },
  payTestOrder: {
    returns: "The order after the buyer's attempt: `PAID`, `FAILED` with `failureCode`, or still `PENDING` while its payment is `PROCESSING`",
    errors: TEST_HELPER_ERRORS,
    repeat: HELPER_REPEAT,
  },
  releaseTestPayoutHold: {
    returns: 'The payout account, `payoutsHeldUntil` null',
    errors: ['NOT_FOUND'],
    repeat: 'Releasing it again changes nothing',
  },
  runTestPayouts: {
    returns: 'The automatic payout, as the bank left it: `PAID`, `FAILED` with `failureCode` (an account ending 0002), or `IN_TRANSIT` (one ending 0003)',
    errors: ['INSUFFICIENT_BALANCE', 'PAYOUTS_HELD', 'PAYOUT_ACCOUNT_REQUIRED', 'PRODUCT_SUSPENDED'],
    repeat: 'Each call makes another automatic payout, of what is available and not yet paid out; with too little left, 409 `INSUFFICIENT_BALANCE`',
  },
  settleTestBalance: { returns: 'The balance, its `pending` now `available`', repeat: 'Settling again settles only what has been paid since' },
  completeTestCardBinding: { returns: 'The card binding, `COMPLETED`, with the saved `card`', errors: TEST_HELPER_ERRORS, repeat: HELPER_REPEAT },
};

/** The operator's operations (TOLOV_ADMIN_TOKEN), described at /admin/v1/openapi.json only. */
const OPERATOR_OPERATIONS: Readonly<Record<string, OperationNotes>> = {
  createProduct: { returns: 'The product with its test and live secret keys, shown in this answer only', repeat: 'Each call makes another product' },
  createApiKey: {
    returns: 'The new key with its `secret`, shown in this answer only',
    errors: ['NOT_FOUND', 'INVALID_STATE'],
    repeat: 'Each call makes another key',
  },
  listApiKeys: { returns: "The product's keys, newest first, without their secrets", errors: ['NOT_FOUND'] },
  updateProduct: { returns: 'The product as changed', errors: ['NOT_FOUND'], repeat: 'Setting the same value again changes nothing' },
  listActivations: { returns: `A page of activation requests, newest submission first; \`has_more\` says whether another page follows (pass the last \`product\` as \`starting_after\`)` },
  retrieveActivation: { returns: "The product's activation request", errors: ['NOT_FOUND'] },
  approveActivation: {
    returns: 'The request, `approved`: live mode is on, and the live payout account is the one it names (`payout_account.updated` in live mode)',
    errors: ['NOT_FOUND', 'INVALID_STATE'],
    repeat: 'Approving it again answers 409 `INVALID_STATE`: it is decided already',
  },
  rejectActivation: {
    returns: 'The request, `rejected`, with the reason the merchant reads in the dashboard; they may correct it and submit again',
    errors: ['NOT_FOUND', 'INVALID_STATE'],
    repeat: 'Rejecting it again answers 409 `INVALID_STATE`: it is decided already',
  },
  retrieveProduct: { returns: 'Where the product stands: live mode, fiscal lines, fee, `suspension`', errors: ['NOT_FOUND'] },
  suspendProduct: {
    returns: 'The product, with its `suspension`: its money calls are refused from now on, on every process',
    errors: ['NOT_FOUND'],
    repeat: 'Suspending it again keeps the time of the first suspension and takes the new reason',
  },
  resumeProduct: { returns: 'The product, `suspension` null: everything works again', errors: ['NOT_FOUND'], repeat: 'Resuming a product that is not suspended changes nothing' },
  enableLiveMode: { returns: 'The product, `liveEnabled`', errors: ['NOT_FOUND'], repeat: 'Enabling it again changes nothing' },
  revokeApiKey: { returns: 'The key, `revoked`', errors: ['NOT_FOUND'], repeat: 'Revoking it again answers the key, revoked at the first time' },
  getBranding: { returns: "The product's branding", errors: ['NOT_FOUND'] },
  updateBranding: { returns: 'The branding as changed', errors: ['NOT_FOUND'], repeat: 'Setting the same values again changes nothing' },
  retrieveReconciliationReport: {
    returns: "The day's comparison: how many operations each side counts, and every mismatch; under `receipts`, the same for fiscalized receipts and the fiscal module's registrations",
    errors: ['RAIL_UNAVAILABLE'],
  },
  listMoneyChecks: { returns: 'Every money check, each `ok` or with the problems it found (the first 100)' },
  retrieveTimings: { returns: "This process's timings since it started counting" },
  resetTimings: { returns: 'The timings, empty: counting starts afresh', repeat: 'Each call starts counting afresh' },
  createOperator: {
    returns: 'The first operator of the console, who sets up the second factor at the first log-in',
    errors: ['INVALID_STATE'],
    repeat: 'Once an operator exists, answers 409 `INVALID_STATE`: an admin invites the next from the console',
  },
  listOperators: { returns: 'Every operator, oldest first, with their role and whether their second factor is set up' },
  listOperatorAudit: { returns: 'A page of the audit log, newest first; `has_more` says whether another page follows (pass the last `id` as `before`)' },
  listProducts: { returns: 'A page of products, newest first; `has_more` says whether another page follows (pass the last `id` as `starting_after`)' },
  searchPayments: { returns: 'The objects found: one for an id (none when nothing has it), or the newest 50 payments of the card, amount and day' },
};

export const OPERATION_NOTES: Readonly<Record<string, OperationNotes>> = { ...MERCHANT_OPERATIONS, ...OPERATOR_OPERATIONS };
