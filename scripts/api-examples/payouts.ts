// Where money goes and how the balance moved: the statement read with the story's shop's key; then an owner who signs
// up in the dashboard, turns the second factor on and sets the payout account (announced by payout_account.updated),
// changes it (which holds payouts for a day) and, in test mode, ends the hold; then that owner's product is paid, pays
// out by hand (one payout kept, one canceled) and runs the day's automatic payout, whose statement rows sum to it; last,
// a payout to a closed account fails.
import { randomUUID } from 'node:crypto';
import { codeNow } from '../../src/modules/accounts/second-factor.js';
import { DashboardClient, turnOnSecondFactor } from '../../test/dashboard/client.js';
import type { RecordingTarget } from './record.js';
import { Recorder } from './recorder.js';
import type { Shop } from './scenarios.js';

const ok = Recorder.expect;
export const OWNER = 'owner@chorsu-market.example.uz';
const HOLDER = { bankMfo: '00440', tin: '301234567', holderName: '"Chorsu Market" MChJ' };
/** Accounts of MFO 00440 (each 9th digit is its check key): the first, the one it is changed to, and a closed one (0002). */
const ACCOUNTS = [
  { ...HOLDER, accountNumber: '20208000505368522001' },
  { ...HOLDER, accountNumber: '20208000705368522002' },
];
const CLOSED_ACCOUNT = { ...HOLDER, accountNumber: '20208000905368520002' };

/** The dashboard owner of the payouts' story: their page session, authenticator seed and test key. */
export interface Owner {
  client: DashboardClient;
  seed: string;
  key: string;
}

export async function balanceMovesAreListed(s: Recorder, shop: Shop): Promise<void> {
  // The statement's example is an automatic payout's rows (payoutsAreMade), which a merchant reconciles.
  const [first] = ok(await s.call({ method: 'GET', url: '/v1/balance_transactions?limit=3', key: shop.test, example: false }), 200, 'statement').body.data;
  ok(await s.call({ method: 'GET', url: `/v1/balance_transactions/${first.id}`, key: shop.test }), 200, 'balance transaction');
}

/** The code the owner's authenticator shows next: each 30-second step's code works once, so each change waits for the next. */
export async function freshCode(s: Recorder, owner: Owner): Promise<string> {
  await s.db.query('UPDATE users SET totp_last_step = NULL WHERE email = $1', [OWNER]);
  return codeNow(owner.seed);
}

/** Sets the test payout account in the dashboard, as the owner does, with a fresh authenticator code. */
async function setAccount(s: Recorder, owner: Owner, account: (typeof ACCOUNTS)[number]): Promise<void> {
  const saved = await owner.client.post('/dashboard/payout-account', { ...account, code: await freshCode(s, owner), idempotencyKey: randomUUID() });
  if (saved.status >= 400) throw new Error(`the payout account was refused (${saved.status})`);
}

const payout = (s: Recorder, key: string, idempotencyKey: string, amount?: number) =>
  s.call({ method: 'POST', url: '/v1/payouts', key, idempotencyKey, body: amount === undefined ? {} : { amount } });
const runPayouts = (s: Recorder, key: string) => s.call({ method: 'POST', url: '/v1/test_helpers/payouts/run', key });

/** Orders of the owner's product paid with a test card, and settled at once: their net is available. */
async function sell(s: Recorder, key: string, orders: Array<{ number: number; amount: number; description: string }>): Promise<void> {
  for (const { number, amount, description } of orders) {
    const body = { amount, description, returnUrl: `https://chorsu-market.example.uz/orders/${number}/done` };
    const order = ok(await s.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: `order-${number}`, body }), 201, 'order').body;
    ok(await s.call({ method: 'POST', url: `/v1/test_helpers/orders/${order.id}/pay`, key, body: {} }), 200, 'pay');
  }
  ok(await s.call({ method: 'POST', url: '/v1/test_helpers/balance/settle', key }), 200, 'settle');
}

