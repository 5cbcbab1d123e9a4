// The Node SDK's statement against a running service: balance transactions read one by one, filtered as the API
// filters them, walked across pages with `for await`, typed as the API describes them, and adding up to the balance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Tolov, { TolovError, type BalanceTransaction } from '../../packages/node/src/index.js';
import { startService, type TestService } from '../support/harness.js';

let service: TestService;
let base: string;
beforeAll(async () => {
  service = await startService();
  base = await service.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => service.stop());

/** A new product's SDK client, at 1.5% fee, and a saved test card. */
async function shop(): Promise<{ tolov: Tolov; card: string }> {
  const merchant = await service.createMerchant({ name: 'Statement Shop', feeBps: 150 });
  const tolov = new Tolov(merchant.test, { baseUrl: base });
  const binding = await tolov.cardBindings.create({ customerRef: 'customer-1' });
  return { tolov, card: (await tolov.testHelpers.cardBindings.complete(binding.id)).card! };
}

/** Every succeeded payment settles now. */
const settleAll = () => service.payments.settle(-100_000, 100);

/** Every row of a list, walked with for await. */
async function all(rows: AsyncIterable<BalanceTransaction>): Promise<BalanceTransaction[]> {
  const walked: BalanceTransaction[] = [];
  for await (const row of rows) walked.push(row);
  return walked;
}

describe('the statement with the Node SDK', () => {
  it('reads a payment’s row, pending, then available once settled, and a refund’s, negative and without a fee', async () => {
    const { tolov, card } = await shop();
    const payment = await tolov.charges.create({ amount: 1_000_000, card });
    const [row] = (await tolov.balanceTransactions.list()).data;
    expect(row).toEqual({
      id: expect.stringMatching(/^txn_/),
      object: 'balance_transaction',
      type: 'charge',
      amount: 1_000_000,
      fee: 15_000,
      net: 985_000,
      status: 'pending',
      availableOn: expect.any(String),
      source: payment.id,
      payout: null,
      created: expect.any(String),
    });
    expect(await tolov.balanceTransactions.retrieve(row!.id)).toEqual(row);

    await settleAll();
    expect(await tolov.balanceTransactions.retrieve(row!.id)).toMatchObject({ status: 'available', net: 985_000 });
    const refund = await tolov.refunds.create({ paymentIntent: payment.id });
    const [back] = (await tolov.balanceTransactions.list({ source: refund.id })).data;
    // Typed as the API describes it: a wrong field or status would not compile.
    const shown: { type: BalanceTransaction['type']; net: number; fee: number; status: 'pending' | 'available' } = { type: back!.type, net: back!.net, fee: back!.fee, status: back!.status };
    expect(shown).toEqual({ type: 'refund', net: -1_000_000, fee: 0, status: 'available' });
  });

  it('filters by type, source, payout and creation time, and walks every page with for await', async () => {
    const { tolov, card } = await shop();
    const before = new Date().toISOString();
    const payments: string[] = [];
    for (const amount of [200_000, 300_000, 400_000]) payments.push((await tolov.charges.create({ amount, card })).id);
    await settleAll();
    const refund = await tolov.refunds.create({ paymentIntent: payments[0]! });
    payments.push((await tolov.charges.create({ amount: 500_000, card })).id);

    const walked = await all(tolov.balanceTransactions.list({ limit: 2 }));
    expect(walked.map((row) => row.source)).toEqual([payments[3], refund.id, payments[2], payments[1], payments[0]]);
    expect((await all(tolov.balanceTransactions.list({ type: 'refund', limit: 1 }))).map((row) => row.source)).toEqual([refund.id]);
    expect((await all(tolov.balanceTransactions.list({ type: 'charge', limit: 1 }))).map((row) => row.source)).toEqual([payments[3], payments[2], payments[1], payments[0]]);
    expect((await tolov.balanceTransactions.list({ source: payments[1] })).data.map((row) => row.type)).toEqual(['charge']);
    expect((await tolov.balanceTransactions.list({ payout: 'po_none' })).data).toEqual([]);
    expect((await tolov.balanceTransactions.list({ 'created[lt]': before })).data).toEqual([]);
    expect(await all(tolov.balanceTransactions.list({ 'created[gte]': before, limit: 3 }))).toEqual(walked);

    // The available rows' net is the balance's available, the pending rows' its pending.
    const net = (status: BalanceTransaction['status']) => walked.filter((row) => row.status === status).reduce((sum, row) => sum + row.net, 0);
    const { available, pending } = await tolov.balance.retrieve();
    expect({ available, pending }).toEqual({ available: net('available'), pending: net('pending') });
    expect({ available, pending }).toEqual({ available: 197_000 + 295_500 + 394_000 - 200_000, pending: 492_500 });
  });

  it('refuses a type the API does not know, and another product’s row, with a typed error', async () => {
    const { tolov, card } = await shop();
    await tolov.charges.create({ amount: 100_000, card });
    const refused = await tolov.balanceTransactions.list({ type: 'fee' as BalanceTransaction['type'] }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(TolovError);
    expect(refused).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR' });
    const [theirs] = (await tolov.balanceTransactions.list()).data;
    const other = await shop();
    expect((await other.tolov.balanceTransactions.list()).data).toEqual([]);
    const missing = await other.tolov.balanceTransactions.retrieve(theirs!.id).catch((error: unknown) => error);
    expect(missing).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
  });
});
