import { Type, type Static } from '@sinclair/typebox';
import { Amount, CaptureMethod, CustomerRef, Description, HttpUrl, Timestamp } from '../../core/schemas.js';
import { listQuery, type ListQuery } from '../../core/pagination.js';
import { ReceiptRequest } from '../receipts/schema.js';

export const ORDER_STATUSES = ['PENDING', 'PAID', 'FAILED', 'EXPIRED', 'CANCELED'] as const;

export const CreateOrderBody = Type.Object(
  {
    amount: Amount,
    returnUrl: Type.Optional(HttpUrl),
    description: Type.Optional(Description),
    customerRef: Type.Optional(CustomerRef),
    receipt: Type.Optional(ReceiptRequest),
    capture: Type.Optional(CaptureMethod),
  },
  { title: 'CreateOrderBody', additionalProperties: false },
);
export type CreateOrderBody = Static<typeof CreateOrderBody>;

export const Order = Type.Object({
  id: Type.String(),
  object: Type.Literal('order'),
  amount: Type.Integer(),
  currency: Type.Literal('UZS'),
  status: Type.Union(ORDER_STATUSES.map((status) => Type.Literal(status))),
  description: Type.Union([Type.String(), Type.Null()]),
  customerRef: Type.Union([Type.String(), Type.Null()]),
  paymentUrl: Type.String({ description: 'The hosted page where the buyer pays' }),
  returnUrl: Type.Union([Type.String(), Type.Null()]),
  saveCard: Type.Boolean(),
  paymentIntent: Type.Union([Type.String(), Type.Null()], {
    description: 'Its payment once paid; with captureMethod `manual` it is `REQUIRES_CAPTURE` (the order PAID) until you capture or cancel it',
  }),
  captureMethod: CaptureMethod,
  savedCard: Type.Union([Type.String(), Type.Null()]),
  paidAt: Type.Union([Timestamp, Type.Null()]),
  failureCode: Type.Union([Type.String(), Type.Null()], {
    description: "Why a FAILED order failed: its payment's failureCode, or TOO_MANY_ATTEMPTS when the buyer used up the card or code attempts",
  }),
  expiresAt: Timestamp,
  receipt: Type.Union([Type.String(), Type.Null()], { description: "Its payment's sale receipt (rcpt_…) once PAID with fiscal lines; null otherwise" }),
  paymentLink: Type.Union([Type.String(), Type.Null()], { description: 'The payment link (plink_…) a buyer opened it through; null for an order made by the API' }),
  livemode: Type.Boolean(),
  created: Timestamp,
}, { title: 'Order' });
export type Order = Static<typeof Order>;

export const OrdersQuery = listQuery({
  status: Type.Optional(Type.Union(ORDER_STATUSES.map((status) => Type.Literal(status)))),
  customerRef: Type.Optional(CustomerRef),
  paymentLink: Type.Optional(Type.String({ pattern: '^plink_[0-9A-Za-z]{1,58}$', description: 'Orders opened through this payment link (plink_…)' })),
});
export type OrdersQuery = ListQuery & Static<typeof OrdersQuery>;
