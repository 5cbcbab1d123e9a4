import { Type, type Static } from '@sinclair/typebox';
import { Amount, Timestamp } from '../../core/schemas.js';
import { listQuery, type ListQuery } from '../../core/pagination.js';

export const PayoutAccountInput = Type.Object(
  {
    bankMfo: Type.String({ pattern: '^[0-9]{5}$', description: "the bank's MFO code: 5 digits" }),
    accountNumber: Type.String({ pattern: '^[0-9]{20}$', description: 'the account number: 20 digits' }),
    tin: Type.String({ pattern: '^[0-9]{9}$', description: "the account holder's TIN (STIR): 9 digits" }),
    holderName: Type.String({ minLength: 1, maxLength: 200, description: 'The account holder as the bank knows it' }),
  },
  { title: 'PayoutAccountInput', additionalProperties: false },
);
export type PayoutAccountInput = Static<typeof PayoutAccountInput>;

export const PayoutAccount = Type.Object(
  {
    id: Type.String({ description: "The product's payout account in this mode (pacct_…): the same id whatever it is changed to" }),
    object: Type.Literal('payout_account'),
    bankMfo: Type.String(),
    accountLast4: Type.String({ description: 'The last four digits of the account: the number is never shown again after it is set' }),
    tin: Type.String(),
    holderName: Type.String(),
    payoutsHeldUntil: Type.Union([Timestamp, Type.Null()], {
      description: 'After a change of the account, payouts wait until then (24 hours), so that its owners notice a change they did not make',
    }),
    livemode: Type.Boolean(),
    updated: Timestamp,
    created: Timestamp,
  },
  { title: 'PayoutAccount' },
);
export type PayoutAccount = Static<typeof PayoutAccount>;

export const PAYOUT_STATUSES = ['PENDING', 'IN_TRANSIT', 'PAID', 'FAILED', 'CANCELED'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

export const Payout = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('payout'),
    amount: Type.Integer({ description: 'Tiyin sent to the payout account' }),
    status: Type.Union(PAYOUT_STATUSES.map((status) => Type.Literal(status)), {
      description:
        'PENDING: taken from the available balance, not sent yet (it can be canceled); IN_TRANSIT: sent to the bank; PAID: the bank credited the account; FAILED: the bank refused it, and the amount is back in the available balance; CANCELED: canceled while PENDING, the amount back',
    }),
    automatic: Type.Boolean({ description: 'Made by the daily schedule (true) or asked for (false)' }),
    arrivalDate: Type.String({ description: 'The Tashkent day the money is expected on the account, YYYY-MM-DD' }),
    destination: Type.Object({ bankMfo: Type.String(), accountLast4: Type.String() }, { description: 'The account it was made for, whatever the account is changed to later' }),
    failureCode: Type.Union([Type.String(), Type.Null()], { description: 'Why a FAILED payout failed: ACCOUNT_CLOSED, PROCESSING_ERROR' }),
    livemode: Type.Boolean(),
    created: Timestamp,
  },
  { title: 'Payout' },
);
export type Payout = Static<typeof Payout>;

export const CreatePayoutBody = Type.Object(
  { amount: Type.Optional(Type.Integer({ ...Amount, description: 'Tiyin to pay out, at most the available balance; the whole available balance when absent' })) },
  { title: 'CreatePayoutBody', additionalProperties: false },
);
export type CreatePayoutBody = Static<typeof CreatePayoutBody>;

export const PayoutsQuery = listQuery({
  status: Type.Optional(Type.Union(PAYOUT_STATUSES.map((status) => Type.Literal(status)), { description: 'Payouts in this status' })),
});
export type PayoutsQuery = ListQuery & Static<typeof PayoutsQuery>;
