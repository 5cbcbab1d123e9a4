import { Type, type Static } from '@sinclair/typebox';
import { Amount, Description, Timestamp } from '../../core/schemas.js';
import { listQuery, type ListQuery } from '../../core/pagination.js';

export const REFUND_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

export const CreateRefundBody = Type.Object(
  {
    paymentIntent: Type.String({ minLength: 1, maxLength: 64, description: 'The payment to refund (pi_…)' }),
    amount: Type.Optional(Type.Integer({ ...Amount, description: "If given, must equal the payment's amount: only full refunds" })),
    reason: Type.Optional(Description),
  },
  { title: 'CreateRefundBody', additionalProperties: false },
);
export type CreateRefundBody = Static<typeof CreateRefundBody>;

export const Refund = Type.Object({
  id: Type.String(),
  object: Type.Literal('refund'),
  amount: Type.Integer(),
  currency: Type.Literal('UZS'),
  paymentIntent: Type.String(),
  status: Type.Union(REFUND_STATUSES.map((status) => Type.Literal(status))),
  failureCode: Type.Union([Type.String(), Type.Null()]),
  reason: Type.Union([Type.String(), Type.Null()]),
  receipt: Type.Union([Type.String(), Type.Null()], { description: 'Its return receipt (rcpt_…) once SUCCEEDED, when the payment had a sale receipt; null otherwise' }),
  livemode: Type.Boolean(),
  created: Timestamp,
}, { title: 'Refund' });
export type Refund = Static<typeof Refund>;

export const RefundsQuery = listQuery({
  paymentIntent: Type.Optional(Type.String({ maxLength: 64, description: 'Refunds of this payment (pi_…)' })),
  status: Type.Optional(Type.Union(REFUND_STATUSES.map((status) => Type.Literal(status)))),
});
export type RefundsQuery = ListQuery & Static<typeof RefundsQuery>;
