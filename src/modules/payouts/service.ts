// Payouts: where a product's money goes, and how it gets there. The payout account is set only from the dashboard, by
// an owner who proves the second factor at the change (a stolen API key or session alone cannot redirect money); every
// setting is audited and announced by `payout_account.updated`, and a change of an account already set holds payouts
// for a day. A payout takes its amount from the available balance when it is made (PENDING), is sent to the bank as a
// transfer with the phases of a debit (recorded IN_TRANSIT → sent under a deadline → outcome recorded once, or fenced
// and reconciled when unclear), and ends PAID, or FAILED with its amount back; a PENDING one can be CANCELED.
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import { ApiError, notFound } from '../../core/errors.js';
import type { Answer, Commands, Invocation } from '../../core/commands.js';
import { nextDay, tashkentDay, tashkentInstant } from '../../core/calendar.js';
import { newId } from '../../core/ids.js';
import { listPage, type List, type ListFilter } from '../../core/pagination.js';
import type { Rails } from '../../rails/index.js';
import type { RailOutcome } from '../../rails/rail.js';
import { reconcileBatch } from '../../rails/reconciliation.js';
import type { LedgerService } from '../ledger/service.js';
import type { EventRecorder } from '../webhooks/service.js';
import { accountKeyValid } from './account-number.js';
import type { CreatePayoutBody, Payout, PayoutAccount, PayoutAccountInput, PayoutsQuery } from './schema.js';
import * as store from './store.js';
import type { PayoutAccountRow, PayoutRow } from './store.js';

/** Pages of the payouts sent to the bank in [from, to), by id: what reconciliation compares with the bank's transfers. */
export { transfersBetween } from './store.js';

/** How long payouts wait after a change of the account: long enough for its owners to see the mail and the event. */
export const ACCOUNT_CHANGE_HOLD_SECONDS = 24 * 3600;
/** A live payout waits this long before it is tried again when live mode has no bank gateway configured. */
const NO_RAIL_RETRY_MS = 5 * 60_000;

export function presentAccount(row: PayoutAccountRow): PayoutAccount {
  return {
    id: row.id,
    object: 'payout_account',
    bankMfo: row.bank_mfo,
    accountLast4: row.account_number.slice(-4),
    tin: row.tin,
    holderName: row.holder_name,
    payoutsHeldUntil: heldUntil(row)?.toISOString() ?? null,
    livemode: row.livemode,
    updated: row.updated_at.toISOString(),
    created: row.created_at.toISOString(),
  };
}

/** Refuses an account number whose check digit does not fit the bank: a typo, or another bank's account. */
export function assertAccountNumber(input: { bankMfo: string; accountNumber: string }): void {
  if (!accountKeyValid(input.bankMfo, input.accountNumber)) {
    throw new ApiError('VALIDATION_ERROR', `accountNumber is not an account of the bank ${input.bankMfo}: its check digit (the 9th) does not match`, {
      param: 'accountNumber',
    });
  }
}

export function presentPayout(row: PayoutRow): Payout {
  return {
    id: row.id,
    object: 'payout',
    amount: row.amount,
    status: row.status,
    automatic: row.automatic,
    arrivalDate: row.arrival_date,
    destination: { bankMfo: row.bank_mfo, accountLast4: row.account_number.slice(-4) },
    failureCode: row.failure_code,
    livemode: row.livemode,
    created: row.created_at.toISOString(),
  };
}

/** When a hold on the account's payouts ends, or null when there is none now. */
function heldUntil(row: PayoutAccountRow): Date | null {
  return row.payouts_held_until !== null && row.payouts_held_until.getTime() > Date.now() ? row.payouts_held_until : null;
}

/** A payout's timeline as the dashboard shows it: when it was made, sent, and finished. */
export interface PayoutTimeline {
  created: Date;
  sent: Date | null;
  finished: Date | null;
}

/** The next automatic payout as things stand: its Tashkent day and time of day, and what it would pay out now. */
export interface NextPayout {
  date: string;
  /** HH:MM, Tashkent time: TOLOV_PAYOUT_TIME. */
  time: string;
  amount: number;
  minimum: number;
  heldUntil: string | null;
}

/** How a payout is asked for: an amount (or the whole available balance), or the automatic payout of the unpaid rows. */
type Take = { automatic: false; amount: number | undefined } | { automatic: true };

export interface PayoutSchedule {
  /** Minutes after Tashkent's midnight when the day's automatic payouts run. */
  timeMinutes: number;
  /** The smallest automatic payout, in tiyin. */
  minimum: number;
}

