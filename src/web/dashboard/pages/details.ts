// A payment's and an order's page: every field, the objects it is linked to (a payment's fiscal receipts among them),
// and its timeline (each event, with its webhook deliveries). Owners and developers can refund a payment, capture or
// release a hold (holds.ts) and cancel an order here, through the same service phases as the API, under an idempotency
// key of the form (so a form posted twice acts once), and audited.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Merchant } from '../../../core/merchant.js';
import type { Refund } from '../../../modules/refunds/schema.js';
import type { Event, WebhookDelivery } from '../../../modules/webhooks/schema.js';
import { CHANGES, dashOf, invocationOf, merchantOfSigned, requiredFormKeyOf, requireRole, ROUTE, signedIn, type Dash, type Signed } from '../context.js';
import type { DashboardDeps, DetailRequest } from '../deps.js';
import { html, type Html, type Value } from '../../html.js';
import { attemptReason, messageNamed, type MessageKey } from '../i18n.js';
import { csrfField, formKeyField, notice, page, sendPage, when } from '../layout.js';
import { badge, cardShown, failureReason, money, paymentBadge } from './lists.js';
import { holdDone, holdPart, holdRoutes, holdRows, type HoldSaid } from './holds.js';
import { paymentReceipts, receiptLink } from './payment-receipts.js';

const link = (href: string, text: string) => html`<a href="${href}"><code>${text}</code></a>`;

export function fieldsList(dash: Dash, rows: Array<[MessageKey, Value]>): Html {
  return html`<dl class="fields">${rows.map(([label, value]) => html`<dt>${dash.t(label)}</dt><dd>${value}</dd>`)}</dl>`;
}

function deliveryLine(dash: Dash, delivery: WebhookDelivery): Html {
  const last = delivery.attempts.at(-1);
  const outcome = last === undefined ? '' : last.statusCode === null ? attemptReason(dash.t, last.error ?? '') : `HTTP ${last.statusCode}`;
  return html`<li><a href="/dashboard/webhooks/${delivery.endpoint}">${dash.t(`delivery_${delivery.status}`)}</a>
    · ${dash.t('attemptsMade', { count: delivery.attempts.length })}${outcome ? html` · ${outcome}` : ''}</li>`;
}

/** An event with its deliveries; `about` names its object when that is not the page's own (a payment's receipt). */
export type Entry = { event: Event; deliveries: WebhookDelivery[]; about?: Html };

export function eventItem(dash: Dash, { event, deliveries, about }: Entry): Html {
  return html`<li><span>${when(event.created)}</span> <code>${event.type}</code>${about ? html` ${about}` : ''} <code>${event.id}</code>
      ${deliveries.length === 0 ? html`<p class="hint">${dash.t('noEndpointWanted')}</p>` : html`<ul>${deliveries.map((d) => deliveryLine(dash, d))}</ul>`}</li>`;
}

/** A refund, found by its id on the refunds list (it has no page of its own). */
const refundLink = (refund: Refund) => link(`/dashboard/refunds?q=${refund.id}`, refund.id);

function refundItem(dash: Dash, refund: Refund): Html {
  return html`<li><span>${when(refund.created)}</span> ${dash.t('refundInTimeline')} ${refundLink(refund)} · ${money(dash, refund.amount)} · ${badge(dash, 'refund', refund.status)}</li>`;
}

/**
 * The object's events and a payment's refunds, oldest first, each event with where it was delivered. A refund's own
 * events are about the refund, not the payment, so without it here the payment's timeline would not show it at all.
 * A payment's entries include its receipts' events (receipt.fiscalized, receipt.failed) for the same reason.
 */
function timeline(dash: Dash, entries: Entry[], refunds: Refund[] = []): Html {
  const { t } = dash;
  if (entries.length === 0 && refunds.length === 0) return html`<h2>${t('timeline')}</h2><p class="empty">${t('noEventsYet')}</p>`;
  const items = [
    ...entries.map((entry) => ({ at: entry.event.created, item: eventItem(dash, entry) })),
    ...refunds.map((refund) => ({ at: refund.created, item: refundItem(dash, refund) })),
  ].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  return html`<h2>${t('timeline')}</h2><ol class="timeline">${items.map(({ item }) => item)}</ol>`;
}

