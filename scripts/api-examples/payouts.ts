// Where money goes and how the balance moved: the statement read with the story's shop's key, then an owner who signs
// up in the dashboard, turns the second factor on and sets the payout account (announced by payout_account.updated),
// changes it (which holds payouts for a day) and, in test mode, ends the hold.
import { randomUUID } from 'node:crypto';
import { codeNow } from '../../src/modules/accounts/second-factor.js';
import { DashboardClient } from '../../test/dashboard/client.js';
import type { RecordingTarget } from './record.js';
import { Recorder } from './recorder.js';
import type { Shop } from './scenarios.js';

const ok = Recorder.expect;
const OWNER = 'owner@chorsu-market.example.uz';
/** MFO 00440 with this account is valid (its 9th digit is its check key); the second is another account of it. */
const ACCOUNTS = [
  { bankMfo: '00440', accountNumber: '20208000505368522001', tin: '301234567', holderName: '"Chorsu Market" MChJ' },
  { bankMfo: '00440', accountNumber: '20208000705368522002', tin: '301234567', holderName: '"Chorsu Market" MChJ' },
];

export async function balanceMovesAreListed(s: Recorder, shop: Shop): Promise<void> {
  const [first] = ok(await s.call({ method: 'GET', url: '/v1/balance_transactions?limit=3', key: shop.test }), 200, 'statement').body.data;
  ok(await s.call({ method: 'GET', url: `/v1/balance_transactions/${first.id}`, key: shop.test }), 200, 'balance transaction');
}

/** The owner's authenticator, set up from the page that shows its seed. */
async function turnSecondFactorOn(client: DashboardClient): Promise<string> {
  const setup = await client.post('/dashboard/account/second-factor/begin', {});
  const seed = /<code id="seed">([A-Z2-7]+)<\/code>/.exec(setup.html)?.[1];
  const sealed = /name="seed" value="([^"]+)"/.exec(setup.html)?.[1];
  if (!seed || !sealed) throw new Error('the second factor set-up page changed');
  if ((await client.post('/dashboard/account/second-factor/enable', { seed: sealed, code: codeNow(seed) })).status !== 200) throw new Error('second factor refused');
  return seed;
}

export async function payoutAccountIsSet(s: Recorder, target: Pick<RecordingTarget, 'app' | 'mailbox'>): Promise<void> {
  const client = new DashboardClient(target);
  await client.signUp(OWNER);
  const seed = await turnSecondFactorOn(client);
  const key = /id="new-key">(sk_test_\w+)</.exec((await client.post('/dashboard/api-keys', {})).html)?.[1];
  if (!key) throw new Error('no test key was shown');
  for (const account of ACCOUNTS) {
    // Each 30-second step's code works once: the next change waits for the app's next code, as a person would.
    await s.db.query('UPDATE users SET totp_last_step = NULL WHERE email = $1', [OWNER]);
    const saved = await client.post('/dashboard/payout-account', { ...account, code: codeNow(seed), idempotencyKey: randomUUID() });
    if (saved.status >= 400) throw new Error(`the payout account was refused (${saved.status})`);
  }
  ok(await s.call({ method: 'GET', url: '/v1/payout_account', key }), 200, 'payout account');
  ok(await s.call({ method: 'POST', url: '/v1/test_helpers/payout_account/release_hold', key }), 200, 'release hold');
  const [event] = ok(await s.call({ method: 'GET', url: '/v1/events?type=payout_account.updated&limit=1', key, example: false }), 200, 'announced').body.data;
  s.examples.events['payout_account.updated'] = event;
}
