// Paid or expired, never both: a buyer's code that lands at the millisecond of expiry, while the merchant's reads and
// the expiry worker hit the same orders, leaves each order in exactly one of the two outcomes, with the money where
// that outcome says and nothing for reconciliation to disagree with.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitCard, submitCode } from '../support/binding.js';
import { engine, idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { reconcileNow } from '../support/payments.js';

const ORDERS = 60;
/**
 * The buyers' codes are spread over this window around the orders' common expiry: wide enough that some arrive before
 * it and some after even when a loaded machine takes a few hundred milliseconds to start each one.
 */
const SPREAD_MS = 1_000;

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant({ name: 'Expiry race' });
});
afterAll(() => service.stop());

async function orderAwaitingCode(pan = '8600000000000007'): Promise<{ id: string; token: string }> {
  const reply = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: idem(), body: { amount: 250_000 } });
  const token = reply.body.paymentUrl.split('/pay/')[1] as string;
  expect((await submitCard(service, token, { pan })).status).toBe(200);
  return { id: reply.body.id, token };
}

const sleepUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

describe('an order paid at the moment it expires', () => {
  it('ends PAID with its money or EXPIRED with none, whoever comes first; reads and the worker never split the two', async () => {
    const orders = await Promise.all(Array.from({ length: ORDERS }, () => orderAwaitingCode()));
    // One expiry for all, by the database's clock, a moment from now; each buyer's code is due around it.
    const [{ at }] = (await service.db.query<{ at: Date }>(`SELECT now() + interval '1 second' AS at`)) as [{ at: Date }];
    const ids = orders.map((order) => order.id);
    await service.db.query('UPDATE orders SET expires_at = $2 WHERE id = ANY($1)', [ids, at]);
    await service.db.query('UPDATE checkout_sessions SET expires_at = $2 WHERE order_id = ANY($1)', [ids, at]);

    let racing = true;
    const reads = async () => {
      for (let round = 0; racing; round++) {
        await service.call({ method: 'GET', url: `/merchant/v1/orders/${ids[round % ORDERS]}`, key: merchant.test });
        if (round % ORDERS === 0) await service.call({ method: 'GET', url: '/merchant/v1/orders?limit=100', key: merchant.test });
      }
    };
    const worker = async () => {
      while (racing) await service.orders.expireDue(100);
    };
    const readers = [reads(), reads(), reads(), worker()];
    const expiresAt = at.getTime();
    const codes = await Promise.all(
      orders.map(async ({ token }, index) => {
        await sleepUntil(expiresAt - SPREAD_MS / 2 + (index * SPREAD_MS) / ORDERS);
        return submitCode(service, token, '111111');
      }),
    );
    racing = false;
    await Promise.all(readers);

    // Before its expiry the code pays (200); after it the session is gone (410). Nothing else, never a 500.
    expect(codes.map((reply) => reply.status).filter((status) => status !== 200 && status !== 410)).toEqual([]);
    await reconcileNow(service);
    await service.orders.expireDue(100);

    const rows = await service.db.query<{ id: string; status: string; intent: string | null; debit: string | null }>(
      `SELECT o.id, o.status, o.payment_intent_id AS intent, (SELECT status FROM payment_intents WHERE order_id = o.id) AS debit
         FROM orders o WHERE o.id = ANY($1)`,
      [ids],
    );
    const mismatched = rows.filter(
      (row) => !((row.status === 'PAID' && row.debit === 'SUCCEEDED' && row.intent !== null) || (row.status === 'EXPIRED' && row.debit === null)),
    );
    expect(mismatched).toEqual([]);
    const paid = rows.filter((row) => row.status === 'PAID').length;
    // The spread straddles the expiry: both outcomes occur, so the test saw the race and not one side of it.
    expect({ paid: paid > 0, expired: rows.length - paid > 0 }).toEqual({ paid: true, expired: true });
    codes.forEach((reply, index) => {
      const row = rows.find((candidate) => candidate.id === orders[index]!.id)!;
      expect({ order: row.id, status: reply.status === 200 ? 'PAID' : 'EXPIRED' }).toEqual({ order: row.id, status: row.status });
    });

    const [{ paid: events }] = (await service.db.query<{ paid: number }>(
      `SELECT count(*) FILTER (WHERE type = 'order.paid')::int AS paid FROM events WHERE object_id = ANY($1)`,
      [ids],
    )) as [{ paid: number }];
    expect(events).toBe(paid);
    const report = await service.admin('GET', `/admin/v1/reconciliation?date=${new Date().toISOString().slice(0, 10)}&mode=test`);
    expect(report.status).toBe(200);
    expect(report.body.mismatches).toEqual([]);
  }, 60_000);
});

