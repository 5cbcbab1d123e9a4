import { Type, type Static } from '@sinclair/typebox';
import { HttpUrl, Timestamp } from '../../core/schemas.js';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from '../../core/pagination.js';

/** What the business does, as the operator's review and the card networks' rules sort it. */
export const BUSINESS_CATEGORIES = ['retail', 'food_and_drink', 'services', 'education', 'health', 'travel_and_transport', 'digital_goods', 'other'] as const;
export type BusinessCategory = (typeof BUSINESS_CATEGORIES)[number];

export const ACTIVATION_STATUSES = ['not_submitted', 'submitted', 'approved', 'rejected'] as const;
export type ActivationStatus = (typeof ACTIVATION_STATUSES)[number];

/** What the merchant's owner submits: the business, and the account its live payouts go to. */
export const ActivationInput = Type.Object(
  {
    legalName: Type.String({ minLength: 1, maxLength: 200, description: 'The business as registered' }),
    tin: Type.String({ pattern: '^[0-9]{9}$', description: "The business's TIN (STIR): 9 digits" }),
    legalAddress: Type.String({ minLength: 1, maxLength: 500 }),
    website: Type.String({ ...HttpUrl, description: 'The website or shop link where it sells: a Telegram or Instagram link counts' }),
    category: Type.Union(BUSINESS_CATEGORIES.map((category) => Type.Literal(category))),
    bankMfo: Type.String({ pattern: '^[0-9]{5}$' }),
    accountNumber: Type.String({ pattern: '^[0-9]{20}$' }),
    holderTin: Type.String({ pattern: '^[0-9]{9}$' }),
    holderName: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { title: 'ActivationInput', additionalProperties: false },
);
export type ActivationInput = Static<typeof ActivationInput>;

export const Activation = Type.Object(
  {
    object: Type.Literal('activation'),
    product: Type.String(),
    productName: Type.String(),
    status: Type.Union(ACTIVATION_STATUSES.map((status) => Type.Literal(status))),
    legalName: Type.String(),
    tin: Type.String(),
    legalAddress: Type.String(),
    website: Type.String(),
    category: Type.String(),
    payoutAccount: Type.Object({ bankMfo: Type.String(), accountLast4: Type.String(), tin: Type.String(), holderName: Type.String() }),
    rejectionReason: Type.Union([Type.String(), Type.Null()], { description: "The operator's reason, once rejected" }),
    submitted: Timestamp,
    decided: Type.Union([Timestamp, Type.Null()]),
  },
  { title: 'Activation' },
);
export type Activation = Static<typeof Activation>;

export const ActivationsQuery = Type.Object(
  {
    status: Type.Optional(Type.Union(['submitted', 'approved', 'rejected'].map((status) => Type.Literal(status)), { description: 'Requests in this status' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT, description: 'Page size, 1 to 100; 10 if absent' })),
    starting_after: Type.Optional(Type.String({ maxLength: 64, description: 'The product id of the last request of the previous page' })),
  },
  { additionalProperties: false },
);
export type ActivationsQuery = Static<typeof ActivationsQuery> & { limit: number };

/** The longest reason a rejection gives the merchant: the API's limit, and the database's. */
export const REJECTION_REASON_MAX = 500;

export const RejectBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: REJECTION_REASON_MAX, description: 'What the merchant must correct, as they will read it' }) },
  { title: 'RejectActivationBody', additionalProperties: false },
);
export type RejectBody = Static<typeof RejectBody>;
