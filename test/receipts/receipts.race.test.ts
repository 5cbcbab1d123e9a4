// Fiscalization under races and crashes, in test mode: workers racing for the same receipts, and a worker that died
// after the module registered a receipt but before Tolov recorded it. Each receipt is registered once, ends once,
// and has one event.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Merchant, type TestService } from '../support/harness.js';
import { bindCard } from '../support/binding.js';
import { charge } from '../support/payments.js';
import { receiptFor } from '../support/receipts.js';
import { TestFiscalModule } from '../../src/rails/test-fiscal.js';

let service: TestService;
let merchant: Merchant;
let card: string;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
  card = await bindCard(service, merchant.test, '8600000000000007');
});
afterAll(() => service.stop());

const paidReceipt = async (amount: number): Promise<string> => {
  const reply = await charge(service, merchant.test, { amount, card, receipt: receiptFor(amount) });
  expect(reply.body.status).toBe('SUCCEEDED');
  return reply.body.receipt as string;
};

const countsOf = async (ids: string[]) =>
  (
    await service.db.query<{ receipts: number; fiscalized: number; events: number; registrations: number }>(
      `SELECT (SELECT count(*)::int FROM receipts WHERE id = ANY($1)) AS receipts,
              (SELECT count(*)::int FROM receipts WHERE id = ANY($1) AND status = 'FISCALIZED') AS fiscalized,
              (SELECT count(*)::int FROM events WHERE object_id = ANY($1)) AS events,
              (SELECT count(*)::int FROM test_fiscal_receipts WHERE receipt_id = ANY($1)) AS registrations`,
      [ids],
    )
  )[0]!;

describe('fiscalization races', () => {
  it('three workers at once over 30 receipts: each registered once, FISCALIZED once, one event each', async () => {
    const ids = await Promise.all(Array.from({ length: 30 }, (_, n) => paidReceipt(10_000 + n)));
    const leased = await Promise.all([service.receipts.fiscalizeDue(8), service.receipts.fiscalizeDue(8), service.receipts.fiscalizeDue(8)]);
    while ((await service.receipts.fiscalizeDue(8)) > 0);
    expect(leased.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(30);
    expect(await countsOf(ids)).toEqual({ receipts: 30, fiscalized: 30, events: 30, registrations: 30 });
  });

  it('a worker that died after the module registered a receipt: the next asks the module first and records that registration', async () => {
    const id = await paidReceipt(25_000);
    const [row] = await service.db.query<{ lines: { items: never[] }; amount: number; vat_amount: number }>('SELECT lines, amount, vat_amount FROM receipts WHERE id = $1', [id]);
    const registered = await new TestFiscalModule(service.db).register({ id, type: 'sale', amount: row!.amount, vatAmount: row!.vat_amount, lines: row!.lines.items });
    expect(registered.status).toBe('REGISTERED');
    // Its attempt was counted when it leased the receipt; the lease has since passed.
    await service.db.query(`UPDATE receipts SET attempts = 1, next_attempt_at = now() WHERE id = $1`, [id]);
    expect(await service.receipts.fiscalizeDue(10)).toBe(1);
    const receipt = (await service.call({ method: 'GET', url: `/v1/receipts/${id}`, key: merchant.test })).body;
    expect(receipt).toMatchObject({ status: 'FISCALIZED', receiptNumber: (registered as { receiptNumber: string }).receiptNumber });
    expect(await countsOf([id])).toEqual({ receipts: 1, fiscalized: 1, events: 1, registrations: 1 });
  });
});