export class PayoutsService {
  constructor(
    private readonly db: Db,
    private readonly rails: Rails,
    private readonly ledger: LedgerService,
    private readonly events: EventRecorder,
    private readonly commands: Commands,
    private readonly schedule: PayoutSchedule,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** The product's payout account in the mode, masked; 404 until one is set. */
  async account(merchant: Merchant): Promise<PayoutAccount> {
    const row = await store.findAccount(this.db, merchant);
    if (!row) throw notFound('payout account');
    return presentAccount(row);
  }

  /**
   * Sets the payout account, audited and announced in one transaction. Only a dashboard user acts here: the page
   * checks the owner's role and the second factor before it calls this.
   */
  setAccount(invocation: Invocation, input: PayoutAccountInput): Promise<Answer<PayoutAccount>> {
    const { scope } = invocation;
    if (scope.actor.kind !== 'user') throw new Error('a payout account is set by a dashboard user, never by an API key');
    assertAccountNumber(input);
    const target = `${input.bankMfo} ••••${input.accountNumber.slice(-4)}`;
    return this.commands.change(invocation, 200, (tx) => this.recordAccount(tx, scope, input), { audit: { action: 'payout_account.updated', target } });
  }

  /**
   * Writes the account in the caller's transaction and announces it: the owner's setting above, and the account an
   * approved activation request names for live mode. A change of an account already set holds payouts.
   */
  async recordAccount(tx: Transaction, merchant: Pick<Merchant, 'productId' | 'livemode'>, input: PayoutAccountInput): Promise<PayoutAccount> {
    const account = presentAccount(await store.upsertAccount(tx, merchant, { id: newId('pacct'), ...input }, ACCOUNT_CHANGE_HOLD_SECONDS));
    this.events.record(tx, { productId: merchant.productId, livemode: merchant.livemode, type: 'payout_account.updated', data: account });
    return account;
  }

  /** Test mode's helper: ends a hold at once. */
  async releaseHold(merchant: Merchant): Promise<PayoutAccount> {
    const row = await store.releaseHold(this.db, merchant);
    if (!row) throw notFound('payout account');
    return presentAccount(row);
  }

  /** A manual payout: PENDING at once, sent within moments; 201. Audited when a dashboard user asks for it. */
  create(invocation: Invocation, body: CreatePayoutBody): Promise<Answer<Payout>> {
    const write = async (tx: Transaction) => {
      const payout = await this.#take(tx, invocation.scope, { automatic: false, amount: body.amount });
      if (!payout) throw new Error('a manual payout is made or refused, never skipped');
      return presentPayout(payout);
    };
    return this.commands.change(invocation, 201, write, { audit: { action: 'payout.created', target: (payout: Payout) => payout.id }, activeOnly: true });
  }

  /** Cancels a PENDING payout, its amount back in the available balance; 409 once it was sent. */
  cancel(invocation: Invocation, id: string): Promise<Answer<Payout>> {
    const { scope } = invocation;
    const write = async (tx: Transaction) => {
      const canceled = await store.cancelPending(tx, scope, id);
      if (canceled) {
        await this.#giveBack(tx, canceled);
        return presentPayout(canceled);
      }
      const row = await store.findPayout(tx, scope, id);
      if (!row) throw notFound('payout');
      throw new ApiError('PAYOUT_NOT_CANCELABLE', `Only a PENDING payout can be canceled; this one is ${row.status}`);
    };
    return this.commands.change(invocation, 200, write, { audit: { action: 'payout.canceled', target: id } });
  }

  async get(merchant: Merchant, id: string): Promise<Payout> {
    const row = await store.findPayout(this.db, merchant, id);
    if (!row) throw notFound('payout');
    return presentPayout(row);
  }

  /** A payout with its timeline, for the dashboard's page of it. */
  async detail(merchant: Merchant, id: string): Promise<{ payout: Payout; timeline: PayoutTimeline }> {
    const row = await store.findPayout(this.db, merchant, id);
    if (!row) throw notFound('payout');
    return { payout: presentPayout(row), timeline: { created: row.created_at, sent: row.sent_at, finished: row.finished_at } };
  }

  list(merchant: Merchant, query: PayoutsQuery): Promise<List<Payout>> {
    const filters: ListFilter[] = [];
    if (query.status !== undefined) filters.push({ column: 'status', value: query.status });
    return listPage(this.db, store.PAYOUT_LIST, merchant, query, presentPayout, filters);
  }

  /** The next automatic payout: today's if it has not run yet, else tomorrow's; its amount as of now. */
  async next(merchant: Merchant, now = new Date()): Promise<NextPayout> {
    const today = tashkentDay(now);
    const todayRuns = now < tashkentInstant(today, this.schedule.timeMinutes) || !(await store.hasRun(this.db, merchant, today));
    const account = await store.findAccount(this.db, merchant);
    const held = account ? heldUntil(account) : null;
    return {
      date: todayRuns ? today : nextDay(today),
      time: `${String(Math.floor(this.schedule.timeMinutes / 60)).padStart(2, '0')}:${String(this.schedule.timeMinutes % 60).padStart(2, '0')}`,
      amount: Number(await store.unpaidSum(this.db, merchant)),
      minimum: this.schedule.minimum,
      heldUntil: held?.toISOString() ?? null,
    };
  }

  /**
   * One batch of the daily run, once the day's payout time has come in Tashkent: each product and mode whose day has
   * not run gets its automatic payout (when what is unpaid reaches the minimum), made and claimed in one transaction,
   * then sent. Returns how many products it looked at.
   */
  async runDaily(batchMax: number, now = new Date()): Promise<number> {
    const day = tashkentDay(now);
    if (now < tashkentInstant(day, this.schedule.timeMinutes)) return 0;
    const due = await store.dueRuns(this.db, day, batchMax);
    for (const { product_id: productId, livemode } of due) {
      const made = await this.#runFor({ productId, livemode }, day);
      if (made) await this.send(made.id);
    }
    return due.length;
  }

  /**
   * The day's automatic payout of one product and mode, claimed with it in one transaction; null when another process
   * ran the day, or too little is unpaid (the day is then done). An account put on hold meanwhile rolls the claim back,
   * so that the day's payout is made once the hold ends.
   */
  async #runFor(merchant: Pick<Merchant, 'productId' | 'livemode'>, day: string): Promise<PayoutRow | null> {
    try {
      return await this.db.transaction(async (tx) => {
        if (!(await store.claimRun(tx, merchant, day))) return null;
        const payout = await this.#take(tx, merchant, { automatic: true });
        if (payout) store.recordRunPayout(tx, merchant, day, payout.id);
        return payout;
      });
    } catch (error) {
      if (error instanceof ApiError && error.code === 'PAYOUTS_HELD') return null;
      throw error;
    }
  }

