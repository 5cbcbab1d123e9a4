import { Type, type Static } from '@sinclair/typebox';
import { Amount, AMOUNT_MAX, CaptureMethod, Description, Timestamp } from '../../core/schemas.js';
import { listQuery, type ListQuery } from '../../core/pagination.js';
import { ReceiptRequest } from '../receipts/schema.js';

export const INTENT_STATUSES = ['REQUIRES_PAYMENT', 'PROCESSING', 'REQUIRES_CAPTURE', 'SUCCEEDED', 'FAILED', 'CANCELED'] as const;
export type IntentStatus = (typeof INTENT_STATUSES)[number];

export const Metadata = Type.Object(
  {},
  { title: 'Metadata',
    additionalProperties: Type.String({ maxLength: 500 }),
    propertyNames: { minLength: 1, maxLength: 40 },
    maxProperties: 50,
    description: 'Your own key/value pairs: at most 50 keys of 1 to 40 characters, string values of at most 500',
  },
);
export type Metadata = Record<string, string>;

export const CardId = Type.String({ minLength: 1, maxLength: 64, description: 'A saved card id (card_…)' });

export const CreateChargeBody = Type.Object(
  {
    amount: Amount,
    card: CardId,
    description: Type.Optional(Description),
    metadata: Type.Optional(Metadata),
    receipt: Type.Optional(ReceiptRequest),
    capture: Type.Optional(CaptureMethod),
  },
  { title: 'CreateChargeBody', additionalProperties: false },
);
export type CreateChargeBody = Static<typeof CreateChargeBody> & { metadata?: Metadata };

export const PaymentIntent = Type.Object({
  id: Type.String(),
  object: Type.Literal('payment_intent'),
  amount: Type.Integer({ description: 'In tiyin; once a hold is captured, the amount captured' }),
  fee: Type.Integer({ description: "Tolov's fee in tiyin, rounded half up from the product's basis points" }),
  currency: Type.Literal('UZS'),
  status: Type.Union(INTENT_STATUSES.map((status) => Type.Literal(status))),
  failureCode: Type.Union([Type.String(), Type.Null()], { description: 'Why it FAILED: INSUFFICIENT_FUNDS, CARD_BLOCKED, PROCESSING_ERROR' }),
  rail: Type.Union([Type.Literal('uzcard'), Type.Literal('humo')], { description: "The card's network" }),
  card: Type.Union([Type.String(), Type.Null()], { description: 'The saved card charged; null for an order paid without saving the card' }),
  maskedPan: Type.String({ description: 'The card debited, saved or not: its first six and last four digits, as a card shows them' }),
  order: Type.Union([Type.String(), Type.Null()], { description: 'The order this payment paid, if any' }),
  description: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Record(Type.String(), Type.String()),
  amountRefunded: Type.Integer(),
  captureMethod: CaptureMethod,
  amountCapturable: Type.Integer({ description: 'What a capture may take: the held amount while REQUIRES_CAPTURE, 0 otherwise' }),
  receipt: Type.Union([Type.String(), Type.Null()], { description: 'Its sale receipt (rcpt_…) once SUCCEEDED with fiscal lines; null otherwise' }),
  livemode: Type.Boolean(),
  created: Timestamp,
}, { title: 'PaymentIntent' });
export type PaymentIntent = Static<typeof PaymentIntent>;

export const ChargesQuery = listQuery({
  status: Type.Optional(Type.Union(INTENT_STATUSES.map((status) => Type.Literal(status)))),
  card: Type.Optional(Type.String({ maxLength: 64, description: 'Charges to this saved card (card_…)' })),
  order: Type.Optional(Type.String({ maxLength: 64, description: "This order's payment (ord_…)" })),
  customerRef: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "Charges to the customer's saved cards" })),
});
export type ChargesQuery = ListQuery & Static<typeof ChargesQuery>;

export const CaptureBody = Type.Object(
  {
    amount: Type.Optional(Type.Integer({ minimum: 1, maximum: AMOUNT_MAX, description: 'In tiyin: at most the held amount (the default); the rest is released' })),
    // The sale receipt's fiscal lines for the amount captured: needed when it is less than the payment's own lines.
    receipt: Type.Optional(ReceiptRequest),
  },
  { title: 'CaptureBody', additionalProperties: false },
);
export type CaptureBody = Static<typeof CaptureBody>;
