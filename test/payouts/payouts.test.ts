// Payouts through the API: a manual payout takes at most the available balance at once and is sent to the test bank;
// the automatic payout pays out every available transaction not yet paid out, so that its transactions sum to its
// amount; a failed or canceled payout gives its amount back; the statement's identities hold after every step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine, idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { waitFor } from '../support/wait.js';
import { balance, chargeCard, eventsOf, railOperations, reconcileNow, statementOf as readStatement, type StatementRow } from '../support/payments.js';
import { makeAvailable, setPayoutAccount } from '../support/payouts.js';

let service: TestService;
const MINIMUM = 1_000_000;
beforeAll(async () => {
  service = await startService({ TOLOV_PAYOUT_MIN: String(MINIMUM), TOLOV_FEE_BPS: '100' });
});
afterAll(() => service.stop());

type Row = StatementRow;
const statementOf = (key: string, query = '') => readStatement(service, key, query);

/**
 * The identities of the contract, after every step: the statement's available and pending rows sum to the balance's,
 * and available + pending = Σ succeeded amounts − fees − succeeded refunds − payouts not FAILED or CANCELED.
 */
async function expectIdentities(shop: Merchant): Promise<void> {
  const key = shop.test;
  const rows = await statementOf(key);
  const sum = (status: Row['status']) => rows.filter((row) => row.status === status).reduce((total, row) => total + row.net, 0);
  const { available, pending } = await balance(service, key);
  expect({ available: sum('available'), pending: sum('pending') }).toEqual({ available, pending });
  const [money] = await service.db.query<{ charged: string; refunded: string; paid_out: string }>(
    `SELECT (SELECT coalesce(sum(amount - fee), 0) FROM payment_intents WHERE product_id = p.id AND NOT livemode AND status = 'SUCCEEDED')::text AS charged,
            (SELECT coalesce(sum(amount), 0) FROM refunds WHERE product_id = p.id AND NOT livemode AND status = 'SUCCEEDED')::text AS refunded,
            (SELECT coalesce(sum(amount), 0) FROM payouts WHERE product_id = p.id AND NOT livemode AND status NOT IN ('FAILED', 'CANCELED'))::text AS paid_out
       FROM products p WHERE p.id = $1`,
    [shop.productId],
  );
  expect(available + pending).toBe(Number(money!.charged) - Number(money!.refunded) - Number(money!.paid_out));
}

/** Asks for a payout under a new Idempotency-Key, or `idempotencyKey`, or none (null). */
const createPayout = (key: string, body: Record<string, unknown> = {}, idempotencyKey: string | null = idem()) =>
  service.call({ method: 'POST', url: '/v1/payouts', key, body, ...(idempotencyKey === null ? {} : { idempotencyKey }) });
const getPayout = async (key: string, id: string) => (await service.call({ method: 'GET', url: `/v1/payouts/${id}`, key })).body;
const runPayouts = (key: string) => service.call({ method: 'POST', url: '/v1/test_helpers/payouts/run', key });
const cancel = (key: string, id: string) => service.call({ method: 'POST', url: `/v1/payouts/${id}/cancel`, key });

