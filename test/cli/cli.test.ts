// The `tolov` command as a developer runs it from the repository (npm run tolov --): every event caused in test mode,
// receipts' included (their events come from the fiscalization worker, run here as the service runs it), payouts'
// to the test payout account only the dashboard sets, events listed and resent, and refusals that say what to do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTolov } from '../support/cli.js';
import { startService, type Merchant, type TestService } from '../support/harness.js';
import { balance } from '../support/payments.js';
import { setPayoutAccount } from '../support/payouts.js';

/** The fiscalization worker's interval in the service. */
const FISCALIZATION_INTERVAL_MS = 500;

let service: TestService;
let merchant: Merchant;
let base: string;
let fiscalization: NodeJS.Timeout;
/** The worker's batches, one after the other; the last is awaited before the service stops. */
let fiscalizing: Promise<unknown> = Promise.resolve();
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
  merchant = await service.createMerchant();
  base = await service.app.listen({ port: 0, host: '127.0.0.1' });
  // The harness runs no workers; this one registers receipts as the service's does.
  fiscalization = setInterval(() => (fiscalizing = fiscalizing.then(() => service.receipts.fiscalizeDue(32))), FISCALIZATION_INTERVAL_MS);
});
afterAll(async () => {
  clearInterval(fiscalization);
  await fiscalizing;
  await service.stop();
});

const tolov = (args: string[], env: Record<string, string> = {}) => runTolov(args, { key: merchant.test, base }, env);

describe('tolov', () => {
  it('triggers each of the nine events in test mode, failures and holds included', async () => {
    const expected: Record<string, Record<string, unknown>> = {
      'order.paid': { status: 'paid' },
      'order.failed': { status: 'failed', failureCode: 'INSUFFICIENT_FUNDS' },
      'order.expired': { status: 'expired' },
      'payment_intent.succeeded': { status: 'succeeded' },
      'payment_intent.failed': { status: 'failed', failureCode: 'INSUFFICIENT_FUNDS' },
      'payment_intent.requires_capture': { status: 'requires_capture', captureMethod: 'manual', amountCapturable: 990_000 },
      'payment_intent.hold_released': { status: 'canceled', captureMethod: 'manual', amountCapturable: 0 },
      'receipt.fiscalized': { object: 'receipt', type: 'sale', status: 'fiscalized', terminalId: expect.stringMatching(/^TEST/), failureCode: null },
      'receipt.failed': { object: 'receipt', type: 'sale', status: 'failed', failureCode: 'INVALID_CODE', terminalId: null },
    };
    for (const [type, data] of Object.entries(expected)) {
      const result = await tolov(['trigger', type, '--json']);
      expect(result.code, result.stderr).toBe(0);
      const printed = JSON.parse(result.stdout);
      expect(printed.type).toBe(type);
      const event = await service.call({ method: 'GET', url: `/v1/events/${printed.event}`, key: merchant.test });
      expect(event.body.type).toBe(type);
      expect(event.body.data.id).toBe(printed.object);
      const status = String(event.body.data.status).toLowerCase();
      expect({ ...event.body.data, status }).toMatchObject(data);
    }
  }, 120_000);

  it('lists and resends events', async () => {
    const triggered = JSON.parse((await tolov(['trigger', 'order.expired', '--json'])).stdout);
    const listed = await tolov(['events', 'list', '--type', 'order.expired', '--limit', '1']);
    expect(listed.stdout).toContain(`${triggered.event}  order.expired`);
    const endpoint = await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: merchant.test, body: { url: 'http://127.0.0.1:9/cli' } });
    const resent = await tolov(['events', 'resend', triggered.event, '--endpoint', endpoint.body.id]);
    expect(resent.code, resent.stderr).toBe(0);
    expect(resent.stdout).toMatch(new RegExp(`^wd_\\w+: order\\.expired ${triggered.event} to ${endpoint.body.id}, pending`));
  }, 60_000);

  it('says what to do when it cannot', async () => {
    expect(await tolov(['trigger', 'order.paid'], { TOLOV_API_KEY: '' })).toMatchObject({ code: 2, stderr: 'tolov: no API key: set TOLOV_API_KEY or pass --api-key sk_test_…\n' });
    expect(await tolov(['trigger', 'order.paid', '--api-key', merchant.live])).toMatchObject({ code: 2, stderr: expect.stringContaining('test mode only') });
    expect(await tolov(['trigger', 'refund.made'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        'tolov trigger takes one of: order.paid, order.failed, order.expired, payment_intent.succeeded, payment_intent.failed, payment_intent.requires_capture, payment_intent.hold_released, receipt.fiscalized, receipt.failed, payout.paid, payout.failed',
      ),
    });
    expect(await tolov(['events', 'resend', 'evt_missing', '--endpoint', 'we_missing'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/^tolov: NOT_FOUND: No such event \(req_\w+\)/) });
    expect(await tolov(['trigger', 'order.paid', '--api-base', 'http://127.0.0.1:9'])).toMatchObject({ code: 1, stderr: expect.stringContaining('no answer from http://127.0.0.1:9') });
    expect((await tolov(['--version'])).stdout).toBe('0.1.0\n');
    expect((await tolov(['--help'])).stdout).toMatch(/receipt\.fiscalized \(an order paid with fiscal lines\), receipt\.failed/);
    expect((await tolov(['--help'])).stdout).toMatch(/payment_intent\.requires_capture \(a saved card's amount held\),\s+payment_intent\.hold_released/);
  }, 120_000);
});

