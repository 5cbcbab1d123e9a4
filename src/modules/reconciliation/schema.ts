import { Type, type Static } from '@sinclair/typebox';
import { OPERATION_TYPES } from '../../rails/rail.js';

const Side = Type.Union([Type.Object({ status: Type.String(), amount: Type.Integer() }), Type.Null()]);

export const Mismatch = Type.Object(
  {
    operationId: Type.String(),
    type: Type.Union(OPERATION_TYPES.map((type) => Type.Literal(type)), {
      description: "transfer: a payout to a merchant's bank account; hold, capture, release: a two-step payment's hold and its end",
    }),
    problem: Type.Union([Type.Literal('missing_at_bank'), Type.Literal('missing_at_tolov'), Type.Literal('amount_differs')], {
      description: 'missing_at_bank: Tolov counts money the bank never moved; missing_at_tolov: the bank moved money Tolov does not count as moved',
    }),
    tolov: Side,
    bank: Side,
  },
  { title: 'ReconciliationMismatch' },
);
export type Mismatch = Static<typeof Mismatch>;
export type MismatchProblem = Mismatch['problem'];

const ReceiptType = Type.Union([Type.Literal('sale'), Type.Literal('return')]);
const ReceiptSide = Type.Union([Type.Object({ type: ReceiptType, amount: Type.Integer() }), Type.Null()]);

export const ReceiptMismatch = Type.Object(
  {
    receiptId: Type.String(),
    problem: Type.Union([Type.Literal('missing_at_fiscal'), Type.Literal('missing_at_tolov'), Type.Literal('amount_differs'), Type.Literal('type_differs')], {
      description:
        'missing_at_fiscal: Tolov shows the buyer a receipt FISCALIZED that the fiscal module never registered; missing_at_tolov: the module registered a receipt that Tolov does not count as FISCALIZED',
    }),
    tolov: ReceiptSide,
    fiscal: ReceiptSide,
  },
  { title: 'ReconciliationReceiptMismatch' },
);
export type ReceiptMismatch = Static<typeof ReceiptMismatch>;
export type ReceiptProblem = ReceiptMismatch['problem'];

export const ReceiptsReconciliation = Type.Object(
  {
    compared: Type.Object({ tolov: Type.Integer(), fiscal: Type.Integer() }),
    truncated: Type.Boolean({ description: 'More receipts than a report compares were registered that day' }),
    mismatches: Type.Array(ReceiptMismatch),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the receipts could not be compared (the fiscal module did not answer); null when they were' }),
  },
  { title: 'ReconciliationReceipts' },
);
export type ReceiptsReconciliation = Static<typeof ReceiptsReconciliation>;

export const ReconciliationReport = Type.Object(
  {
    object: Type.Literal('reconciliation_report'),
    date: Type.String(),
    mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
    compared: Type.Object({ tolov: Type.Integer(), bank: Type.Integer() }),
    truncated: Type.Boolean({ description: 'More mismatches were found than a report lists (1,000): the rest are not listed' }),
    mismatches: Type.Array(Mismatch),
    receipts: Type.Union([ReceiptsReconciliation, Type.Null()], {
      description: "The day's FISCALIZED receipts against the fiscal module's registrations, by receipt id; null when the mode has no fiscal module",
    }),
  },
  { title: 'ReconciliationReport' },
);
export type ReconciliationReport = Static<typeof ReconciliationReport>;