// Deterministic on PostgreSQL: the buyer's payment holds the order's lock at expiry while each kind of expiry arrives.
describe.skipIf(engine !== 'postgres')('an expiry that meets a payment holding the order', () => {
  const expiries: Record<string, (order: { id: string; token: string }) => Promise<unknown>> = {
    'the merchant reading it': (order) => service.call({ method: 'GET', url: `/merchant/v1/orders/${order.id}`, key: merchant.test }),
    'the merchant listing orders': () => service.call({ method: 'GET', url: '/merchant/v1/orders?limit=100', key: merchant.test }),
    'the buyer reading the session': (order) => service.call({ method: 'GET', url: `/checkout/v1/sessions/${order.token}` }),
    'the expiry worker': () => service.orders.expireDue(100),
  };
  for (const [who, expiry] of Object.entries(expiries)) {
    it(`waits for it and leaves the order to it: ${who}`, async () => {
      const order = await orderAwaitingCode();
      await service.db.query('UPDATE orders SET expires_at = now() WHERE id = $1', [order.id]);
      await service.db.query('UPDATE checkout_sessions SET expires_at = now() WHERE order_id = $1', [order.id]);
      // What a payment does first: the order's lock, then its PROCESSING debit, committed together.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let lockTaken!: () => void;
      const locked = new Promise<void>((resolve) => (lockTaken = resolve));
      const payment = service.db.transaction(async (tx) => {
        await tx.query('SELECT id FROM orders WHERE id = $1 FOR UPDATE', [order.id]);
        lockTaken();
        await held;
        await tx.query(
          `INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, order_id, rail_token, rail, masked_pan)
           SELECT 'pi_held' || substr(id, 4), product_id, livemode, amount, 0, 'UZS', 'PROCESSING', id, 'tok', 'uzcard', '860000******0007' FROM orders WHERE id = $1`,
          [order.id],
        );
      });
      await locked;
      const expired = expiry(order);
      await new Promise((resolve) => setTimeout(resolve, 200));
      release();
      await payment;
      await expired;
      const [row] = await service.db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [order.id]);
      expect(row!.status).toBe('PENDING');
    });
  }
});

describe('a debit that ends after its order was recorded EXPIRED', () => {
  async function expiredUnderDebit(pan: string) {
    const order = await orderAwaitingCode(pan);
    expect((await submitCode(service, order.token, '111111')).body.status).toBe('PROCESSING');
    // What a lost race would have left: the order and its session expired while the bank was debiting the card.
    await service.db.query(`UPDATE orders SET status = 'EXPIRED' WHERE id = $1`, [order.id]);
    await service.db.query(`UPDATE checkout_sessions SET status = 'EXPIRED' WHERE order_id = $1`, [order.id]);
    await reconcileNow(service);
    const read = await service.call({ method: 'GET', url: `/merchant/v1/orders/${order.id}`, key: merchant.test });
    const events = await service.db.query<{ type: string }>('SELECT type FROM events WHERE object_id = $1 ORDER BY seq', [order.id]);
    return { order: read.body, events: events.map((event) => event.type), session: (await service.call({ method: 'GET', url: `/checkout/v1/sessions/${order.token}` })).body };
  }

  it('succeeded: the order is PAID late with its payment and order.paid, and the session completes', async () => {
    const { order, events, session } = await expiredUnderDebit('8600000000000031');
    expect(order).toMatchObject({ status: 'PAID', paymentIntent: expect.stringMatching(/^pi_/) });
    expect(events).toEqual(['order.paid']);
    expect(session.status).toBe('COMPLETED');
    const intent = await service.call({ method: 'GET', url: `/subscribe/v1/charges/${order.paymentIntent}`, key: merchant.test });
    expect(intent.body).toMatchObject({ status: 'SUCCEEDED', order: order.id });
  });

  it('refused: the order stays EXPIRED and the payment FAILED, without an order.failed', async () => {
    const { order, events } = await expiredUnderDebit('8600000000000049');
    expect(order).toMatchObject({ status: 'EXPIRED', paymentIntent: null });
    expect(events).toEqual([]);
    const [debit] = await service.db.query<{ status: string }>('SELECT status FROM payment_intents WHERE order_id = $1', [order.id]);
    expect(debit!.status).toBe('FAILED');
  });
});
