// The statement: every movement of a merchant's balance is one balance transaction, written with its ledger entries,
// and at every instant the available rows' net sums to the balance's available and the pending rows' to its pending.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { bindCard } from '../support/binding.js';
import { balance, charge, reconcileNow, statementOf as readStatement, type StatementRow } from '../support/payments.js';

let service: TestService;
const DELAY_SECONDS = 3_600;
beforeAll(async () => {
  service = await startService({ TOLOV_SETTLEMENT_DELAY_SECONDS: String(DELAY_SECONDS) });
});
afterAll(() => service.stop());

type Row = StatementRow;
const statementOf = (key: string, query = '') => readStatement(service, key, query);

/** The identities of the statement against the balance, checked after every step. */
async function expectIdentities(key: string): Promise<Row[]> {
  const rows = await statementOf(key);
  const sum = (status: Row['status']) => rows.filter((row) => row.status === status).reduce((total, row) => total + row.net, 0);
  const { available, pending } = await balance(service, key);
  expect({ available: sum('available'), pending: sum('pending') }).toEqual({ available, pending });
  for (const row of rows) expect(row.net).toBe(row.amount - row.fee);
  return rows;
}

const settleAll = () => service.payments.settle(-DELAY_SECONDS, 100);
const refund = (key: string, paymentIntent: string) => service.call({ method: 'POST', url: '/v1/refunds', key, idempotencyKey: idem(), body: { paymentIntent } });

describe('the statement', () => {
  let shop: Merchant;
  beforeAll(async () => {
    shop = await service.createMerchant({ feeBps: 150 });
  });

  it('a succeeded charge is one pending row with its fee, available after the settlement delay; a failed one is none', async () => {
    const card = await bindCard(service, shop.test, '8600000000000007');
    const paid = (await charge(service, shop.test, { amount: 1_000_000, card })).body;
    const rows = await expectIdentities(shop.test);
    expect(rows).toEqual([
      {
        id: expect.stringMatching(/^txn_[0-9A-Za-z]{24}$/),
        object: 'balance_transaction',
        type: 'charge',
        amount: 1_000_000,
        fee: 15_000,
        net: 985_000,
        status: 'pending',
        availableOn: expect.any(String),
        source: paid.id,
        payout: null,
        created: expect.any(String),
      },
    ]);
    const delay = Date.parse(rows[0]!.availableOn as string) - Date.parse(paid.created);
    expect(Math.abs(delay - DELAY_SECONDS * 1000)).toBeLessThan(60_000);
    expect((await service.call({ method: 'GET', url: `/v1/balance_transactions/${rows[0]!.id}`, key: shop.test })).body).toEqual(rows[0]);

    const declined = await bindCard(service, shop.test, '8600000000000015');
    expect((await charge(service, shop.test, { amount: 50_000, card: declined })).body.status).toBe('FAILED');
    expect(await expectIdentities(shop.test)).toHaveLength(1);
  });

  it('settlement makes the row available; a refund is an available negative row without a fee', async () => {
    await settleAll();
    const [settled] = await expectIdentities(shop.test);
    expect(settled).toMatchObject({ type: 'charge', status: 'available' });
    const refunded = await refund(shop.test, settled!.source);
    expect(refunded.body.status).toBe('SUCCEEDED');
    const rows = await expectIdentities(shop.test);
    expect(rows[0]).toMatchObject({ type: 'refund', amount: -1_000_000, fee: 0, net: -1_000_000, status: 'available', source: refunded.body.id });
    expect((await balance(service, shop.test)).available).toBe(-15_000);
  });

  it('an unclear charge and an unclear refund have rows only once reconciliation settles them', async () => {
    const card = await bindCard(service, shop.test, '8600000000000031');
    const unclear = (await charge(service, shop.test, { amount: 200_000, card })).body;
    expect(unclear.status).toBe('PROCESSING');
    expect((await statementOf(shop.test, `&source=${unclear.id}`))).toEqual([]);
    await expectIdentities(shop.test);
    await reconcileNow(service);
    expect(await statementOf(shop.test, `&source=${unclear.id}`)).toMatchObject([{ type: 'charge', status: 'pending', amount: 200_000 }]);
    await expectIdentities(shop.test);

    const slowRefundCard = await bindCard(service, shop.test, '8600000000000064');
    const paid = (await charge(service, shop.test, { amount: 300_000, card: slowRefundCard })).body;
    const pendingRefund = (await refund(shop.test, paid.id)).body;
    expect(pendingRefund.status).toBe('PENDING');
    expect(await statementOf(shop.test, `&source=${pendingRefund.id}`)).toEqual([]);
    await expectIdentities(shop.test);
    await reconcileNow(service);
    expect(await statementOf(shop.test, `&source=${pendingRefund.id}`)).toMatchObject([{ type: 'refund', net: -300_000 }]);
    await settleAll();
    await expectIdentities(shop.test);
  });

  it('an order paid on its page is a charge row; filters by type and source; another product or mode sees none', async () => {
    const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: idem(), body: { amount: 400_000 } });
    const paid = await service.call({ method: 'POST', url: `/v1/test_helpers/orders/${order.body.id}/pay`, key: shop.test, body: {} });
    expect(await statementOf(shop.test, `&source=${paid.body.paymentIntent}`)).toMatchObject([{ type: 'charge', net: 394_000 }]);
    await expectIdentities(shop.test);

    const refunds = await statementOf(shop.test, '&type=refund');
    expect(refunds.length).toBe(2);
    expect(refunds.every((row) => row.type === 'refund')).toBe(true);
    expect(await statementOf(shop.test, '&payout=po_none')).toEqual([]);
    expect((await service.call({ method: 'GET', url: '/v1/balance_transactions?type=fee', key: shop.test })).status).toBe(400);

    const other = await service.createMerchant();
    const someone = refunds[0]!.id;
    expect(await statementOf(other.test)).toEqual([]);
    expect((await service.call({ method: 'GET', url: `/v1/balance_transactions/${someone}`, key: other.test })).status).toBe(404);
    expect((await service.call({ method: 'GET', url: `/v1/balance_transactions/${someone}`, key: shop.live })).status).toBe(404);
    expect(await statementOf(shop.live)).toEqual([]);
  });
});

