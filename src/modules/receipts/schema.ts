import { Type, type Static } from '@sinclair/typebox';
import { AMOUNT_MAX, Timestamp } from '../../core/schemas.js';
import { listQuery, type ListQuery } from '../../core/pagination.js';

export const RECEIPT_STATUSES = ['PENDING', 'FISCALIZED', 'FAILED'] as const;
export type ReceiptStatus = (typeof RECEIPT_STATUSES)[number];
export const RECEIPT_TYPES = ['sale', 'return'] as const;
export type ReceiptType = (typeof RECEIPT_TYPES)[number];

export const RECEIPT_ITEMS_MAX = 100;
export const ITEM_COUNT_MAX = 100_000;

const Title = Type.String({ minLength: 1, maxLength: 128, description: 'What the buyer sees on the line, 1 to 128 characters' });
const Price = Type.Integer({ minimum: 0, maximum: AMOUNT_MAX, description: 'Tiyin per unit' });
const Code = Type.String({ pattern: '^[0-9]{17}$', description: 'the IKPU (MXIK) classification code: exactly 17 digits' });
const PackageCode = Type.String({ pattern: '^[0-9]{1,20}$', description: 'the package code of that IKPU: 1 to 20 digits' });
const VatPercent = Type.Integer({ minimum: 0, maximum: 100, description: 'The VAT rate in percent: one of the rates Tolov is configured with (TOLOV_VAT_RATES, 0 and 12 by default)' });

export const ReceiptItemRequest = Type.Object(
  {
    title: Title,
    price: Price,
    count: Type.Integer({ minimum: 1, maximum: ITEM_COUNT_MAX, description: 'Units, 1 to 100,000' }),
    code: Code,
    packageCode: PackageCode,
    vatPercent: VatPercent,
    discount: Type.Optional(Type.Integer({ minimum: 0, maximum: AMOUNT_MAX, description: 'Tiyin off the whole line' })),
    commissionTin: Type.Optional(Type.String({ pattern: '^[0-9]{9}$', description: "the TIN of the principal for goods sold on commission: 9 digits" })),
  },
  { title: 'ReceiptItemRequest', additionalProperties: false },
);

export const ShippingRequest = Type.Object(
  { title: Title, price: Price, code: Code, packageCode: PackageCode, vatPercent: VatPercent },
  { title: 'ReceiptShippingRequest', additionalProperties: false },
);

/** The fiscal lines sent with an order or a charge: Σ(price × count − discount) + shipping price = amount. */
export const ReceiptRequest = Type.Object(
  {
    items: Type.Array(ReceiptItemRequest, { minItems: 1, maxItems: RECEIPT_ITEMS_MAX }),
    shipping: Type.Optional(ShippingRequest),
  },
  {
    title: 'ReceiptRequest',
    additionalProperties: false,
    description: "The fiscal receipt's lines. Required in live mode unless the operator turned it off for the product",
  },
);
export type ReceiptRequest = Static<typeof ReceiptRequest>;

const ReceiptItem = Type.Object(
  {
    title: Type.String(),
    price: Type.Integer(),
    count: Type.Integer(),
    code: Type.String(),
    packageCode: Type.String(),
    vatPercent: Type.Integer(),
    discount: Type.Integer(),
    commissionTin: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'ReceiptItem' },
);
const Shipping = Type.Object(
  { title: Type.String(), price: Type.Integer(), code: Type.String(), packageCode: Type.String(), vatPercent: Type.Integer() },
  { title: 'ReceiptShipping' },
);

/** The lines as Tolov keeps them: every optional field given its value. */
export interface ReceiptLines {
  items: Static<typeof ReceiptItem>[];
  shipping: Static<typeof Shipping> | null;
}

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });

export const Receipt = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('receipt'),
    type: Type.Union(RECEIPT_TYPES.map((type) => Type.Literal(type)), { description: 'sale: of a payment; return: of its refund' }),
    status: Type.Union(RECEIPT_STATUSES.map((status) => Type.Literal(status))),
    paymentIntent: Type.String(),
    refund: nullable(Type.String(), 'The refund a return receipt is for'),
    items: Type.Array(ReceiptItem),
    shipping: nullable(Shipping),
    amount: Type.Integer({ description: 'In tiyin' }),
    vatAmount: Type.Integer({ description: 'The VAT included in amount: the sum over lines of round_half_up(line total × rate ÷ (100 + rate))' }),
    terminalId: nullable(Type.String(), 'The fiscal module that registered it; null until FISCALIZED'),
    receiptNumber: nullable(Type.String()),
    fiscalSign: nullable(Type.String()),
    qrUrl: nullable(Type.String(), "The tax authority's check of this receipt, as its QR code holds it"),
    fiscalizedAt: nullable(Timestamp),
    failureCode: nullable(Type.String(), 'Why it FAILED: INVALID_CODE (or another refusal by the fiscal module), FISCAL_UNAVAILABLE'),
    url: Type.String({ description: "The buyer's printable receipt page: no login, no card number beyond the masked one" }),
    livemode: Type.Boolean(),
    created: Timestamp,
  },
  { title: 'Receipt' },
);
export type Receipt = Static<typeof Receipt>;

export const ReceiptsQuery = listQuery({
  paymentIntent: Type.Optional(Type.String({ maxLength: 64, description: "This payment's receipts (pi_…)" })),
  type: Type.Optional(Type.Union(RECEIPT_TYPES.map((type) => Type.Literal(type)))),
  status: Type.Optional(Type.Union(RECEIPT_STATUSES.map((status) => Type.Literal(status)))),
});
export type ReceiptsQuery = ListQuery & Static<typeof ReceiptsQuery>;
