import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from '../../core/schemas.js';

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
