import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, type LedgerTransaction } from '../../src/modules/ledger/store.js';
import { startService, type Merchant, type TestService } from '../support/harness.js';

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
});
afterAll(() => service.stop());

const balance = async (key: string) => (await service.call({ method: 'GET', url: '/v1/balance', key })).body;

/** A succeeded payment of `amount` with fee `fee`, as the payments module will post it. */
const payment = (productId: string, livemode: boolean, amount: number, fee: number, referenceId = 'pi_test'): LedgerTransaction => ({
  productId,
  livemode,
  reason: 'payment_succeeded',
  referenceId,
  entries: [
    { account: 'rail_clearing', amount: -amount },
    { account: 'merchant_pending', amount: amount - fee },
    { account: 'platform_fees', amount: fee },
  ],
});

const entryCount = async () => (await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger_entries'))[0]!.n;

describe('GET /v1/balance', () => {
  it('starts at zero in both modes', async () => {
    expect(await balance(merchant.test)).toEqual({ object: 'balance', available: 0, pending: 0, currency: 'UZS', livemode: false });
    expect(await balance(merchant.live)).toEqual({ object: 'balance', available: 0, pending: 0, currency: 'UZS', livemode: true });
  });

  it('is the sum of the ledger entries of the product and mode', async () => {
    const shop = await service.createMerchant();
    await service.db.transaction(async (tx) => post(tx, payment(shop.productId, false, 100_000, 1_000)));
    await service.db.transaction(async (tx) => post(tx, payment(shop.productId, false, 50_001, 500)));
    await service.db.transaction(async (tx) =>
      post(tx, {
        productId: shop.productId,
        livemode: false,
        reason: 'settlement',
        referenceId: 'pi_test',
        entries: [
          { account: 'merchant_pending', amount: -99_000 },
          { account: 'merchant_available', amount: 99_000 },
        ],
      }),
    );
    expect(await balance(shop.test)).toMatchObject({ available: 99_000, pending: 49_501 });
    // Nothing crosses into the live mode or another product.
    expect(await balance(shop.live)).toMatchObject({ available: 0, pending: 0 });
    expect(await balance(merchant.test)).toMatchObject({ available: 0, pending: 0 });
  });
});

describe('a balance past 2^53 tiyin', () => {
  it('is answered exactly, never a 500: its digits as the ledger sums them', async () => {
    const shop = await service.createMerchant();
    // Ten payments of 10^15 tiyin less a fee of 1, and one of 2 less 1: an odd sum past 2^53, which no double holds.
    for (let i = 0; i < 10; i++) await service.db.transaction(async (tx) => post(tx, payment(shop.productId, false, 1_000_000_000_000_000, 1)));
    await service.db.transaction(async (tx) => post(tx, payment(shop.productId, false, 2, 1)));
    const reply = await service.call({ method: 'GET', url: '/v1/balance', key: shop.test });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('{"object":"balance","available":0,"pending":9999999999999991,"currency":"UZS","livemode":false}');
  });
});

describe('post()', () => {
  it('writes a transaction whose entries sum to zero', async () => {
    const id = await service.db.transaction(async (tx) => post(tx, payment(merchant.productId, true, 7_000, 70, 'pi_sum')));
    const [row] = await service.db.query<{ total: number; n: number }>(
      'SELECT sum(amount)::bigint AS total, count(*)::int AS n FROM ledger_entries WHERE transaction_id = $1',
      [id],
    );
    expect(row).toEqual({ total: 0, n: 3 });
  });

  it.each([
    ['unbalanced', [{ account: 'merchant_pending', amount: 100 }, { account: 'rail_clearing', amount: -99 }]],
    ['a single entry', [{ account: 'merchant_pending', amount: 0 }]],
    ['a zero entry', [{ account: 'merchant_pending', amount: 0 }, { account: 'rail_clearing', amount: 0 }]],
    ['a fractional amount', [{ account: 'merchant_pending', amount: 0.5 }, { account: 'rail_clearing', amount: -0.5 }]],
  ] as const)('refuses %s entries before writing anything', async (_, entries) => {
    const before = await entryCount();
    await expect(
      service.db.transaction(async (tx) =>
        post(tx, { productId: merchant.productId, livemode: false, reason: 'test', referenceId: 'x', entries: [...entries] }),
      ),
    ).rejects.toThrow();
    expect(await entryCount()).toBe(before);
  });

  interface RawEntry {
    transaction: string;
    account: string;
    amount: number;
    /** The entry's mode; its transactions are in test mode. */
    livemode?: boolean;
  }

  /** Writes around post(), in one transaction: ledger transactions of the merchant's test mode, then `entries` in one statement. */
  const writeAround = (transactions: string[], entries: RawEntry[]) =>
    service.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO ledger_transactions (id, product_id, livemode, reason, reference_id)
         SELECT t.id, $1, false, 'test', t.id FROM unnest($2::text[]) AS t (id)`,
        [merchant.productId, transactions],
      );
      await tx.query(
        `INSERT INTO ledger_entries (transaction_id, product_id, livemode, account, amount)
         SELECT e.transaction_id, $1, e.livemode, e.account, e.amount
           FROM unnest($2::text[], $3::text[], $4::bigint[], $5::boolean[]) AS e (transaction_id, account, amount, livemode)`,
        [
          merchant.productId,
          entries.map((entry) => entry.transaction),
          entries.map((entry) => entry.account),
          entries.map((entry) => entry.amount),
          entries.map((entry) => entry.livemode ?? false),
        ],
      );
    });

  it('is enforced by the database too: an unbalanced transaction written around post() does not commit', async () => {
    const before = await entryCount();
    await expect(writeAround(['ltx_bypass'], [{ transaction: 'ltx_bypass', account: 'merchant_pending', amount: 100 }])).rejects.toMatchObject({
      code: '23514',
    });
    expect(await entryCount()).toBe(before);
  });

  it('refuses a statement that leaves any of the transactions it wrote unbalanced, whichever it is', async () => {
    const before = await entryCount();
    await expect(
      writeAround(
        ['ltx_pair_1', 'ltx_pair_2'],
        [
          { transaction: 'ltx_pair_1', account: 'merchant_pending', amount: 100 },
          { transaction: 'ltx_pair_1', account: 'rail_clearing', amount: -100 },
          { transaction: 'ltx_pair_2', account: 'merchant_pending', amount: 100 },
          { transaction: 'ltx_pair_2', account: 'rail_clearing', amount: -99 },
        ],
      ),
    ).rejects.toMatchObject({ code: '23514', message: expect.stringContaining('ltx_pair_2') });
    // A balanced transaction cannot be unbalanced later by entries a second statement adds to it.
    const id = await service.db.transaction(async (tx) => post(tx, payment(merchant.productId, false, 10, 1, 'pi_late')));
    await expect(
      service.db.query(
        "INSERT INTO ledger_entries (transaction_id, product_id, livemode, account, amount) VALUES ($1, $2, false, 'merchant_pending', 5)",
        [id, merchant.productId],
      ),
    ).rejects.toMatchObject({ code: '23514' });
    expect(await entryCount()).toBe(before + 3);
  });

  it('refuses an account outside the chart of accounts', async () => {
    await expect(
      writeAround(
        ['ltx_chart'],
        [
          { transaction: 'ltx_chart', account: 'merchant_pending', amount: 100 },
          { transaction: 'ltx_chart', account: 'suspense', amount: -100 },
        ],
      ),
    ).rejects.toMatchObject({ code: '23514', message: expect.stringContaining('ledger_entries_account_check') });
  });

  it('keeps entries on the product and mode of their transaction', async () => {
    await expect(
      writeAround(
        ['ltx_cross'],
        [
          { transaction: 'ltx_cross', account: 'merchant_pending', amount: 100, livemode: true },
          { transaction: 'ltx_cross', account: 'rail_clearing', amount: -100, livemode: true },
        ],
      ),
    ).rejects.toMatchObject({ code: '23503' });
  });

  it('is append-only: entries and transactions cannot be updated or deleted', async () => {
    const id = await service.db.transaction(async (tx) => post(tx, payment(merchant.productId, false, 10, 1, 'pi_append')));
    await expect(service.db.query('UPDATE ledger_entries SET amount = amount * 2 WHERE transaction_id = $1', [id])).rejects.toMatchObject({ code: '42501' });
    await expect(service.db.query('DELETE FROM ledger_entries WHERE transaction_id = $1', [id])).rejects.toMatchObject({ code: '42501' });
    await expect(service.db.query("UPDATE ledger_transactions SET reason = 'x' WHERE id = $1", [id])).rejects.toMatchObject({ code: '42501' });
  });
});
