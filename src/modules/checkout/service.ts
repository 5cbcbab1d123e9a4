// The public card-capture calls. The token in the path is the only credential. Every call reads the session under a
// row lock; calls to the rail happen outside transactions, with the attempt already counted and committed, so a
// refused, failed or crashed call still uses up an attempt and nothing is ever half-written.
import type { Db, Transaction } from '../../db/types.js';
import { ApiError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { runSteps } from '../../core/idempotency.js';
import type { Rails } from '../../rails/index.js';
import type { CardBindingsService } from '../card-bindings/service.js';
import { checkExpiry, checkPan, checkPhone, formatExpiry, maskPan } from '../../rails/card-data.js';
import type { CardsService } from '../cards/service.js';
import type { OrdersService } from '../orders/service.js';
import type { ReceiptsService } from '../receipts/service.js';
import { feeOf, type IntentRow, type PaymentsService } from '../payments/service.js';
import { printableReceiptOf, sessionReceiptOf, type PrintableReceipt } from './receipt.js';
import type { CardSubmission, SessionState } from './schema.js';
import { moveOf, refusalOf, type SessionCall } from './state.js';
import * as store from './store.js';
import type { SessionRow } from './store.js';

export const CARD_ATTEMPTS_MAX = 3;
export const CODE_ATTEMPTS_MAX = 5;
/** Codes sent per session, the first included. */
export const CODE_SENDS_MAX = 5;
export const RESEND_COOLDOWN_SECONDS = 30;

type Outcome<T> = { value: T } | { error: ApiError };
const ok = <T>(value: T): { value: T } => ({ value });
const fail = (error: ApiError): { error: ApiError } => ({ error });

const sessionNotFound = () => new ApiError('NOT_FOUND', 'No such checkout session');
const sessionExpired = () => new ApiError('SESSION_EXPIRED', 'This checkout session has expired');
const attemptsUsedUp = () =>
  new ApiError('TOO_MANY_ATTEMPTS', `This session is closed: the ${CARD_ATTEMPTS_MAX} card or ${CODE_ATTEMPTS_MAX} code attempts were used up`);
const shopSuspended = () => new ApiError('PRODUCT_SUSPENDED', 'This shop cannot take payments now: Tolov has suspended it');
/** The buyer's calls a session refuses once its attempts were used up, whatever they are. */
const lockedOut = (session: SessionRow) => session.failure_code === 'TOO_MANY_ATTEMPTS';
/** Refusals of a card or a code that use up an attempt. */
const ATTEMPT_REFUSALS = new Set(['INVALID_CARD', 'CARD_INACTIVE', 'VALIDATION_ERROR', 'WRONG_CODE']);
/** The payment's first phase found the session moved on (expired, or a concurrent call was first): said after it. */
const LOST_RACE = { status: 409, body: null };
const debitOf = (row: IntentRow) => ({ status: row.status, failureCode: row.failure_code });

export function presentSession(row: SessionRow): SessionState {
  const resendAt = row.status === 'AWAITING_CODE' && row.code_sent_at ? new Date(row.code_sent_at.getTime() + RESEND_COOLDOWN_SECONDS * 1000) : null;
  return {
    object: 'checkout_session',
    kind: row.kind,
    status: row.status,
    productName: row.product_name,
    livemode: row.livemode,
    maskedPan: row.masked_pan,
    returnUrl: row.status === 'COMPLETED' ? row.return_url : null,
    expiresAt: row.expires_at.toISOString(),
    // A session closed for its attempts says so; an order's session closed by the bank's refusal gives the bank's reason.
    failureCode: row.failure_code ?? (row.status === 'FAILED' ? row.order_failure_code : null),
    cardAttemptsLeft: Math.max(0, CARD_ATTEMPTS_MAX - row.card_attempts),
    codeAttemptsLeft: Math.max(0, CODE_ATTEMPTS_MAX - row.code_attempts),
    resendAvailableAt: row.code_sends < CODE_SENDS_MAX ? (resendAt?.toISOString() ?? null) : null,
    order:
      row.kind === 'order'
        ? {
            amount: row.order_amount!,
            currency: 'UZS',
            description: row.order_description,
            status: row.order_status!,
            paidAt: row.order_paid_at?.toISOString() ?? null,
            payment: row.order_status === 'PAID' ? row.order_payment : null,
          }
        : null,
    canSaveCard: row.kind === 'order' && row.customer_ref !== null,
    shopSuspended: row.product_suspended,
    // Read by the service once the order is paid (withReceipt): it lives with the payment, not the session.
    receipt: null,
  };
}

export interface CheckoutPage {
  state: SessionState;
  returnUrl: string | null;
  brandColor: string | null;
  logoDigest: string | null;
}

export class CheckoutService {
  constructor(
    private readonly db: Db,
    private readonly rails: Rails,
    private readonly payments: PaymentsService,
    private readonly orders: OrdersService,
    private readonly cards: CardsService,
    private readonly bindings: CardBindingsService,
    private readonly receipts: Pick<ReceiptsService, 'saleOf' | 'forBuyer'>,
  ) {}

  /**
   * Runs `work` on the locked session of `token` in one transaction. An error returned (not thrown) by `work` is
   * raised only after the commit, so what `work` counted stays counted. A session past its time is recorded EXPIRED.
   */
  private async withSession<T>(token: string, work: (tx: Transaction, session: SessionRow) => Promise<Outcome<T>>): Promise<T> {
    let expiredOrder: string | null = null;
    const outcome = await this.db.transaction(async (tx): Promise<Outcome<T>> => {
      const session = await store.findSession(tx, token, true);
      if (!session) return fail(sessionNotFound());
      if (session.expired) {
        if (session.kind === 'order') expiredOrder = session.order_id;
        else await store.expireSession(tx, session.kind, token);
        return fail(sessionExpired());
      }
      return work(tx, session);
    });
    // An order expires with its session (and its event), unless its debit is in progress. Not under the session's lock:
    // the order's lock comes first, as in a payment, which takes the order's and then the session's.
    if (expiredOrder !== null) await this.db.transaction((tx) => this.orders.expire(tx, expiredOrder!));
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  }

  private async current(token: string): Promise<SessionState> {
    const session = await store.findSession(this.db, token, false);
    if (!session) throw sessionNotFound();
    return this.withReceipt(presentSession(session));
  }

  /** A paid order's state with its sale receipt, read only once the order is paid (the receipt is written then). */
  private async withReceipt(state: SessionState): Promise<SessionState> {
    const payment = state.status === 'COMPLETED' ? state.order?.payment : null;
    if (!payment) return state;
    const sale = await this.receipts.saleOf(payment);
    return sale ? { ...state, receipt: sessionReceiptOf(sale) } : state;
  }

  /** What a receipt's printable page shows; null when `publicToken` names no receipt. */
  async receiptPage(publicToken: string): Promise<PrintableReceipt | null> {
    const found = await this.receipts.forBuyer(publicToken);
    return found ? printableReceiptOf(found) : null;
  }

  /**
   * What the hosted page shows before its script runs: the session's state (EXPIRED once past its time, whatever the
   * workers have recorded yet), the shop's address, which the page offers on every final screen (the state gives it
   * only once completed, to navigate there), and the product's branding. Null when `token` names no session.
   */
  async pageOf(token: string): Promise<CheckoutPage | null> {
    const session = await store.findSession(this.db, token, false);
    if (!session) return null;
    const state = await this.withReceipt(presentSession(session));
    // As the session moves when the expiry worker or its next call gets to it.
    const expire = moveOf(session.kind, 'expire');
    return {
      state: session.expired && expire.from.includes(session.status) ? { ...state, status: expire.to } : state,
      returnUrl: session.return_url,
      brandColor: session.brand_color,
      logoDigest: session.logo_digest,
    };
  }

  async state(token: string): Promise<SessionState> {
    return this.withReceipt(await this.withSession(token, async (_tx, session) => ({ value: presentSession(session) })));
  }

  /** A refusal that used up the session's last attempt closes it (FAILED, and its order with it). */
  async submitCard(token: string, submission: CardSubmission): Promise<SessionState> {
    return this.closingWhenUsedUp(token, () => this.acceptCard(token, submission));
  }

  async submitCode(token: string, code: string): Promise<SessionState> {
    return this.closingWhenUsedUp(token, () => this.checkCode(token, code));
  }

  private async closingWhenUsedUp(token: string, call: () => Promise<SessionState>): Promise<SessionState> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof ApiError && ATTEMPT_REFUSALS.has(error.code)) await this.closeIfUsedUp(token);
      throw error;
    }
  }

  /**
   * Closes a session whose attempts are used up with nothing left to do: FAILED with TOO_MANY_ATTEMPTS, and its order
   * FAILED with order.failed (it can no longer be paid). The order's lock first, as a payment takes it.
   */
  private async closeIfUsedUp(token: string): Promise<void> {
    const session = await store.findSession(this.db, token, false);
    if (!session) return;
    const usedUp =
      (session.status === 'PENDING' && session.card_attempts >= CARD_ATTEMPTS_MAX) ||
      (session.status === 'AWAITING_CODE' && session.code_attempts >= CODE_ATTEMPTS_MAX);
    if (!usedUp) return;
    await this.db.transaction(async (tx) => {
      if (session.kind === 'order') await this.orders.lockById(tx, session.order_id!);
      if (!(await store.lockOutSession(tx, session.kind, token))) return;
      if (session.kind === 'order') await this.orders.fail(tx, session.order_id!, null, 'TOO_MANY_ATTEMPTS');
    });
  }

  private async acceptCard(token: string, submission: CardSubmission): Promise<SessionState> {
    const checked = await this.withSession(token, async (tx, session) => {
      if (lockedOut(session)) return fail(attemptsUsedUp());
      if (session.product_suspended) return fail(shopSuspended());
      const refused = refusalOf(session.kind, session.status, 'submit_card');
      if (refused !== null) return fail(new ApiError('INVALID_STATE', refused));
      if (submission.saveCard && !(session.kind === 'order' && session.customer_ref !== null)) {
        return fail(
          new ApiError('VALIDATION_ERROR', 'saveCard is only for paying an order that has a customerRef', { param: 'saveCard' }),
        );
      }
      if (session.card_attempts >= CARD_ATTEMPTS_MAX) {
        return fail(new ApiError('TOO_MANY_ATTEMPTS', `At most ${CARD_ATTEMPTS_MAX} cards can be submitted in one session`));
      }
      // A malformed phone is a typo of the form, not a card tried: refused before it costs the buyer an attempt.
      const phone = checkPhone(submission.phone);
      if (!phone.ok) return fail(new ApiError('VALIDATION_ERROR', phone.message, { param: 'phone' }));
      await store.countCardAttempt(tx, token);
      const pan = checkPan(submission.pan);
      const expiry = checkExpiry(submission.expiry, new Date());
      if (!pan.ok) return fail(new ApiError('INVALID_CARD', pan.message, { param: 'pan' }));
      if (!expiry.ok) return fail(new ApiError('INVALID_CARD', expiry.message, { param: 'expiry' }));
      return ok({ session, pan: pan.value, expiry: expiry.value, phone: phone.value });
    });

    const rail = this.rails.forMode(checked.session.livemode);
    const tokenized = await rail.tokenize({ pan: checked.pan.pan, expiry: checked.expiry, phone: checked.phone });
    if (!tokenized.ok) throw new ApiError('CARD_INACTIVE', 'The bank does not accept this card: it is inactive or blocked');
    await rail.sendCode(tokenized.token);
    const accepted = await store.acceptCard(this.db, checked.session.kind, token, {
      railToken: tokenized.token,
      network: tokenized.network,
      maskedPan: maskPan(checked.pan.pan),
      expiry: formatExpiry(checked.expiry),
      saveCard: submission.saveCard === true,
    });
    if (!accepted) return this.refuseLostRace(token, 'submit_card');
    return this.current(token);
  }

  private async checkCode(token: string, code: string): Promise<SessionState> {
    const session = await this.withSession(token, async (tx, session) => {
      if (lockedOut(session)) return fail(attemptsUsedUp());
      if (session.product_suspended) return fail(shopSuspended());
      const refused = refusalOf(session.kind, session.status, 'submit_code');
      if (refused !== null) return fail(new ApiError('INVALID_STATE', refused));
      if (session.code_attempts >= CODE_ATTEMPTS_MAX) {
        return fail(new ApiError('TOO_MANY_ATTEMPTS', `At most ${CODE_ATTEMPTS_MAX} codes can be tried in one session`));
      }
      await store.countCodeAttempt(tx, token);
      return ok({ ...session, code_attempts: session.code_attempts + 1 });
    });

    const rail = this.rails.forMode(session.livemode);
    if (!(await rail.verifyCode(session.rail_token!, code))) {
      const left = CODE_ATTEMPTS_MAX - session.code_attempts;
      const message =
        left === 0 ? 'The code is wrong, and that was the last attempt: this session is closed' : `The code is wrong; ${left} ${left === 1 ? 'attempt' : 'attempts'} left`;
      throw new ApiError('WRONG_CODE', message, { param: 'code' });
    }
    return session.kind === 'order' ? this.payOrder(session) : this.completeBinding(session);
  }

  private async completeBinding(session: SessionRow): Promise<SessionState> {
    const token = session.token;
    const completed = await this.db.transaction(async (tx) => {
      if (!(await store.completeBindingSession(tx, token))) return false;
      const card = await this.cards.insert(tx, {
        id: newId('card'),
        product_id: session.product_id,
        livemode: session.livemode,
        rail: session.network!,
        rail_token: session.rail_token!,
        masked_pan: session.masked_pan!,
        expiry: session.card_expiry!,
        customer_ref: session.customer_ref,
      });
      this.bindings.attachCard(tx, session.binding_id!, card.id);
      return true;
    });
    if (!completed) return this.refuseLostRace(token, 'submit_code');
    return this.current(token);
  }

  /**
   * Pays an order with the confirmed card, on the charge's phase runner and debit phase: the debit is recorded with its
   * operation id (the order locked, its session PROCESSING), the rail is called outside any transaction, and the outcome
   * is applied once, to the payment and its order together. A crash between the phases is finished by the reconciler.
   */
  private async payOrder(session: SessionRow): Promise<SessionState> {
    const token = session.token;
    const sent = await runSteps(this.db, {
      started: async (tx) => {
        const row = await this.startOrderDebit(tx, session);
        return row === null ? { response: LOST_RACE } : this.payments.debitStarted(row.id, row);
      },
      debit: this.payments.debitStep(session.livemode, (row) => ({ response: { status: 200, body: debitOf(row) } })),
    });
    if (sent.status === LOST_RACE.status) return this.refuseLostRace(token, 'submit_code');
    const debit = JSON.parse(sent.body) as ReturnType<typeof debitOf>;
    if (debit.status === 'FAILED') throw new ApiError('PAYMENT_FAILED', 'The bank refused the payment', { failureCode: debit.failureCode! });
    return this.current(token);
  }

  /** The order's PROCESSING intent, its session moved to PROCESSING; null when the session had moved on. */
  private async startOrderDebit(tx: Transaction, session: SessionRow): Promise<IntentRow | null> {
    // The order's lock orders this against a cancel or an expiry, which close the session in their own transaction.
    const order = await this.orders.lockById(tx, session.order_id!);
    if (!(await store.startOrderDebit(tx, session.token))) return null;
    if (order.status !== 'PENDING') throw new Error(`order ${order.id} is ${order.status} under an open session`);
    return this.payments.insertIntent(
      tx,
      { productId: session.product_id, livemode: session.livemode },
      {
        id: newId('pi'),
        amount: order.amount,
        fee: feeOf(order.amount, session.fee_bps),
        status: 'PROCESSING',
        cardId: null,
        orderId: order.id,
        railToken: session.rail_token!,
        rail: session.network!,
        // What the receipt shows of the card: the payment keeps it, the card being saved or not.
        maskedPan: session.masked_pan!,
        description: order.description,
        metadata: {},
        receiptLines: order.receipt_lines,
        inFlightMs: this.rails.forMode(session.livemode).callWindowMs,
        captureMethod: order.capture_method,
      },
    );
  }

  async resendCode(token: string): Promise<SessionState> {
    const session = await this.withSession(token, async (tx, session) => {
      if (lockedOut(session)) return fail(attemptsUsedUp());
      if (session.product_suspended) return fail(shopSuspended());
      const refused = refusalOf(session.kind, session.status, 'resend_code');
      if (refused !== null) return fail(new ApiError('INVALID_STATE', refused));
      if (session.code_sends >= CODE_SENDS_MAX) {
        return fail(new ApiError('TOO_MANY_ATTEMPTS', `At most ${CODE_SENDS_MAX} codes can be sent in one session`));
      }
      const waitMs = session.code_sent_at!.getTime() + RESEND_COOLDOWN_SECONDS * 1000 - Date.now();
      if (waitMs > 0) {
        const seconds = Math.ceil(waitMs / 1000);
        return fail(new ApiError('RATE_LIMITED', `A new code can be sent in ${seconds} s`, { headers: { 'Retry-After': String(seconds) } }));
      }
      await store.countCodeSend(tx, token);
      return ok(session);
    });
    await this.rails.forMode(session.livemode).sendCode(session.rail_token!);
    return this.current(token);
  }

  /** A conditional update found the session moved on: it expired, or a concurrent call changed it first. */
  private async refuseLostRace(token: string, call: SessionCall): Promise<never> {
    const session = await store.findSession(this.db, token, false);
    if (!session) throw sessionNotFound();
    if (session.expired) throw sessionExpired();
    const refused = refusalOf(session.kind, session.status, call);
    if (refused !== null) throw new ApiError('INVALID_STATE', refused);
    throw new Error(`session ${call} lost a race but its state still allows it`);
  }
}
