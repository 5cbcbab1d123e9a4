// A fiscal receipt as its buyer sees it: on the hosted page's paid screen (through the public session call) and on its
// printable page. The lines keep what a buyer reads (no classification or package codes, no principal's TIN).
import { lineTotal } from '../receipts/lines.js';
import type { Receipt } from '../receipts/schema.js';
import type { BuyerReceipt } from '../receipts/service.js';
import type { SessionReceipt } from './schema.js';

/** What the printable page shows: the buyer's view of the receipt, its kind and payment, the masked card, the shop. */
export interface PrintableReceipt extends SessionReceipt {
  type: Receipt['type'];
  paymentIntent: string;
  livemode: boolean;
  created: string;
  maskedPan: string;
  shop: BuyerReceipt['shop'];
}

export function sessionReceiptOf(receipt: Receipt): SessionReceipt {
  return {
    status: receipt.status,
    items: receipt.items.map((item) => ({
      title: item.title,
      count: item.count,
      price: item.price,
      discount: item.discount,
      // A line's total never passes the amount, so it is a safe integer.
      total: Number(lineTotal(item)),
      vatPercent: item.vatPercent,
    })),
    shipping: receipt.shipping && { title: receipt.shipping.title, price: receipt.shipping.price, vatPercent: receipt.shipping.vatPercent },
    amount: receipt.amount,
    vatAmount: receipt.vatAmount,
    terminalId: receipt.terminalId,
    receiptNumber: receipt.receiptNumber,
    fiscalSign: receipt.fiscalSign,
    fiscalizedAt: receipt.fiscalizedAt,
    qrUrl: receipt.qrUrl,
    url: receipt.url,
  };
}

export function printableReceiptOf({ receipt, maskedPan, shop }: BuyerReceipt): PrintableReceipt {
  return {
    ...sessionReceiptOf(receipt),
    type: receipt.type,
    paymentIntent: receipt.paymentIntent,
    livemode: receipt.livemode,
    created: receipt.created,
    maskedPan,
    shop,
  };
}
