// Two-step payments on a payment's page: what the bank holds (or held) of it, and, for owners and developers while it is
// held, "Capture" (all of the hold or less, in so'm as people type them) and "Cancel the hold", each confirmed first,
// through the holds commands under the form's idempotency key (a form posted twice acts once), audited with the change.
// What is wrong with the amount is said at its field; any other refusal above the forms, in the page's words.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { PaymentIntent } from '../../../modules/payments/schema.js';
import type { Event } from '../../../modules/webhooks/schema.js';
import { CHANGES, dashOf, field, invocationOf, outcomeOf, requiredFormKeyOf, requireRole, ROUTE, signedIn, type Dash, type Refusal } from '../context.js';
import type { DashboardDeps, DetailRequest } from '../deps.js';
import { html, type Html, type Value } from '../../html.js';
import { failureKey, statusKey, type MessageKey } from '../i18n.js';
import { csrfField, formKeyField, notice, sendPage } from '../layout.js';
import { optionalAmountOf } from './form-fields.js';
import { money, somFigure, wholeMoney } from './lists.js';

type Action = 'capture' | 'cancel';

/** What the page says when a hold's form comes back: the amount typed, what is wrong with it, or why it was refused. */
export interface HoldSaid {
  typed?: string;
  amountError?: string;
  refused?: { action: Action; refusal: Refusal };
}

/** The payment's page again, saying what came of a hold's form. */
export type HoldPage = (request: DetailRequest, said: HoldSaid) => Promise<Html>;

/** What the bank held: the capturable amount while held; after, the amount the hold's event recorded. */
function heldOf(intent: PaymentIntent, events: Event[]): number | undefined {
  if (intent.status === 'REQUIRES_CAPTURE') return intent.amountCapturable;
  const data = events.find((event) => event.type === 'payment_intent.requires_capture')?.data;
  return typeof data?.amountCapturable === 'number' ? data.amountCapturable : undefined;
}

function heldText(dash: Dash, intent: PaymentIntent, held: number): string {
  const amount = wholeMoney(dash, held);
  if (intent.status === 'CANCELED') return dash.t('heldAllReleased', { held: amount });
  if (intent.status === 'SUCCEEDED' && intent.amount < held) return dash.t('heldPartReleased', { held: amount, released: wholeMoney(dash, held - intent.amount) });
  return money(dash, held);
}

/** A two-step payment's rows among its fields: that it was held first, how much, and what of it went back to the card. */
export function holdRows(dash: Dash, intent: PaymentIntent, events: Event[]): Array<[MessageKey, Value]> {
  if (intent.captureMethod !== 'manual') return [];
  const held = heldOf(intent, events);
  const kind: [MessageKey, Value] = ['captureMethod', dash.t('captureManual')];
  return held === undefined ? [kind] : [kind, ['amountHeld', heldText(dash, intent, held)]];
}

/** What the page says after a capture or a cancel, as the payment now stands (PROCESSING: the bank has not answered). */
export function holdDone(dash: Dash, intent: PaymentIntent, done: string | undefined): Value {
  if (done !== 'captured' && done !== 'released') return '';
  if (intent.status === 'PROCESSING') return notice('ok', dash.t('holdEndPending'));
  if (done === 'captured' && intent.status === 'SUCCEEDED') return notice('ok', dash.t('capturedDone', { amount: wholeMoney(dash, intent.amount) }));
  if (done === 'released' && intent.status === 'CANCELED') return notice('ok', dash.t('holdReleasedDone', { amount: wholeMoney(dash, intent.amount) }));
  return '';
}

const textOf = (dash: Dash, key: MessageKey | null, code: string) => (key === null ? code : dash.t(key));

/** Why a capture or a cancel was refused, in the page's words; `atAmount` when the amount typed is what to change. */
function refusalText(dash: Dash, intent: PaymentIntent, { action, refusal }: NonNullable<HoldSaid['refused']>): { text: string; atAmount: boolean } {
  const { t } = dash;
  const held = wholeMoney(dash, intent.amountCapturable);
  const { code, failureCode } = refusal;
  if (code === 'VALIDATION_ERROR' && refusal.param === 'amount') return { text: t('captureAmountTooLarge', { held }), atAmount: true };
  if (code === 'RECEIPT_MISMATCH') return { text: t('captureReceiptMismatch', { held }), atAmount: true };
  if (code === 'PAYMENT_FAILED' && failureCode === 'HOLD_NOT_ACTIVE') return { text: t('holdNotActive'), atAmount: false };
  if (code === 'PAYMENT_FAILED') {
    const reason = textOf(dash, failureKey(failureCode ?? ''), failureCode ?? code);
    return { text: t(action === 'capture' ? 'captureRefused' : 'releaseRefused', { reason }), atAmount: false };
  }
  if (code === 'INVALID_STATE') return { text: t('holdNotHeld', { status: textOf(dash, statusKey('payment', intent.status), intent.status) }), atAmount: false };
  if (code === 'PRODUCT_SUSPENDED') return { text: t('captureSuspended'), atAmount: false };
  return { text: t('actionRefused', { code }), atAmount: false };
}