describe('the statement of payments made before it existed', () => {
  it('is rebuilt by its migration from the payments and refunds, with the same rows and the identities holding', async () => {
    const before = await startService({ TOLOV_SETTLEMENT_DELAY_SECONDS: '0' });
    try {
      const shop = await before.createMerchant({ feeBps: 100 });
      const card = await bindCard(before, shop.test, '8600000000000007');
      const settled = (await charge(before, shop.test, { amount: 500_000, card })).body;
      await before.payments.settle(0, 100);
      const refunded = (await charge(before, shop.test, { amount: 70_000, card })).body;
      await before.call({ method: 'POST', url: '/v1/refunds', key: shop.test, idempotencyKey: idem(), body: { paymentIntent: refunded.id } });
      await charge(before, shop.test, { amount: 90_000, card: await bindCard(before, shop.test, '8600000000000015') });
      const pick = (rows: Row[]) => rows.map(({ type, amount, fee, net, status, source }) => ({ type, amount, fee, net, status, source })).sort((a, b) => a.source.localeCompare(b.source) || a.type.localeCompare(b.type));
      const read = async () => (await before.call({ method: 'GET', url: '/v1/balance_transactions?limit=100', key: shop.test })).body.data as Row[];
      const written = pick(await read());
      expect(written.map((row) => `${row.type} ${row.status}`).sort()).toEqual(['charge available', 'charge pending', 'refund available']);
      expect(written.find((row) => row.source === settled.id)).toMatchObject({ status: 'available', net: 495_000 });

      const migration = await readFile(new URL('../../src/db/migrations/024_balance_transactions.sql', import.meta.url), 'utf8');
      await before.db.query('DELETE FROM balance_transactions');
      await before.db.exec(migration.slice(migration.indexOf('INSERT INTO balance_transactions')));
      const rebuilt = await read();
      expect(pick(rebuilt)).toEqual(written);
      expect(rebuilt.every((row) => /^txn_[0-9A-Za-z]{24}$/.test(row.id))).toBe(true);
      const { available, pending } = await balance(before, shop.test);
      const net = (status: string) => rebuilt.filter((row) => row.status === status).reduce((total, row) => total + row.net, 0);
      expect({ available: net('available'), pending: net('pending') }).toEqual({ available, pending });
    } finally {
      await before.stop();
    }
  });
});
