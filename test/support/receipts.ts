/** Fiscal lines of one item for `amount`: what a live order or charge needs (receiptRequired is on by default). */
export const receiptFor = (amount: number) => ({
  items: [{ title: 'Goods', price: amount, count: 1, code: '10399001001000000', packageCode: '1505709', vatPercent: 12 }],
});