/** The last event of `type` about `objectId`, as the event examples show it. */
async function recordEvent(s: Recorder, key: string, type: string, objectId: string): Promise<void> {
  const [event] = ok(await s.call({ method: 'GET', url: `/v1/events?type=${type}&objectId=${objectId}&limit=1`, key, example: false }), 200, type).body.data;
  if (!event) throw new Error(`no ${type} about ${objectId}`);
  s.examples.events[type] = event;
}

/** The owner signs up, sets the account and changes it; payouts wait for the hold, which the test helper ends. */
export async function payoutAccountIsSet(s: Recorder, target: Pick<RecordingTarget, 'app' | 'mailbox'>): Promise<Owner> {
  const client = new DashboardClient(target);
  await client.signUp(OWNER);
  const seed = await turnOnSecondFactor(client);
  const key = /id="new-key">(sk_test_\w+)</.exec((await client.post('/dashboard/api-keys', {})).html)?.[1];
  if (!key) throw new Error('no test key was shown');
  const owner = { client, seed, key };
  await payout(s, key, 'payout-before-account', 100_000);
  for (const account of ACCOUNTS) await setAccount(s, owner, account);
  ok(await s.call({ method: 'GET', url: '/v1/payout_account', key }), 200, 'payout account');
  await payout(s, key, 'payout-while-held', 100_000);
  await runPayouts(s, key);
  const released = ok(await s.call({ method: 'POST', url: '/v1/test_helpers/payout_account/release_hold', key }), 200, 'release hold').body;
  await recordEvent(s, key, 'payout_account.updated', released.id);
  return owner;
}

/**
 * Two orders paid (31,680.00 and 17,820.00 so'm net at 1%), a manual payout of 10,000.00 so'm kept and one of 5,000.00
 * canceled; then the automatic payout pays out the rest, 39,500.00, and its statement rows sum to it. Last, the account
 * is changed to a closed one (0002), and the next automatic payout fails there, its amount back.
 */
export async function payoutsAreMade(s: Recorder, owner: Owner): Promise<void> {
  const { key } = owner;
  await sell(s, key, [
    { number: 2001, amount: 3_200_000, description: 'Saffron, 100 g' },
    { number: 2002, amount: 1_800_000, description: 'Dried barberries, 1 kg' },
  ]);
  const manual = ok(await payout(s, key, 'payout-2026-11-27', 1_000_000), 201, 'payout').body;
  ok(await s.call({ method: 'GET', url: `/v1/payouts/${manual.id}`, key }), 200, 'payout');
  const dropped = ok(await payout(s, key, 'payout-2026-11-27-b', 500_000), 201, 'payout').body;
  ok(await s.call({ method: 'POST', url: `/v1/payouts/${dropped.id}/cancel`, key, idempotencyKey: 'payout-2026-11-27-b-cancel' }), 200, 'cancel');
  await s.call({ method: 'POST', url: `/v1/payouts/${dropped.id}/cancel`, key, idempotencyKey: 'payout-2026-11-27-b-cancel-again' });
  await payout(s, key, 'payout-too-much', 100_000_000);

  const automatic = ok(await runPayouts(s, key), 201, 'automatic payout').body;
  ok(await s.call({ method: 'GET', url: '/v1/payouts?limit=3', key }), 200, 'payouts');
  ok(await s.call({ method: 'GET', url: `/v1/balance_transactions?payout=${automatic.id}`, key }), 200, 'its statement');
  await recordEvent(s, key, 'payout.paid', automatic.id);
  await runPayouts(s, key);

  await setAccount(s, owner, CLOSED_ACCOUNT);
  ok(await s.call({ method: 'POST', url: '/v1/test_helpers/payout_account/release_hold', key }), 200, 'release hold');
  await sell(s, key, [{ number: 2003, amount: 1_500_000, description: 'Pistachios, 500 g' }]);
  const failed = ok(await runPayouts(s, key), 201, 'failed payout').body;
  await recordEvent(s, key, 'payout.failed', failed.id);
}
