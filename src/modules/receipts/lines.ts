// A receipt's lines: checked against the amount they must add up to, and their VAT, exactly (in BigInt: a line's
// price × count can pass 2^53).
import { ApiError } from '../../core/errors.js';
import type { ReceiptLines, ReceiptRequest } from './schema.js';

/** The lines as kept, every optional field given its value; refuses a rate Tolov is not configured with. */
function normalize(request: ReceiptRequest, vatRates: readonly number[]): ReceiptLines {
  const rateRefused = (param: string, rate: number) =>
    new ApiError('VALIDATION_ERROR', `${param} must be one of the VAT rates ${vatRates.join(', ')}; got ${rate}`, { param });
  const items = request.items.map((item, index) => {
    if (!vatRates.includes(item.vatPercent)) throw rateRefused(`receipt.items.${index}.vatPercent`, item.vatPercent);
    return { ...item, discount: item.discount ?? 0, commissionTin: item.commissionTin ?? null };
  });
  const shipping = request.shipping ?? null;
  if (shipping !== null && !vatRates.includes(shipping.vatPercent)) throw rateRefused('receipt.shipping.vatPercent', shipping.vatPercent);
  return { items, shipping };
}

const mismatch = (param: string, message: string) => new ApiError('RECEIPT_MISMATCH', message, { param });

/**
 * The lines of a request for `amount`, or a 400 naming the first field that is off: a discount above its line, the
 * line or shipping whose running total passes the amount, or the amount when the lines fall short of it.
 */
export function receiptLinesFor(request: ReceiptRequest, amount: number, vatRates: readonly number[]): ReceiptLines {
  const lines = normalize(request, vatRates);
  const target = BigInt(amount);
  let total = 0n;
  for (const [index, item] of lines.items.entries()) {
    const gross = BigInt(item.price) * BigInt(item.count);
    if (BigInt(item.discount) > gross) {
      throw mismatch(`receipt.items.${index}.discount`, `receipt.items.${index}.discount (${item.discount}) is more than the line's price × count (${gross})`);
    }
    total += gross - BigInt(item.discount);
    if (total > target) throw mismatch(`receipt.items.${index}`, `The lines up to receipt.items.${index} add up to ${total} tiyin, more than amount (${amount})`);
  }
  if (lines.shipping !== null) {
    total += BigInt(lines.shipping.price);
    if (total > target) throw mismatch('receipt.shipping.price', `The lines with shipping add up to ${total} tiyin, more than amount (${amount})`);
  }
  if (total < target) throw mismatch('amount', `amount (${amount}) is more than the receipt's lines add up to (${total} tiyin)`);
  return lines;
}

/** A line's price × count − discount, exactly: price × count can pass 2^53 before the discount brings it back. */
export function lineTotal(item: { price: number; count: number; discount: number }): bigint {
  return BigInt(item.price) * BigInt(item.count) - BigInt(item.discount);
}

/** The shipping as the receipt's last line: one unit, no discount, not on commission. */
export function shippingLine(shipping: NonNullable<ReceiptLines['shipping']>) {
  return { ...shipping, count: 1, discount: 0, commissionTin: null };
}

/** round_half_up(total × rate ÷ (100 + rate)): the VAT a line's total includes. */
function vatOf(total: bigint, ratePercent: number): bigint {
  const rate = BigInt(ratePercent);
  const divisor = 100n + rate;
  return (2n * total * rate + divisor) / (2n * divisor);
}

/** The VAT the receipt's amount includes: summed over its lines, each rounded half up. */
export function vatAmountOf(lines: ReceiptLines): number {
  let vat = 0n;
  for (const item of lines.items) vat += vatOf(lineTotal(item), item.vatPercent);
  if (lines.shipping !== null) vat += vatOf(BigInt(lines.shipping.price), lines.shipping.vatPercent);
  return Number(vat);
}

/** A live order or charge without lines, when its product must give them. */
export function receiptRequired(): ApiError {
  return new ApiError('RECEIPT_REQUIRED', 'receipt is required in live mode: every payment needs a fiscal receipt (docs/receipts.md)', { param: 'receipt' });
}
