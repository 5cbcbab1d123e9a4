/** Fiscal lines of one item for `amount`: what a live order or charge needs (receiptRequired is on by default). */
export const receiptFor = (amount: number) => ({
  items: [{ title: 'Goods', price: amount, count: 1, code: '10399001001000000', packageCode: '1505709', vatPercent: 12 }],
});

/** Runs fiscalization batches until none is due: a return receipt is due only once its sale is registered. */
export async function fiscalizeAll(service: { receipts: { fiscalizeDue(batchMax: number): Promise<number> } }): Promise<void> {
  for (let batch = 0; batch < 100; batch++) if ((await service.receipts.fiscalizeDue(100)) === 0) return;
  throw new Error('receipts were still due after 100 batches');
}
