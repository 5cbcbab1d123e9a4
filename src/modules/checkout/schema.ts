import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from '../../core/schemas.js';
import { SESSION_STATUSES } from '../../core/session-statuses.js';
import { RECEIPT_STATUSES } from '../receipts/schema.js';

export const TokenParams = Type.Object({ token: Type.String({ maxLength: 128 }) });
export type TokenParams = Static<typeof TokenParams>;

export const CardSubmission = Type.Object(
  {
    pan: Type.String({ maxLength: 32, description: 'The card number, 16 digits' }),
    expiry: Type.String({ maxLength: 8, description: 'MMYY, MM/YY or YYMM' }),
    phone: Type.String({ maxLength: 20, description: 'Digits with the country code, e.g. 998901234567' }),
    saveCard: Type.Optional(
      Type.Boolean({ description: "Order payments only: keep the card for the order's customerRef once the payment succeeds" }),
    ),
  },
  { title: 'CardSubmission', additionalProperties: false },
);
export type CardSubmission = Static<typeof CardSubmission>;

export const CodeSubmission = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 12, description: 'The code sent by SMS' }) },
  { title: 'CodeSubmission', additionalProperties: false },
);
export type CodeSubmission = Static<typeof CodeSubmission>;

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });

/** A paid order's sale receipt as its buyer sees it: the lines and the fiscal registration, nothing about the card. */
export const SessionReceipt = Type.Object(
  {
    status: Type.Union(RECEIPT_STATUSES.map((status) => Type.Literal(status)), {
      description: 'PENDING while it is registered with the tax authority; FISCALIZED once it is; FAILED when it could not be (the shop sends it)',
    }),
    items: Type.Array(
      Type.Object({
        title: Type.String(),
        count: Type.Integer(),
        price: Type.Integer({ description: 'Tiyin per unit' }),
        discount: Type.Integer({ description: 'Tiyin off the whole line' }),
        total: Type.Integer({ description: 'What the line costs: price × count − discount, in tiyin' }),
        vatPercent: Type.Integer(),
      }),
    ),
    shipping: nullable(Type.Object({ title: Type.String(), price: Type.Integer({ description: 'In tiyin' }), vatPercent: Type.Integer() })),
    amount: Type.Integer({ description: 'In tiyin' }),
    vatAmount: Type.Integer({ description: 'The VAT included in amount, in tiyin' }),
    terminalId: nullable(Type.String(), 'The fiscal module that registered it; null until FISCALIZED'),
    receiptNumber: nullable(Type.String()),
    fiscalSign: nullable(Type.String()),
    fiscalizedAt: nullable(Timestamp),
    qrUrl: nullable(Type.String(), "The tax authority's check of the receipt, which its QR code holds; null until FISCALIZED"),
    url: Type.String({ description: 'The printable receipt page: no login, no card number beyond the masked one' }),
  },
  { title: 'SessionReceipt' },
);
export type SessionReceipt = Static<typeof SessionReceipt>;

export const SessionState = Type.Object({
  object: Type.Literal('checkout_session'),
  kind: Type.Union([Type.Literal('card_binding'), Type.Literal('order')]),
  status: Type.Union(SESSION_STATUSES.map((status) => Type.Literal(status))),
  productName: Type.String(),
  livemode: Type.Boolean(),
  maskedPan: Type.Union([Type.String(), Type.Null()], { description: 'Null until a card was accepted' }),
  returnUrl: Type.Union([Type.String(), Type.Null()], { description: 'Null until the session is COMPLETED' }),
  expiresAt: Timestamp,
  failureCode: Type.Union([Type.String(), Type.Null()], {
    description:
      "Why a FAILED session failed: TOO_MANY_ATTEMPTS when the card or code attempts were used up; for an order whose payment the bank refused, the bank's reason (the order's failureCode, such as INSUFFICIENT_FUNDS); null otherwise",
  }),
  cardAttemptsLeft: Type.Integer(),
  codeAttemptsLeft: Type.Integer(),
  resendAvailableAt: Type.Union([Timestamp, Type.Null()], { description: 'When a new code may be requested; null when none can be' }),
  order: Type.Union(
    [
      Type.Object({
        amount: Type.Integer({ description: 'In tiyin' }),
        currency: Type.Literal('UZS'),
        description: Type.Union([Type.String(), Type.Null()]),
        status: Type.String({ description: 'PENDING, PAID, FAILED, EXPIRED or CANCELED' }),
        paidAt: Type.Union([Timestamp, Type.Null()], { description: 'When the order was paid; null until PAID' }),
        payment: Type.Union([Type.String(), Type.Null()], {
          description: 'The payment reference (the payment intent), once PAID: the buyer can quote it to the shop',
        }),
      }),
      Type.Null(),
    ],
    { description: 'What is being paid, for an order session; null for a card binding' },
  ),
  canSaveCard: Type.Boolean({ description: 'Whether the buyer may ask to keep the card (orders with a customerRef)' }),
  shopSuspended: Type.Boolean({ description: 'Tolov has suspended the shop: it cannot take payments or save cards now (its calls answer 403 PRODUCT_SUSPENDED)' }),
  receipt: nullable(SessionReceipt, "A COMPLETED order's sale receipt, when the order was paid with fiscal lines; null otherwise"),
}, { title: 'SessionState' });
export type SessionState = Static<typeof SessionState>;