/** The whole hold as the field first offers it, as the language writes so'm (its ",00" left out): 150 000 · 150,000. */
const typedHeld = (dash: Dash, intent: PaymentIntent) => somFigure(dash, intent.amountCapturable).replace(/[.,]00$/, '');

/** The hold's two forms, each confirmed first: the amount to capture with its hint and what is wrong with it, and the cancel. */
function holdForms(dash: Dash, intent: PaymentIntent, said: HoldSaid, refused: { text: string; atAmount: boolean } | undefined): Html {
  const { t } = dash;
  const held = wholeMoney(dash, intent.amountCapturable);
  const error = said.amountError ?? (refused?.atAmount ? refused.text : undefined);
  const invalid = error === undefined ? '' : html` aria-invalid="true" autofocus`;
  const described = `capture-amount-hint${error === undefined ? '' : ' capture-amount-error'}`;
  const path = `/dashboard/payments/${intent.id}`;
  return html`<section class="card hold" aria-labelledby="hold-title">
  <h2 id="hold-title">${t('holdTitle')}</h2>
  <p>${t('holdExplained', { held })}</p>
  ${refused && !refused.atAmount ? notice('error', refused.text) : ''}
  <form class="capture" method="post" action="${path}/capture" data-confirm="${t('captureConfirm', { held })}">${csrfField(dash)}${formKeyField()}
    <label for="capture-amount">${t('captureAmount')}</label>
    <p class="hint" id="capture-amount-hint">${t('captureAmountHint', { held })}</p>
    ${error === undefined ? '' : html`<p class="field-error" id="capture-amount-error">${error}</p>`}
    <div class="capture-row">
      <input id="capture-amount" name="amount" class="amount" inputmode="decimal" autocomplete="off" maxlength="30"
        value="${said.typed ?? typedHeld(dash, intent)}" aria-describedby="${described}"${invalid}>
      <button type="submit" class="primary">${t('capturePayment')}</button>
    </div>
  </form>
  <form class="release" method="post" action="${path}/cancel-hold" data-confirm="${t('cancelHoldConfirm', { held })}">${csrfField(dash)}${formKeyField()}
    <button type="submit" class="danger">${t('cancelHold')}</button>
  </form>
</section>`;
}

/**
 * The hold's part of the page: while the payment is held, its forms for owners and developers (any refusal in them),
 * and who may act for viewers; once it is no longer held, a refusal of a form goes above the page's fields.
 */
export function holdPart(dash: Dash, intent: PaymentIntent, said: HoldSaid): { above: Value; forms: Value } {
  const refused = said.refused && refusalText(dash, intent, said.refused);
  const held = intent.status === 'REQUIRES_CAPTURE';
  if (held && dash.signed !== null && CHANGES.includes(dash.signed.session.role)) return { above: '', forms: holdForms(dash, intent, said, refused) };
  return { above: refused ? notice('error', refused.text) : '', forms: held ? html`<p class="hint">${dash.t('holdRoles')}</p>` : '' };
}

/**
 * Capture and cancel, posted by an owner or a developer: done, back to the payment's page, which says so; refused, the
 * page again with what was typed and why, under the refusal's status (a payment of another account is a 404 page).
 */
export function holdRoutes(app: FastifyInstance, { holds }: DashboardDeps, render: HoldPage): void {
  const settle = async (request: DetailRequest, reply: FastifyReply, action: Action, outcome: Awaited<ReturnType<typeof outcomeOf>>, typed?: string) => {
    if ('refused' in outcome) return sendPage(reply, await render(request, { ...(typed === undefined ? {} : { typed }), refused: { action, refusal: outcome.refused } }), outcome.status);
    return reply.redirect(`/dashboard/payments/${request.params.id}?done=${action === 'capture' ? 'captured' : 'released'}`, 303);
  };
  app.post('/payments/:id/capture', ROUTE, async (request: DetailRequest, reply) => {
    const signed = signedIn(request);
    requireRole(signed, CHANGES);
    const key = requiredFormKeyOf(request.body);
    const { id } = request.params;
    const typed = field(request.body, 'amount');
    const read = optionalAmountOf(dashOf(request), typed);
    if ('error' in read) return sendPage(reply, await render(request, { typed, amountError: read.error }), 400);
    const body = read.amount === undefined ? {} : { amount: read.amount };
    return settle(request, reply, 'capture', await outcomeOf(() => holds.capture(invocationOf(request, signed, { paymentIntent: id, ...body }, key), id, body)), typed);
  });
  app.post('/payments/:id/cancel-hold', ROUTE, async (request: DetailRequest, reply) => {
    const signed = signedIn(request);
    requireRole(signed, CHANGES);
    const key = requiredFormKeyOf(request.body);
    const { id } = request.params;
    return settle(request, reply, 'cancel', await outcomeOf(() => holds.cancel(invocationOf(request, signed, { paymentIntent: id }, key), id)));
  });
}
