import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from '../../core/schemas.js';
import { SESSION_STATUSES } from '../../core/session-statuses.js';

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
}, { title: 'SessionState' });
export type SessionState = Static<typeof SessionState>;