describe('a manual payout', () => {
  let shop: Merchant;
  beforeAll(async () => {
    shop = await service.createMerchant();
  });

  it('needs an Idempotency-Key and a payout account, and changes nothing without them', async () => {
    await makeAvailable(service, shop.test, 5_000_000);
    expect((await createPayout(shop.test, {}, null)).body.code).toBe('IDEMPOTENCY_KEY_REQUIRED');
    const refused = await createPayout(shop.test);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('PAYOUT_ACCOUNT_REQUIRED');
    expect((await service.call({ method: 'GET', url: '/v1/payouts', key: shop.test })).body.data).toEqual([]);
    expect((await balance(service, shop.test)).available).toBe(4_950_000);
  });

  it('takes its amount from the available balance at once, PENDING, with its statement row, then the bank pays it', async () => {
    const accountNumber = await setPayoutAccount(service, shop.productId);
    const created = await createPayout(shop.test, { amount: 1_500_000 });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^po_[0-9A-Za-z]{24}$/),
      object: 'payout',
      amount: 1_500_000,
      status: 'PENDING',
      automatic: false,
      arrivalDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      destination: { bankMfo: '00440', accountLast4: accountNumber.slice(-4) },
      failureCode: null,
      livemode: false,
      created: expect.any(String),
    });
    expect((await balance(service, shop.test)).available).toBe(3_450_000);
    const [row] = await statementOf(shop.test, `&source=${created.body.id}`);
    expect(row).toMatchObject({ type: 'payout', amount: -1_500_000, fee: 0, net: -1_500_000, status: 'available', payout: null });
    await expectIdentities(shop);

    expect(await service.payouts.sendDue(100)).toBeGreaterThanOrEqual(1);
    const paid = await getPayout(shop.test, created.body.id);
    expect(paid.status).toBe('PAID');
    expect(await railOperations(service, created.body.id)).toBe(1);
    expect((await eventsOf(service, created.body.id)).map((event) => event.type)).toEqual(['payout.paid']);
    expect((await balance(service, shop.test)).available).toBe(3_450_000);
    await expectIdentities(shop);
    // Sending again sends nothing: the payout is no longer PENDING.
    await service.payouts.send(created.body.id);
    expect(await railOperations(service, created.body.id)).toBe(1);
  });

  it('answers 409 INSUFFICIENT_BALANCE beyond the available balance, and a replay of its key gets the same answer', async () => {
    const key = idem();
    const refused = await createPayout(shop.test, { amount: 3_450_001 }, key);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'INSUFFICIENT_BALANCE', param: 'amount' });
    expect((await createPayout(shop.test, { amount: 3_450_001 }, key)).text).toBe(refused.text);
    for (const amount of [0, -5, 1.5, '100']) expect((await createPayout(shop.test, { amount })).body.code).toBe('VALIDATION_ERROR');
    expect((await createPayout(shop.test, { amount: 100, currency: 'UZS' })).body).toMatchObject({ code: 'VALIDATION_ERROR', param: 'currency' });
    expect((await balance(service, shop.test)).available).toBe(3_450_000);
  });

  it('is canceled while PENDING, its amount back with a payout_failure row; never once sent', async () => {
    const created = (await createPayout(shop.test)).body;
    expect(created.amount).toBe(3_450_000);
    expect((await balance(service, shop.test)).available).toBe(0);
    const canceled = await cancel(shop.test, created.id);
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ id: created.id, status: 'CANCELED', failureCode: null });
    expect((await balance(service, shop.test)).available).toBe(3_450_000);
    expect((await statementOf(shop.test, `&source=${created.id}`)).map((row) => [row.type, row.net])).toEqual([
      ['payout_failure', 3_450_000],
      ['payout', -3_450_000],
    ]);
    await expectIdentities(shop);
    const again = await cancel(shop.test, created.id);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('PAYOUT_NOT_CANCELABLE');
    await service.payouts.sendDue(100);
    expect(await railOperations(service, created.id)).toBe(0);
    expect((await cancel(shop.test, 'po_missing')).status).toBe(404);
  });

  it("is another product's business: neither read nor canceled with a key of another product", async () => {
    const other = await service.createMerchant();
    const created = (await createPayout(shop.test, { amount: 100 })).body;
    expect((await service.call({ method: 'GET', url: `/v1/payouts/${created.id}`, key: other.test })).status).toBe(404);
    expect((await cancel(other.test, created.id)).status).toBe(404);
    expect((await getPayout(shop.test, created.id)).status).toBe('PENDING');
    expect((await cancel(shop.test, created.id)).body.status).toBe('CANCELED');
  });

  it('is refused 409 PAYOUTS_HELD, saying until when, while a change of the account holds payouts', async () => {
    await setPayoutAccount(service, shop.productId, { held: true });
    const held = await createPayout(shop.test, { amount: 100 });
    expect(held.status).toBe(409);
    expect(held.body.code).toBe('PAYOUTS_HELD');
    expect(held.body.message).toMatch(/until \d{4}-\d{2}-\d{2}T/);
    expect((await runPayouts(shop.test)).body.code).toBe('PAYOUTS_HELD');
    expect((await service.call({ method: 'POST', url: '/v1/test_helpers/payout_account/release_hold', key: shop.test })).status).toBe(200);
    expect((await createPayout(shop.test, { amount: 100 })).status).toBe(201);
  });
});

