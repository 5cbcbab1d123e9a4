// `tolov trigger payout.paid` and `tolov trigger payout.failed`: the day's automatic payout made now, in test mode, to
// the product's test payout account. Only the dashboard sets that account (no API key can redirect money), so the
// command reads it and, when it cannot lead to the event asked for, says what to set there instead.
import { setTimeout as sleep } from 'node:timers/promises';
import { TolovError, type Payout, type PayoutAccount, type Tolov } from '@tolov/node';

/** The test bank refuses an account ending so (ACCOUNT_CLOSED); it pays any other. */
const CLOSED_LAST4 = '0002';
/** Valid test accounts of MFO 00440 (the 9th digit is the check key): one paid, one closed. */
const PAID_EXAMPLE = 'MFO 00440, account 20208000905368520001';
const CLOSED_EXAMPLE = 'MFO 00440, account 20208000905368520002';
/** TOLOV_PAYOUT_MIN's default, in tiyin, for a service whose refusal does not name its own. */
const PAYOUT_MIN_DEFAULT = 1_000_000;
/** Test orders paid to reach the minimum, at most; each pays the shortfall and 5% more, for Tolov's fee. */
const TOP_UPS_MAX = 3;
const FEE_HEADROOM = 1.05;
/** A payout to an account ending 0003 waits IN_TRANSIT for reconciliation (every 30 s by default, after a 15 s window). */
const IN_TRANSIT_WAIT_MS = 120_000;
const IN_TRANSIT_POLL_MS = 1_000;

/** What the user has to set up before the event can be caused: said as is, exit status 1. */
export class SetupNeeded extends Error {}

export type PayoutOutcome = 'PAID' | 'FAILED';

/**
 * Causes `payout.paid` or `payout.failed` (as `outcome`): checks the test payout account, ends a hold on it, makes the
 * minimum available by paying test orders with `sell` if needed, and runs the automatic payout. Returns its id once the
 * test bank has settled it.
 */
export async function triggerPayout(tolov: Tolov, outcome: PayoutOutcome, sell: (amount: number) => Promise<unknown>): Promise<string> {
  const account = await testAccount(tolov, outcome);
  if (account.payoutsHeldUntil !== null) {
    await tolov.testHelpers.payoutAccount.releaseHold();
    note(`payouts were held until ${account.payoutsHeldUntil} after a change of the account; the hold is ended (test mode)`);
  }
  const payout = await settled(tolov, await runPayout(tolov, sell));
  if (payout.status !== outcome) throw new Error(`${payout.id} ended ${payout.status}${payout.failureCode ? ` (${payout.failureCode})` : ''}, not ${outcome}`);
  return payout.id;
}

/** The product's test payout account, when its number leads to `outcome`; otherwise what to set in the dashboard. */
async function testAccount(tolov: Tolov, outcome: PayoutOutcome): Promise<PayoutAccount> {
  const event = outcome === 'PAID' ? 'payout.paid' : 'payout.failed';
  const account = await tolov.payoutAccount.retrieve().catch((error: unknown) => {
    if (error instanceof TolovError && error.code === 'NOT_FOUND') return null;
    throw error;
  });
  if (account === null) {
    throw new SetupNeeded(
      `${event} needs a test payout account, which only the dashboard sets (no API key can redirect money): in the dashboard, ` +
        `test mode, open Payout account and set one. Any valid account is paid (${PAID_EXAMPLE}); ` +
        `an account ending ${CLOSED_LAST4} makes payouts fail (${CLOSED_EXAMPLE}).`,
    );
  }
  const closed = account.accountLast4 === CLOSED_LAST4;
  if (outcome === 'PAID' && closed) {
    throw new SetupNeeded(
      `the test payout account ends ${CLOSED_LAST4}, which the test bank refuses: payouts to it fail (payout.failed). ` +
        `For payout.paid, set another account in the dashboard (test mode, Payout account), e.g. ${PAID_EXAMPLE}; tolov trigger ends the hold the change starts.`,
    );
  }
  if (outcome === 'FAILED' && !closed) {
    throw new SetupNeeded(
      `the test payout account ends ${account.accountLast4}, so payouts to it are paid (payout.paid). ` +
        `For payout.failed, set an account ending ${CLOSED_LAST4} in the dashboard (test mode, Payout account), e.g. ${CLOSED_EXAMPLE}; tolov trigger ends the hold the change starts.`,
    );
  }
  return account;
}

/** The automatic payout made now; when too little is available for it, test orders are paid first to reach the minimum. */
async function runPayout(tolov: Tolov, sell: (amount: number) => Promise<unknown>): Promise<Payout> {
  try {
    return await tolov.testHelpers.payouts.run();
  } catch (error) {
    if (!(error instanceof TolovError) || error.code !== 'INSUFFICIENT_BALANCE') throw error;
    await makeAvailable(tolov, minimumIn(error.message), sell);
    return tolov.testHelpers.payouts.run();
  }
}

/** The service's minimum as its refusal states it (TOLOV_PAYOUT_MIN), else the default. */
function minimumIn(message: string): number {
  const stated = /minimum of (\d+)/.exec(message)?.[1];
  return stated === undefined ? PAYOUT_MIN_DEFAULT : Number(stated);
}

/** Settles what is pending and pays test orders until at least `minimum` tiyin is available (TOP_UPS_MAX orders at most). */
async function makeAvailable(tolov: Tolov, minimum: number, sell: (amount: number) => Promise<unknown>): Promise<void> {
  for (let sold = 0; ; sold++) {
    const { available } = await tolov.testHelpers.balance.settle();
    if (available >= minimum) return;
    if (sold === TOP_UPS_MAX) throw new Error(`${available} tiyin is available after ${sold} test orders, still below the payout minimum of ${minimum}`);
    await sell(Math.ceil((minimum - available) * FEE_HEADROOM));
  }
}

/** The payout once the bank's answer is known: at once, or after reconciliation for an account ending 0003. */
async function settled(tolov: Tolov, payout: Payout): Promise<Payout> {
  if (payout.status !== 'IN_TRANSIT') return payout;
  note(`${payout.id} is IN_TRANSIT: the test bank's answer was unclear (an account ending 0003); waiting for reconciliation`);
  const deadline = Date.now() + IN_TRANSIT_WAIT_MS;
  for (;;) {
    await sleep(IN_TRANSIT_POLL_MS);
    const now = await tolov.payouts.retrieve(payout.id);
    if (now.status !== 'IN_TRANSIT') return now;
    if (Date.now() >= deadline) throw new Error(`${payout.id} is still IN_TRANSIT after ${IN_TRANSIT_WAIT_MS / 1000} s; its event comes once reconciliation settles it`);
  }
}

function note(text: string): void {
  process.stderr.write(`tolov: ${text}\n`);
}
