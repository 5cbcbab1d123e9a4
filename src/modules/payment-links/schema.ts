import { Type, type Static } from '@sinclair/typebox';
import { Amount, Description, Timestamp } from '../../core/schemas.js';
import { listQuery, type ListQuery } from '../../core/pagination.js';
import { ReceiptRequest } from '../receipts/schema.js';

/** The bounds of an amount the buyer chooses, in tiyin (10.00 to 1,000,000.00 so'm), and its defaults. */
export const CHOSEN_AMOUNT_MIN = 1_000;
export const CHOSEN_AMOUNT_MAX = 100_000_000;
/** The most orders a link may have PENDING or PAID at once. */
export const QUANTITY_MAX = 1_000_000;

const ChosenBound = (description: string) => Type.Integer({ minimum: CHOSEN_AMOUNT_MIN, maximum: CHOSEN_AMOUNT_MAX, description });
const LinkDescription = Type.String({ ...Description, minLength: 1, description: "What the buyer pays for: shown on the link's page and given to each order, 1 to 500 characters" });
const QuantityMax = Type.Integer({
  minimum: 1,
  maximum: QUANTITY_MAX,
  description: 'At most this many orders opened through the link PENDING or PAID at once; an expired, canceled or failed order frees its place',
});

export const CreatePaymentLinkBody = Type.Object(
  {
    amount: Type.Optional(Type.Integer({ ...Amount, description: 'A fixed amount in tiyin; absent: the buyer enters the amount on the page' })),
    amountMin: Type.Optional(ChosenBound('Without `amount`: the least the buyer may enter, in tiyin (1,000 to 100,000,000; 1,000 if absent)')),
    amountMax: Type.Optional(ChosenBound('Without `amount`: the most the buyer may enter, in tiyin (1,000 to 100,000,000; 100,000,000 if absent)')),
    description: LinkDescription,
    receipt: Type.Optional(ReceiptRequest),
    active: Type.Optional(Type.Boolean({ description: 'Whether the link opens orders; true if absent' })),
    quantityMax: Type.Optional(QuantityMax),
  },
  { title: 'CreatePaymentLinkBody', additionalProperties: false },
);
export type CreatePaymentLinkBody = Static<typeof CreatePaymentLinkBody>;

export const UpdatePaymentLinkBody = Type.Object(
  {
    active: Type.Optional(Type.Boolean({ description: 'false: the link opens no more orders (its page says so); true: it opens them again' })),
    description: Type.Optional(LinkDescription),
  },
  { title: 'UpdatePaymentLinkBody', additionalProperties: false },
);
export type UpdatePaymentLinkBody = Static<typeof UpdatePaymentLinkBody>;

export const PaymentLink = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('payment_link'),
    url: Type.String({ description: "The link's page, to share: the buyer presses Pay there and goes on to the hosted payment page" }),
    qrSvgUrl: Type.String({ description: 'A QR code of `url`, as an SVG image, to print' }),
    amount: Type.Union([Type.Integer(), Type.Null()], { description: 'The fixed amount in tiyin; null: the buyer enters it' }),
    amountMin: Type.Union([Type.Integer(), Type.Null()], { description: 'The least amount the buyer may enter; null with a fixed amount' }),
    amountMax: Type.Union([Type.Integer(), Type.Null()], { description: 'The most amount the buyer may enter; null with a fixed amount' }),
    description: Type.String(),
    receipt: Type.Union([ReceiptRequest, Type.Null()], { description: "Each order's fiscal lines; null without" }),
    active: Type.Boolean(),
    quantityMax: Type.Union([Type.Integer(), Type.Null()], { description: 'At most this many of its orders PENDING or PAID at once; null: no limit' }),
    livemode: Type.Boolean(),
    created: Timestamp,
  },
  { title: 'PaymentLink' },
);
export type PaymentLink = Static<typeof PaymentLink>;

export const PaymentLinksQuery = listQuery({
  active: Type.Optional(Type.Boolean({ description: 'Only the active links (true) or the deactivated ones (false)' })),
});
export type PaymentLinksQuery = ListQuery & Static<typeof PaymentLinksQuery>;