describe('the automatic payout', () => {
  it('pays out every available transaction not yet paid out, so that its transactions sum to its amount', async () => {
    const shop = await service.createMerchant();
    await setPayoutAccount(service, shop.productId);
    const first = await makeAvailable(service, shop.test, 2_000_000);
    await makeAvailable(service, shop.test, 3_000_000);
    const refundOf = await chargeCard(service, shop.test, '8600000000000007', 500_000);
    await service.payments.settle(-10 * 365 * 86_400, 1_000);
    expect((await service.call({ method: 'POST', url: '/v1/refunds', key: shop.test, idempotencyKey: idem(), body: { paymentIntent: refundOf.id } })).status).toBe(201);
    const manual = (await createPayout(shop.test, { amount: 1_000_000 })).body;
    await expectIdentities(shop);

    const run = await runPayouts(shop.test);
    expect(run.status).toBe(201);
    // 1% fees: 1,980,000 + 2,970,000 + 495,000 − 500,000 (refund) − 1,000,000 (manual payout)
    expect(run.body).toMatchObject({ amount: 3_945_000, automatic: true, status: 'PAID' });
    expect((await getPayout(shop.test, manual.id)).status).toBe('PAID');
    expect((await balance(service, shop.test)).available).toBe(0);
    const covered = await statementOf(shop.test, `&payout=${run.body.id}`);
    expect(covered.reduce((total, row) => total + row.net, 0)).toBe(run.body.amount);
    expect(covered.map((row) => row.type).sort()).toEqual(['charge', 'charge', 'charge', 'payout', 'refund']);
    expect(covered.map((row) => row.source)).toContain(first.id);
    expect(covered.map((row) => row.source)).toContain(manual.id);
    await expectIdentities(shop);

    // Nothing is left to pay out: the next run finds too little; its own row is never paid out again.
    const nothing = await runPayouts(shop.test);
    expect(nothing.status).toBe(409);
    expect(nothing.body.code).toBe('INSUFFICIENT_BALANCE');
    await makeAvailable(service, shop.test, 1_100_000);
    const second = (await runPayouts(shop.test)).body;
    expect(second.amount).toBe(1_089_000);
    expect((await statementOf(shop.test, `&payout=${second.id}`)).map((row) => row.type)).toEqual(['charge']);
    await expectIdentities(shop);
  });

  it('fails ACCOUNT_CLOSED at an account ending 0002: its amount back, paid out by the next payout', async () => {
    const shop = await service.createMerchant();
    await setPayoutAccount(service, shop.productId, { last4: '0002' });
    await makeAvailable(service, shop.test, 2_000_000);
    const failed = (await runPayouts(shop.test)).body;
    expect(failed).toMatchObject({ status: 'FAILED', failureCode: 'ACCOUNT_CLOSED', amount: 1_980_000 });
    expect((await balance(service, shop.test)).available).toBe(1_980_000);
    const events = await eventsOf(service, failed.id);
    expect(events.map((event) => event.type)).toEqual(['payout.failed']);
    expect(events[0]!.data).toMatchObject({ id: failed.id, status: 'FAILED', failureCode: 'ACCOUNT_CLOSED' });
    await expectIdentities(shop);

    await setPayoutAccount(service, shop.productId, { last4: '0001' });
    const next = (await runPayouts(shop.test)).body;
    expect(next).toMatchObject({ status: 'PAID', amount: 1_980_000 });
    const covered = await statementOf(shop.test, `&payout=${next.id}`);
    expect(covered.map((row) => [row.type, row.net])).toEqual([['payout_failure', 1_980_000]]);
    await expectIdentities(shop);
  });

  it('stays IN_TRANSIT at an account ending 0003 until reconciliation finds it paid, and is never sent twice', async () => {
    const shop = await service.createMerchant();
    await setPayoutAccount(service, shop.productId, { last4: '0003' });
    await makeAvailable(service, shop.test, 2_000_000);
    const sent = (await runPayouts(shop.test)).body;
    expect(sent.status).toBe('IN_TRANSIT');
    expect((await cancel(shop.test, sent.id)).body.code).toBe('PAYOUT_NOT_CANCELABLE');
    expect((await balance(service, shop.test)).available).toBe(0);
    await expectIdentities(shop);
    await reconcileNow(service);
    expect((await getPayout(shop.test, sent.id)).status).toBe('PAID');
    expect(await railOperations(service, sent.id)).toBe(1);
    expect((await eventsOf(service, sent.id)).map((event) => event.type)).toEqual(['payout.paid']);
    await expectIdentities(shop);
  });

  it('runs once a day at the payout time in Tashkent, for every product with an account, and not before', async () => {
    const shop = await service.createMerchant();
    await setPayoutAccount(service, shop.productId);
    await makeAvailable(service, shop.test, 2_000_000);
    const today = new Date(Date.now() + 5 * 3_600_000).toISOString().slice(0, 10);
    const at = (time: string) => new Date(Date.parse(`${today}T${time}:00.000+05:00`));
    await service.payouts.runDaily(100, at('09:59'));
    expect((await service.call({ method: 'GET', url: '/v1/payouts', key: shop.test })).body.data).toEqual([]);

    await service.payouts.runDaily(100, at('10:00'));
    const [made] = (await service.call({ method: 'GET', url: '/v1/payouts', key: shop.test })).body.data;
    expect(made).toMatchObject({ automatic: true, amount: 1_980_000, status: 'PAID' });

    await makeAvailable(service, shop.test, 2_000_000);
    await service.payouts.runDaily(100, at('10:01'));
    expect((await service.call({ method: 'GET', url: '/v1/payouts', key: shop.test })).body.data).toHaveLength(1);
    await expectIdentities(shop);
  });

  it('two runs of the same day at once make one payout', async () => {
    const shop = await service.createMerchant();
    await setPayoutAccount(service, shop.productId);
    await makeAvailable(service, shop.test, 2_000_000);
    const noon = new Date(Date.parse(`${new Date(Date.now() + 5 * 3_600_000).toISOString().slice(0, 10)}T12:00:00.000+05:00`));
    await Promise.all([service.payouts.runDaily(100, noon), service.payouts.runDaily(100, noon), service.payouts.runDaily(100, noon)]);
    const payouts = (await service.call({ method: 'GET', url: '/v1/payouts', key: shop.test })).body.data;
    expect(payouts).toHaveLength(1);
    expect(payouts[0]).toMatchObject({ amount: 1_980_000, status: 'PAID' });
    await expectIdentities(shop);
  });

  it('lists with the status filter and pages, and refuses unknown filters', async () => {
    const shop = await service.createMerchant();
    await setPayoutAccount(service, shop.productId);
    await makeAvailable(service, shop.test, 3_000_000);
    const a = (await createPayout(shop.test, { amount: 100 })).body;
    const b = (await createPayout(shop.test, { amount: 200 })).body;
    await cancel(shop.test, a.id);
    const list = (query: string) => service.call({ method: 'GET', url: `/v1/payouts${query}`, key: shop.test });
    expect((await list('')).body.data.map((p: { id: string }) => p.id)).toEqual([b.id, a.id]);
    expect((await list('?status=CANCELED')).body.data.map((p: { id: string }) => p.id)).toEqual([a.id]);
    expect((await list('?limit=1')).body).toMatchObject({ has_more: true, data: [{ id: b.id }] });
    expect((await list(`?limit=1&starting_after=${b.id}`)).body.data.map((p: { id: string }) => p.id)).toEqual([a.id]);
    expect((await list('?status=LOST')).status).toBe(400);
    expect((await list('?limit=101')).status).toBe(400);
  });
});