  /**
   * Test mode's helper: the automatic payout made now, as the day's run would make it, and sent at once with every
   * PENDING payout of the product. 409 when there is no account, it is held, or too little is unpaid.
   */
  async runNow(merchant: Merchant): Promise<Payout> {
    const made = await this.db.transaction(async (tx) => {
      const payout = await this.#take(tx, merchant, { automatic: true });
      if (payout) return payout;
      const unpaid = Number(await store.unpaidSum(tx, merchant));
      throw new ApiError('INSUFFICIENT_BALANCE', `${unpaid} tiyin is unpaid, below the automatic payout's minimum of ${this.schedule.minimum} (TOLOV_PAYOUT_MIN)`);
    });
    for (const id of await store.pendingDue(this.db, 100, merchant)) await this.send(id);
    return presentPayout(await store.payoutById(this.db, made.id));
  }

  /** One batch of the sender: PENDING payouts due, each sent once. Returns how many it took. */
  async sendDue(batchMax: number): Promise<number> {
    const due = await store.pendingDue(this.db, batchMax);
    for (const id of due) await this.send(id);
    return due.length;
  }

  /**
   * Sends a PENDING payout: recorded IN_TRANSIT (by one caller alone), sent under the rail's deadline, and its outcome
   * recorded once; an unclear answer leaves it IN_TRANSIT for reconciliation, which fences it at the bank.
   */
  async send(id: string): Promise<PayoutRow> {
    const pending = await store.payoutById(this.db, id);
    let rail;
    try {
      rail = this.rails.forMode(pending.livemode);
    } catch (error) {
      this.log.warn({ err: error, payout: id }, 'payout not sent: its mode has no bank gateway');
      await store.postponePending(this.db, id, NO_RAIL_RETRY_MS);
      return pending;
    }
    const sent = await this.db.transaction((tx) => store.markInTransit(tx, id, rail.callWindowMs));
    if (!sent) return store.payoutById(this.db, id);
    let outcome: RailOutcome;
    try {
      outcome = await rail.transfer({
        operationId: sent.id,
        amount: sent.amount,
        bankMfo: sent.bank_mfo,
        accountNumber: sent.account_number,
        tin: sent.tin,
        holderName: sent.holder_name,
      });
    } catch (error) {
      this.log.warn({ err: error, payout: id }, 'payout transfer failed to answer; left IN_TRANSIT for reconciliation');
      outcome = { status: 'UNKNOWN' };
    }
    return this.db.transaction((tx) => this.applyOutcome(tx, id, outcome, rail.callWindowMs));
  }

