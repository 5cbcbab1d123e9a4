import { Type, type Static } from '@sinclair/typebox';

export const CheckProblem = Type.Object(
  {
    message: Type.String({ description: 'What is wrong, in a sentence' }),
    objectId: Type.Union([Type.String(), Type.Null()], { description: 'The object it is about (pi_…, po_…, rcpt_…, we_…, ltx_…), when there is one' }),
    productId: Type.Union([Type.String(), Type.Null()]),
    livemode: Type.Union([Type.Boolean(), Type.Null()]),
  },
  { title: 'CheckProblem' },
);
export type CheckProblem = Static<typeof CheckProblem>;

export const Check = Type.Object(
  {
    object: Type.Literal('check'),
    name: Type.String(),
    description: Type.String({ description: 'What the check holds to be true' }),
    ok: Type.Boolean(),
    problems: Type.Array(CheckProblem, { description: 'Empty when ok; at most 100, the first found' }),
    truncated: Type.Boolean({ description: 'More problems were found than are listed' }),
  },
  { title: 'Check' },
);
export type Check = Static<typeof Check>;

export const CheckList = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(Check), has_more: Type.Literal(false, { description: 'Every check is in this one page' }) },
  { title: 'CheckList' },
);
export type CheckList = Static<typeof CheckList>;