describe('the test helpers', () => {
  it("settle a product's payments at once, its own alone, and answer 404 to a live key", async () => {
    const shop = await service.createMerchant();
    const other = await service.createMerchant();
    await chargeCard(service, shop.test, '8600000000000007', 1_000_000);
    await chargeCard(service, other.test, '8600000000000007', 1_000_000);
    const settled = await service.call({ method: 'POST', url: '/v1/test_helpers/balance/settle', key: shop.test });
    expect(settled.status).toBe(200);
    expect(settled.body).toEqual({ object: 'balance', available: 990_000, pending: 0, currency: 'UZS', livemode: false });
    expect(await balance(service, other.test)).toMatchObject({ available: 0, pending: 990_000 });
    expect((await statementOf(shop.test)).map((row) => row.status)).toEqual(['available']);
    await expectIdentities(shop);
    for (const url of ['/v1/test_helpers/balance/settle', '/v1/test_helpers/payouts/run']) {
      expect((await service.call({ method: 'POST', url, key: shop.live })).status).toBe(404);
    }
  });
});

describe('a refund and a payout racing for the same available money', () => {
  it('never lets a payout take more than was available when it committed', async () => {
    for (let round = 0; round < 5; round++) {
      const shop = await service.createMerchant();
      await setPayoutAccount(service, shop.productId);
      const intent = await makeAvailable(service, shop.test, 2_000_000);
      const [refund, payout] = await Promise.all([
        service.call({ method: 'POST', url: '/v1/refunds', key: shop.test, idempotencyKey: idem(), body: { paymentIntent: intent.id } }),
        createPayout(shop.test, { amount: 1_980_000 }),
      ]);
      expect(refund.status).toBe(201);
      expect([201, 409]).toContain(payout.status);
      // Oldest first: what was available just before the payout's row is at least what it took.
      const rows = (await statementOf(shop.test)).reverse();
      const payoutAt = rows.findIndex((row) => row.type === 'payout');
      if (payout.status === 201) {
        const before = rows.slice(0, payoutAt).reduce((total, row) => total + row.net, 0);
        expect(before).toBeGreaterThanOrEqual(payout.body.amount);
      } else {
        expect(payout.body.code).toBe('INSUFFICIENT_BALANCE');
        expect(payoutAt).toBe(-1);
      }
      await expectIdentities(shop);
    }
  });

  /** Statements of this database waiting for a lock whose text matches `pattern`. */
  const waiting = async (pattern: string) =>
    (
      await service.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
        [pattern],
      )
    )[0]!.n;

  /**
   * Holds `lock` (a LOCK TABLE statement) in a transaction of its own until `release` is called, which then waits for
   * that transaction to end: whoever needs the table meanwhile waits, where the test wants them.
   */
  async function holdLock(lock: string): Promise<{ release(): Promise<void> }> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const tableLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = service.db.transaction(async (tx) => {
      await tx.query(lock);
      locked();
      await held;
    });
    await tableLocked;
    return {
      async release() {
        release();
        await holder;
      },
    };
  }

  it.skipIf(engine !== 'postgres')('makes a refund wait while a payout that read the balance has not committed', async () => {
    const shop = await service.createMerchant();
    await setPayoutAccount(service, shop.productId);
    const intent = await makeAvailable(service, shop.test, 2_000_000);
    // Holds the payout between its read of the balance and its write, where a refund could slip in.
    const lock = await holdLock('LOCK TABLE payouts IN SHARE ROW EXCLUSIVE MODE');
    const payout = createPayout(shop.test, { amount: 1_980_000 });
    let refund: ReturnType<TestService['call']> | undefined;
    try {
      await waitFor(async () => ((await waiting('%INSERT INTO payouts%')) === 1 ? true : null), 10_000, 'the payout to wait at its write');
      refund = service.call({ method: 'POST', url: '/v1/refunds', key: shop.test, idempotencyKey: idem(), body: { paymentIntent: intent.id } });
      await waitFor(async () => ((await waiting('%pg_advisory_xact_lock_shared%')) === 1 ? true : null), 5_000, 'the refund to wait for the payout');
    } finally {
      await lock.release();
    }
    expect((await payout).status).toBe(201);
    expect((await refund!).status).toBe(201);
    const rows = (await statementOf(shop.test)).reverse();
    expect(rows.map((row) => row.type)).toEqual(['charge', 'payout', 'refund']);
    expect((await balance(service, shop.test)).available).toBe(-2_000_000);
    await expectIdentities(shop);
  });

  it.skipIf(engine !== 'postgres')('lists a refund that began before a payout but took the balance after it, after it', async () => {
    const shop = await service.createMerchant();
    await setPayoutAccount(service, shop.productId);
    const intent = await makeAvailable(service, shop.test, 2_000_000);
    // Holds the refund's recording transaction once it has begun, before it posts; the payout does not write intents.
    const lock = await holdLock('LOCK TABLE payment_intents IN SHARE MODE');
    let payout: Awaited<ReturnType<typeof createPayout>> | undefined;
    const refund = service.call({ method: 'POST', url: '/v1/refunds', key: shop.test, idempotencyKey: idem(), body: { paymentIntent: intent.id } });
    try {
      await waitFor(async () => ((await waiting('%UPDATE payment_intents%')) === 1 ? true : null), 10_000, 'the refund to wait in its recording');
      payout = await createPayout(shop.test, { amount: 1_980_000 });
    } finally {
      await lock.release();
    }
    expect(payout.status).toBe(201);
    expect((await refund).status).toBe(201);
    const rows = (await statementOf(shop.test)).reverse();
    expect(rows.map((row) => row.type)).toEqual(['charge', 'payout', 'refund']);
    await expectIdentities(shop);
  });
});