  /** One reconciliation batch for IN_TRANSIT payouts. */
  reconcile(batchMax: number): Promise<number> {
    return reconcileBatch(
      this.db,
      this.rails,
      this.log,
      (leaseMs) => store.leasePayoutsToReconcile(this.db, batchMax, leaseMs),
      (tx, id, outcome, retryInMs) => this.applyOutcome(tx, id, outcome, retryInMs),
    );
  }

  /**
   * Applies the bank's outcome to an IN_TRANSIT payout, once: PAID moves its amount out to the bank; FAILED gives it
   * back to the available balance. Each announces itself.
   */
  async applyOutcome(tx: Transaction, id: string, outcome: RailOutcome, retryInMs: number): Promise<PayoutRow> {
    if (outcome.status === 'UNKNOWN') {
      store.deferPayout(tx, id, retryInMs);
      return store.payoutById(tx, id);
    }
    const finished = await store.finishPayout(tx, id, outcome.status === 'SUCCEEDED' ? { status: 'PAID' } : { status: 'FAILED', failureCode: outcome.failureCode });
    if (!finished) return store.payoutById(tx, id);
    if (finished.status === 'PAID') {
      this.ledger.post(tx, {
        productId: finished.product_id,
        livemode: finished.livemode,
        reason: 'payout_paid',
        referenceId: finished.id,
        entries: [
          { account: 'payouts_in_transit', amount: -finished.amount },
          { account: 'bank_payouts', amount: finished.amount },
        ],
      });
    } else {
      await this.#giveBack(tx, finished);
    }
    const type = finished.status === 'PAID' ? 'payout.paid' : 'payout.failed';
    this.events.record(tx, { productId: finished.product_id, livemode: finished.livemode, type, data: presentPayout(finished) });
    return finished;
  }

  /**
   * Makes a PENDING payout to the account as it is now, in the caller's transaction: its amount leaves the available
   * balance (locked meanwhile: no posting moves it between the read and the take) for payouts in transit, with its statement
   * row. An automatic payout pays out the unpaid rows, and only when they reach the minimum (null otherwise).
   */
  async #take(tx: Transaction, merchant: Pick<Merchant, 'productId' | 'livemode'>, take: Take): Promise<PayoutRow | null> {
    const available = await this.ledger.lockAvailable(tx, merchant);
    const account = await store.findAccount(tx, merchant);
    if (!account) throw new ApiError('PAYOUT_ACCOUNT_REQUIRED', 'This product has no payout account in this mode: an owner sets it in the dashboard, at Payout account');
    const held = heldUntil(account);
    if (held) throw new ApiError('PAYOUTS_HELD', `Payouts are held until ${held.toISOString()}, 24 hours after the payout account was changed`);
    const id = newId('po');
    let amount: number;
    if (take.automatic) {
      if (BigInt(await store.unpaidSum(tx, merchant)) < BigInt(this.schedule.minimum)) return null;
      amount = Number(await store.payOutUnpaid(tx, merchant, id));
    } else {
      amount = take.amount ?? Number(available);
      if (available <= 0n || BigInt(amount) > available) {
        throw new ApiError('INSUFFICIENT_BALANCE', `The available balance is ${available} tiyin${take.amount === undefined ? '' : `, less than ${take.amount}`}`, {
          ...(take.amount === undefined ? {} : { param: 'amount' }),
        });
      }
    }
    const row = await store.insertPayout(tx, merchant, { id, amount, automatic: take.automatic, arrivalDate: tashkentDay(new Date()), account });
    this.ledger.post(tx, {
      productId: merchant.productId,
      livemode: merchant.livemode,
      reason: 'payout_created',
      referenceId: id,
      entries: [
        { account: 'merchant_available', amount: -amount },
        { account: 'payouts_in_transit', amount },
      ],
      statement: { type: 'payout', amount: -amount, fee: 0, status: 'available' },
    });
    return row;
  }

  /** A FAILED or CANCELED payout's amount back in the available balance, with its statement row. */
  async #giveBack(tx: Transaction, payout: PayoutRow): Promise<void> {
    this.ledger.post(tx, {
      productId: payout.product_id,
      livemode: payout.livemode,
      reason: payout.status === 'CANCELED' ? 'payout_canceled' : 'payout_failed',
      referenceId: payout.id,
      entries: [
        { account: 'payouts_in_transit', amount: -payout.amount },
        { account: 'merchant_available', amount: payout.amount },
      ],
      statement: { type: 'payout_failure', amount: payout.amount, fee: 0, status: 'available' },
    });
  }
}