describe('tolov trigger payout.paid and payout.failed', () => {
  /** The event `tolov trigger <type> --json` printed, as the API reads it. */
  async function triggered(key: string, type: string) {
    const result = await tolov(['trigger', type, '--json'], { TOLOV_API_KEY: key });
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout);
    const event = (await service.call({ method: 'GET', url: `/v1/events/${printed.event}`, key })).body;
    expect(event).toMatchObject({ type, data: { id: printed.object, object: 'payout', automatic: true } });
    return { event, stderr: result.stderr };
  }

  it('says to set a test payout account in the dashboard when there is none', async () => {
    const shop = await service.createMerchant();
    const result = await tolov(['trigger', 'payout.paid'], { TOLOV_API_KEY: shop.test });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^tolov: payout\.paid needs a test payout account, which only the dashboard sets/);
    expect(result.stderr).toMatch(/test mode, open Payout account[\s\S]*ending 0002 makes payouts fail/);
  });

  it('fails a payout at an account ending 0002, after paying a test order to reach the minimum, and refuses payout.paid there', async () => {
    const shop = await service.createMerchant();
    await setPayoutAccount(service, shop.productId, { last4: '0002' });
    const refused = await tolov(['trigger', 'payout.paid'], { TOLOV_API_KEY: shop.test });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/ends 0002, which the test bank refuses[\s\S]*For payout\.paid, set another account in the dashboard \(test mode, Payout account\)/);

    const { event } = await triggered(shop.test, 'payout.failed');
    expect(event.data).toMatchObject({ status: 'FAILED', failureCode: 'ACCOUNT_CLOSED', amount: 1_039_500 });
    // One order of the shortfall and 5% paid it; the failed payout gave it back.
    expect(await balance(service, shop.test)).toMatchObject({ available: 1_039_500, pending: 0 });
    expect((await triggered(shop.test, 'payout.failed')).event.data.amount).toBe(1_039_500);
  }, 60_000);

  it('pays a payout at any other account, ending the hold a change put on it, and refuses payout.failed there', async () => {
    const shop = await service.createMerchant();
    await setPayoutAccount(service, shop.productId, { last4: '0001', held: true });
    const refused = await tolov(['trigger', 'payout.failed'], { TOLOV_API_KEY: shop.test });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/ends 0001, so payouts to it are paid[\s\S]*For payout\.failed, set an account ending 0002/);

    const { event, stderr } = await triggered(shop.test, 'payout.paid');
    expect(event.data).toMatchObject({ status: 'PAID', failureCode: null, destination: { accountLast4: '0001' } });
    expect(stderr).toMatch(/payouts were held until .* the hold is ended \(test mode\)/);
    expect((await service.call({ method: 'GET', url: '/v1/payout_account', key: shop.test })).body.payoutsHeldUntil).toBeNull();
    expect((await balance(service, shop.test)).available).toBe(0);
  }, 60_000);

  it('waits for reconciliation when the test bank leaves a payout IN_TRANSIT (an account ending 0003)', async () => {
    const shop = await service.createMerchant();
    await setPayoutAccount(service, shop.productId, { last4: '0003' });
    // The harness runs no reconciler: this one settles payouts sent 5 s ago or more, as the service's would after its
    // (longer) window. One sent just now may still be in its payout run: reconciled then, it would be fenced instead.
    const reconcileSent = async () => {
      await service.db.query(`UPDATE payouts SET next_attempt_at = now() WHERE status = 'IN_TRANSIT' AND sent_at < now() - interval '5 seconds'`);
      await service.payouts.reconcile(100);
    };
    let reconciling: Promise<void> = Promise.resolve();
    const reconciler = setInterval(() => (reconciling = reconciling.then(reconcileSent)), 500);
    try {
      const { event, stderr } = await triggered(shop.test, 'payout.paid');
      expect(event.data.status).toBe('PAID');
      expect(stderr).toMatch(/IN_TRANSIT: the test bank's answer was unclear \(an account ending 0003\); waiting for reconciliation/);
    } finally {
      clearInterval(reconciler);
      await reconciling;
    }
  }, 60_000);
});
