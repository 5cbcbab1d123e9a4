// Payouts with the Node SDK against a running service: a manual payout made, read, listed and canceled; the test
// helpers that settle the balance and run the day's automatic payout; the statement rows that add up to it; the
// refusals as typed errors; and a payout event narrowed to the payout by its type.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Tolov, { TolovError, type Payout } from '../../packages/node/src/index.js';
import { startService, type TestService } from '../support/harness.js';
import { setPayoutAccount } from '../support/payouts.js';

let service: TestService;
let base: string;
beforeAll(async () => {
  service = await startService({ TOLOV_PAYOUT_MIN: '1000000' });
  base = await service.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => service.stop());

/** A new product's SDK client (1% fee), with a test payout account ending `last4` unless null, and `paid` available. */
async function shop(options: { last4?: string | null; paid?: number } = {}): Promise<{ tolov: Tolov; productId: string }> {
  const merchant = await service.createMerchant({ name: 'Payout Shop', feeBps: 100 });
  if (options.last4 !== null) await setPayoutAccount(service, merchant.productId, { last4: options.last4 ?? '0001' });
  const tolov = new Tolov(merchant.test, { baseUrl: base });
  if (options.paid !== undefined) {
    const binding = await tolov.cardBindings.create({ customerRef: 'customer-1' });
    const { card } = await tolov.testHelpers.cardBindings.complete(binding.id);
    await tolov.charges.create({ amount: options.paid, card: card! });
    await tolov.testHelpers.balance.settle();
  }
  return { tolov, productId: merchant.productId };
}

const refusal = (promise: Promise<unknown>) => promise.then(() => null, (error: unknown) => (error instanceof TolovError ? error.code : error));

describe('payouts with the Node SDK', () => {
  it('pays out by hand, reads, lists and cancels, with typed answers', async () => {
    const { tolov } = await shop({ paid: 5_000_000 });
    expect(await tolov.balance.retrieve()).toMatchObject({ available: 4_950_000, pending: 0 });
    const payout = await tolov.payouts.create({ amount: 1_500_000 });
    // Typed as the API describes it: a wrong field or status would not compile.
    const shown: { status: Payout['status']; amount: number; automatic: boolean; last4: string } = {
      status: payout.status,
      amount: payout.amount,
      automatic: payout.automatic,
      last4: payout.destination.accountLast4,
    };
    expect(shown).toEqual({ status: 'PENDING', amount: 1_500_000, automatic: false, last4: '0001' });
    expect(await tolov.payouts.retrieve(payout.id)).toEqual(payout);
    const rest = await tolov.payouts.create();
    expect(rest.amount).toBe(3_450_000);
    expect((await tolov.payouts.cancel(rest.id)).status).toBe('CANCELED');
    expect(await refusal(tolov.payouts.cancel(rest.id))).toBe('PAYOUT_NOT_CANCELABLE');
    expect(await refusal(tolov.payouts.create({ amount: 3_450_001 }))).toBe('INSUFFICIENT_BALANCE');
    const listed: string[] = [];
    for await (const each of tolov.payouts.list({ limit: 1 })) listed.push(each.id);
    expect(listed).toEqual([rest.id, payout.id]);
    expect((await tolov.payouts.list({ status: 'CANCELED' })).data.map((each) => each.id)).toEqual([rest.id]);
  });

  it("runs the day's automatic payout in test mode, whose statement rows sum to it", async () => {
    const { tolov } = await shop({ paid: 3_000_000 });
    const manual = await tolov.payouts.create({ amount: 1_000_000 });
    const automatic = await tolov.testHelpers.payouts.run();
    expect(automatic).toMatchObject({ automatic: true, status: 'PAID', amount: 1_970_000 });
    expect((await tolov.payouts.retrieve(manual.id)).status).toBe('PAID');
    let sum = 0;
    for await (const row of tolov.balanceTransactions.list({ payout: automatic.id })) sum += row.net;
    expect(sum).toBe(automatic.amount);
    expect(await refusal(tolov.testHelpers.payouts.run())).toBe('INSUFFICIENT_BALANCE');
  });

  it('reads the payout account, ends its hold in test mode, and refuses without one', async () => {
    const held = await shop();
    await setPayoutAccount(service, held.productId, { held: true });
    expect((await held.tolov.payoutAccount.retrieve()).payoutsHeldUntil).not.toBeNull();
    expect(await refusal(held.tolov.payouts.create({ amount: 100 }))).toBe('PAYOUTS_HELD');
    expect(await held.tolov.testHelpers.payoutAccount.releaseHold()).toMatchObject({ object: 'payout_account', accountLast4: '0001', payoutsHeldUntil: null });

    const none = await shop({ last4: null, paid: 2_000_000 });
    expect(await refusal(none.tolov.payoutAccount.retrieve())).toBe('NOT_FOUND');
    expect(await refusal(none.tolov.testHelpers.payouts.run())).toBe('PAYOUT_ACCOUNT_REQUIRED');
  });

  it('verifies a payout.failed event, whose type narrows it to the payout', async () => {
    const { tolov } = await shop({ last4: '0002', paid: 2_000_000 });
    const failed = await tolov.testHelpers.payouts.run();
    const [stored] = (await tolov.events.list({ type: 'payout.failed', objectId: failed.id })).data;
    const secret = 'whsec_cGF5b3V0cy10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5';
    const body = JSON.stringify(stored);
    const event = tolov.webhooks.constructEvent(body, tolov.webhooks.signedHeaders(body, secret), secret);
    if (event.type !== 'payout.failed') throw new Error(`expected payout.failed, got ${event.type}`);
    const failure: { code: string | null; amount: number; status: Payout['status'] } = { code: event.data.failureCode, amount: event.data.amount, status: event.data.status };
    expect(failure).toEqual({ code: 'ACCOUNT_CLOSED', amount: 1_980_000, status: 'FAILED' });
    expect((await tolov.balance.retrieve()).available).toBe(1_980_000);
  });
});
