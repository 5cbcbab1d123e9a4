import { Type, type Static } from '@sinclair/typebox';

const Side = Type.Union([Type.Object({ status: Type.String(), amount: Type.Integer() }), Type.Null()]);

export const Mismatch = Type.Object(
  {
    operationId: Type.String(),
    type: Type.Union([Type.Literal('debit'), Type.Literal('refund')]),
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

export const ReconciliationReport = Type.Object(
  {
    object: Type.Literal('reconciliation_report'),
    date: Type.String(),
    mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
    compared: Type.Object({ tolov: Type.Integer(), bank: Type.Integer() }),
    truncated: Type.Boolean({ description: 'More operations than a report compares happened that day' }),
    mismatches: Type.Array(Mismatch),
  },
  { title: 'ReconciliationReport' },
);
export type ReconciliationReport = Static<typeof ReconciliationReport>;