/**
 * A confirmed action button: its form carries the form token and a fresh idempotency key. `danger` false for an action
 * that takes nothing away (turning a payment link on again): its button is drawn as any other.
 */
export function actionForm(dash: Dash, action: string, label: MessageKey, confirm: MessageKey, danger = true): Html {
  return html`<form method="post" action="${action}" data-confirm="${dash.t(confirm)}">${csrfField(dash)}
    ${formKeyField()}
    <button type="submit"${danger ? html` class="danger"` : ''}>${dash.t(label)}</button></form>`;
}

/** Why the API refused a refund or a cancel, by its error code, in the page's words. */
const REFUSALS: Record<string, MessageKey> = {
  ALREADY_REFUNDED: 'refusedAlreadyRefunded',
  PAYMENT_NOT_REFUNDABLE: 'refusedNotRefundable',
  ORDER_NOT_CANCELABLE: 'refusedNotCancelable',
  ORDER_DEBIT_IN_PROGRESS: 'refusedDebitInProgress',
};
/** An error code in the address; anything else there is not shown (a link must not put its own words on the page). */
export const ERROR_CODE = /^[A-Z0-9_]{1,40}$/;

const outcome = (dash: Dash, request: DetailRequest) => {
  const { done, error } = request.query;
  if (done === 'refunded') return notice('ok', dash.t('refundDone'));
  if (done === 'canceled') return notice('ok', dash.t('orderCanceled'));
  if (typeof error !== 'string' || !ERROR_CODE.test(error)) return '';
  const refusal = messageNamed(REFUSALS, error);
  return notice('error', refusal ? dash.t(refusal) : dash.t('actionRefused', { code: error }));
};

async function paymentPage(deps: DashboardDeps, request: DetailRequest, signed: Signed, merchant: Merchant, said: HoldSaid = {}): Promise<Html> {
  const dash = dashOf(request);
  const intent = await deps.payments.get(merchant, request.params.id);
  // Every refund of the payment: at most one has not failed, so the largest page holds them all. Its receipts are of
  // its product and mode, as it is (read once the payment was found for this merchant).
  const [refunds, receiptRows] = await Promise.all([deps.refunds.list(merchant, { limit: 100, paymentIntent: intent.id }), deps.receipts.ofPayment(intent.id)]);
  const receipts = receiptRows.map((row) => deps.receipts.present(row));
  const [own, ...ofReceipts] = await Promise.all([intent.id, ...receipts.map((receipt) => receipt.id)].map((id) => deps.webhooks.timeline(merchant, id)));
  const entries = [...own!, ...ofReceipts.flatMap((events, index) => events.map((entry) => ({ ...entry, about: receiptLink(dash, receipts[index]!) })))];
  const rows: Array<[MessageKey, Value]> = [
    ['amount', money(dash, intent.amount)],
    ['fee', money(dash, intent.fee)],
    ['status', html`${paymentBadge(dash, intent)}${intent.failureCode ? html` ${failureReason(dash, intent.failureCode)}` : ''}`],
    ...holdRows(dash, intent, own!.map((entry) => entry.event)),
    ['amountRefunded', money(dash, intent.amountRefunded)],
    ['card', html`${cardShown(intent)}${intent.card ? html` · ${link(`/dashboard/payments?card=${intent.card}`, intent.card)}` : ''}`],
    ['order', intent.order ? link(`/dashboard/orders/${intent.order}`, intent.order) : '—'],
    ['description', intent.description ?? '—'],
    ['metadata', Object.keys(intent.metadata).length ? html`<code>${JSON.stringify(intent.metadata)}</code>` : '—'],
    ['created', when(intent.created)],
  ];
  const refundRows = refunds.data.map((refund) => html`<li>${refundLink(refund)} · ${money(dash, refund.amount)} · ${badge(dash, 'refund', refund.status)} · ${when(refund.created)}</li>`);
  const canRefund = CHANGES.includes(signed.session.role) && intent.status === 'SUCCEEDED' && intent.amountRefunded === 0;
  const hold = holdPart(dash, intent, said);
  return page(dash, {
    title: `${dash.t('paymentTitle')} ${intent.id}`,
    path: `/dashboard/payments/${intent.id}`,
    section: 'payments',
    body: html`${outcome(dash, request)}${holdDone(dash, intent, request.query.done)}${hold.above}${fieldsList(dash, rows)}${hold.forms}
      ${canRefund ? actionForm(dash, `/dashboard/payments/${intent.id}/refund`, 'refundPayment', 'refundConfirm') : ''}
      <h2>${dash.t('navRefunds')}</h2>${refundRows.length ? html`<ul>${refundRows}</ul>` : html`<p class="empty">${dash.t('noRefunds')}</p>`}
      ${paymentReceipts(dash, intent, receipts)}
      ${timeline(dash, entries, refunds.data)}`,
  });
}

