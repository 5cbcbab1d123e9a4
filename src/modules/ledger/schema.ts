import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from '../../core/schemas.js';
import { listQuery, type ListQuery } from '../../core/pagination.js';

export const STATEMENT_TYPES = ['charge', 'refund', 'payout', 'payout_failure'] as const;

export const BalanceTransaction = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('balance_transaction'),
    type: Type.Union(STATEMENT_TYPES.map((type) => Type.Literal(type)), {
      description: 'charge: a succeeded payment; refund: a succeeded refund (negative); payout and payout_failure: money paid out, and returned',
    }),
    amount: Type.Integer({ description: 'In tiyin, signed: what it adds to the balance before its fee' }),
    fee: Type.Integer({ description: "Tolov's fee in tiyin; a refund's is 0 (the payment's fee is not returned)" }),
    net: Type.Integer({ description: 'amount − fee: what it adds to the balance' }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('available')], { description: 'Which part of the balance its net is in' }),
    availableOn: Timestamp,
    source: Type.String({ description: 'What moved the balance: the payment intent (pi_…), refund (re_…) or payout (po_…)' }),
    payout: Type.Union([Type.String(), Type.Null()], { description: "The automatic payout that paid it out (its rows sum to its amount), once one has; an automatic payout's own row stays null" }),
    created: Timestamp,
  },
  { title: 'BalanceTransaction' },
);
export type BalanceTransaction = Static<typeof BalanceTransaction>;

export const BalanceTransactionsQuery = listQuery({
  type: Type.Optional(Type.Union(STATEMENT_TYPES.map((type) => Type.Literal(type)))),
  payout: Type.Optional(Type.String({ maxLength: 64, description: 'The transactions a payout paid out (po_…)' })),
  source: Type.Optional(Type.String({ maxLength: 64, description: "The transactions of this payment, refund or payout" })),
});
export type BalanceTransactionsQuery = ListQuery & Static<typeof BalanceTransactionsQuery>;

export const Balance = Type.Object(
  {
    object: Type.Literal('balance'),
    available: Type.Integer({ description: 'Settled and not paid out, in tiyin; may be negative after refunds' }),
    pending: Type.Integer({ description: 'Succeeded payments net of fees, not yet settled, in tiyin' }),
    currency: Type.Literal('UZS'),
    livemode: Type.Boolean(),
  }, { title: 'Balance' },
);