async function orderPage(deps: DashboardDeps, request: DetailRequest, signed: Signed, merchant: Merchant): Promise<Html> {
  const dash = dashOf(request);
  const order = await deps.orders.get(merchant, request.params.id);
  const rows: Array<[MessageKey, Value]> = [
    ['amount', money(dash, order.amount)],
    ['status', badge(dash, 'order', order.status)],
    ['payment', order.paymentIntent ? link(`/dashboard/payments/${order.paymentIntent}`, order.paymentIntent) : '—'],
    ['customer', order.customerRef ?? '—'],
    ['description', order.description ?? '—'],
    ['paymentLink', order.paymentLink ? link(`/dashboard/payment-links/${order.paymentLink}`, order.paymentLink) : '—'],
    ['expires', when(order.expiresAt)],
    ['created', when(order.created)],
  ];
  const canCancel = CHANGES.includes(signed.session.role) && order.status === 'PENDING';
  return page(dash, {
    title: `${dash.t('orderTitle')} ${order.id}`,
    path: `/dashboard/orders/${order.id}`,
    section: 'orders',
    body: html`${outcome(dash, request)}${fieldsList(dash, rows)}
      ${canCancel ? actionForm(dash, `/dashboard/orders/${order.id}/cancel`, 'cancelOrder', 'cancelConfirm') : ''}
      ${timeline(dash, await deps.webhooks.timeline(merchant, order.id))}`,
  });
}

/**
 * An action by an owner or developer: the capability's command under the form's idempotency key (the same key again
 * replays the first answer), audited with the change; back to the object's page, saying what happened or why not.
 */
function action(deps: DashboardDeps, kind: 'refund' | 'cancel') {
  return async (request: DetailRequest, reply: FastifyReply) => {
    const signed = signedIn(request);
    requireRole(signed, CHANGES);
    const key = requiredFormKeyOf(request.body);
    const { id } = request.params;
    const answer =
      kind === 'refund'
        ? await deps.refunds.create(invocationOf(request, signed, { paymentIntent: id }, key), { paymentIntent: id })
        : await deps.orders.cancel(invocationOf(request, signed, { order: id }, key), id);
    const back = kind === 'refund' ? `/dashboard/payments/${id}` : `/dashboard/orders/${id}`;
    if (!answer.ok) return reply.redirect(`${back}?error=${encodeURIComponent(answer.error.code)}`, 303);
    return reply.redirect(`${back}?done=${kind === 'refund' ? 'refunded' : 'canceled'}`, 303);
  };
}

export function detailPages(app: FastifyInstance, deps: DashboardDeps): void {
  const show = (render: typeof paymentPage) => async (request: DetailRequest, reply: FastifyReply) => {
    const signed = signedIn(request);
    return sendPage(reply, await render(deps, request, signed, merchantOfSigned(signed)));
  };
  app.get('/payments/:id', ROUTE, show(paymentPage));
  app.get('/orders/:id', ROUTE, show(orderPage));
  app.post('/payments/:id/refund', ROUTE, action(deps, 'refund'));
  app.post('/orders/:id/cancel', ROUTE, action(deps, 'cancel'));
  holdRoutes(app, deps, (request, said) => {
    const signed = signedIn(request);
    return paymentPage(deps, request, signed, merchantOfSigned(signed), said);
  });
}
