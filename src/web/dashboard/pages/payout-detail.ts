// A payout's page: its fields; when it failed, what that means and what to do; its timeline (made, sent to the bank,
// paid or failed or canceled, with its events and their deliveries); and its transactions: those an automatic payout
// paid out, which add up to it, or a manual payout's own rows in the statement. Owners and developers cancel it here
// while it is PENDING, under the form's idempotency key, through the same command as the API.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Merchant } from '../../../core/merchant.js';
import type { List } from '../../../core/pagination.js';
import type { Payout } from '../../../modules/payouts/schema.js';
import type { PayoutTimeline } from '../../../modules/payouts/service.js';
import { CHANGES, dashOf, invocationOf, merchantOfSigned, requiredFormKeyOf, requireRole, ROUTE, signedIn, type Dash, type Signed } from '../context.js';
import type { DashboardDeps, Form } from '../deps.js';
import { html, type Html, type Value } from '../../html.js';
import { failureKey, formatLongDay, type MessageKey } from '../i18n.js';
import { notice, page, sendPage, when } from '../layout.js';
import { actionForm, ERROR_CODE, eventItem, fieldsList, type Entry } from './details.js';
import { money, table } from './lists.js';
import { accountShown } from './payout-account.js';
import { kindText, payoutBadge } from './payouts.js';
import { STATEMENT_COLUMNS, withPayments, type StatementItem } from './statement.js';

type DetailRequest = FastifyRequest<{ Params: { id: string }; Querystring: { done?: string; error?: string }; Body: Form }>;

/** Transactions a payout's page shows at most: the statement, narrowed to the payout, pages through them all. */
const TRANSACTIONS_SHOWN = 100;

const outcome = (dash: Dash, request: DetailRequest): Value => {
  const { done, error } = request.query;
  if (done === 'created') return notice('ok', dash.t('payOutDone'));
  if (done === 'canceled') return notice('ok', dash.t('payoutCanceledDone'));
  if (typeof error !== 'string' || !ERROR_CODE.test(error)) return '';
  return notice('error', error === 'PAYOUT_NOT_CANCELABLE' ? dash.t('refusedPayoutNotCancelable') : dash.t('actionRefused', { code: error }));
};

/** A failed payout: why, in the page's words, where the money is now, and what to do. */
function failureNote(dash: Dash, payout: Payout): Value {
  if (payout.status !== 'FAILED') return '';
  const { t } = dash;
  const code = payout.failureCode ?? '';
  const reason = failureKey(code, 'payoutFailure');
  const help = failureKey(code, 'payoutFailureHelp');
  return html`<div class="notice warning failure-note" role="note"><p><strong>${reason ? t(reason) : code}</strong></p>
  <p>${t(help ?? 'payoutFailedGeneric')} <a href="/dashboard/payout-account">${t('seePayoutAccount')}</a></p></div>`;
}

function payoutFields(dash: Dash, payout: Payout): Array<[MessageKey, Value]> {
  // A payout that failed or was canceled never arrives.
  const arrives =
    payout.status === 'FAILED' || payout.status === 'CANCELED' ? '—' : html`<time datetime="${payout.arrivalDate}">${formatLongDay(dash.lang, payout.arrivalDate)}</time>`;
  return [
    ['amount', money(dash, payout.amount)],
    ['status', payoutBadge(dash, payout)],
    ['payoutKind', kindText(dash, payout)],
    ['arrivalDate', arrives],
    ['destination', accountShown(payout.destination)],
    ['created', when(payout.created)],
  ];
}

const FINISHED: Record<Payout['status'], MessageKey | null> = {
  PENDING: null,
  IN_TRANSIT: null,
  PAID: 'payoutStepPaid',
  FAILED: 'payoutStepFailed',
  CANCELED: 'payoutStepCanceled',
};

/**
 * The payout's states with their times, its events (with where each was delivered) among them, oldest first; then
 * what comes next while it is not finished.
 */
function stateTimeline(dash: Dash, payout: Payout, times: PayoutTimeline, events: Entry[]): Html {
  const { t } = dash;
  const step = (at: Date, text: string) => ({ at: at.getTime(), item: html`<li><span>${when(at)}</span> ${text}</li>` });
  const steps = [step(times.created, t(payout.automatic ? 'payoutStepCreatedAutomatic' : 'payoutStepCreatedManual'))];
  if (times.sent) steps.push(step(times.sent, t('payoutStepSent')));
  const finished = FINISHED[payout.status];
  if (times.finished && finished) steps.push(step(times.finished, t(finished)));
  // A step and the event it sent share their transaction's time: the step comes first (the sort keeps the order).
  const items = [...steps, ...events.map((entry) => ({ at: Date.parse(entry.event.created), item: eventItem(dash, entry) }))].sort((a, b) => a.at - b.at);
  const next = payout.status === 'PENDING' ? 'payoutStepNotSent' : payout.status === 'IN_TRANSIT' ? 'payoutStepAwaitingBank' : null;
  return html`<h2>${t('timeline')}</h2><ol class="timeline">${items.map(({ item }) => item)}${next ? html`<li class="next">${t(next)}</li>` : ''}</ol>`;
}

/**
 * An automatic payout's transactions (those it paid out), or a manual payout's own rows: a manual payout pays out an
 * amount, and the next automatic payout counts its rows among its own.
 */
async function transactionsOf(deps: DashboardDeps, merchant: Merchant, payout: Payout): Promise<List<StatementItem>> {
  const filter = payout.automatic ? { payout: payout.id } : { source: payout.id };
  const found = await deps.ledger.statement(merchant, { ...filter, limit: TRANSACTIONS_SHOWN });
  return { ...found, data: await withPayments(deps.refunds, merchant, found.data) };
}

function transactions(dash: Dash, payout: Payout, found: List<StatementItem>): Html {
  const { t } = dash;
  const query = payout.automatic ? `payout=${payout.id}` : `q=${payout.id}`;
  const links = html`<p class="export"><a href="/dashboard/statement?${query}">${t('seeInStatement')}</a> · <a href="/dashboard/statement.csv?${query}" download>${t('exportTransactionsCsv')}</a></p>`;
  const total = found.data.reduce((sum, row) => sum + BigInt(row.net), 0n);
  // The total only when every row is on the page: an automatic payout's add up to it.
  const whole = payout.automatic && !found.has_more && found.data.length > 0;
  const sum = whole ? html`<p class="sums">${t('payoutTransactionsTotal', { total: money(dash, total) })}</p>` : '';
  const more = found.has_more ? html`<p class="hint">${t('payoutTransactionsMore', { count: found.data.length })}</p>` : '';
  return html`<h2>${t('payoutTransactions')}</h2>${payout.automatic ? '' : html`<p class="hint">${t('payoutManualRows')}</p>`}${links}
${table(dash, { columns: STATEMENT_COLUMNS, caption: payout.automatic ? 'payoutTransactionsCaption' : 'payoutOwnRowsCaption' }, found.data, null)}${sum}${more}`;
}

async function payoutPage(deps: DashboardDeps, request: DetailRequest, signed: Signed): Promise<Html> {
  const dash = dashOf(request);
  const merchant = merchantOfSigned(signed);
  const { payout, timeline } = await deps.payouts.detail(merchant, request.params.id);
  const [events, rows] = await Promise.all([deps.webhooks.timeline(merchant, payout.id), transactionsOf(deps, merchant, payout)]);
  const canCancel = CHANGES.includes(signed.session.role) && payout.status === 'PENDING';
  return page(dash, {
    title: `${dash.t('payoutTitle')} ${payout.id}`,
    path: `/dashboard/payouts/${payout.id}`,
    section: 'payouts',
    body: html`${outcome(dash, request)}${failureNote(dash, payout)}${fieldsList(dash, payoutFields(dash, payout))}
      ${canCancel ? actionForm(dash, `/dashboard/payouts/${payout.id}/cancel`, 'cancelPayout', 'cancelPayoutConfirm') : ''}
      ${stateTimeline(dash, payout, timeline, events)}
      ${transactions(dash, payout, rows)}`,
  });
}

/** Cancels a PENDING payout; back to its page, saying so or why not. */
async function cancel(deps: DashboardDeps, request: DetailRequest, reply: FastifyReply) {
  const signed = signedIn(request);
  requireRole(signed, CHANGES);
  const key = requiredFormKeyOf(request.body);
  const { id } = request.params;
  const answer = await deps.payouts.cancel(invocationOf(request, signed, { payout: id }, key), id);
  const back = `/dashboard/payouts/${id}`;
  return reply.redirect(answer.ok ? `${back}?done=canceled` : `${back}?error=${encodeURIComponent(answer.error.code)}`, 303);
}

export function payoutDetailPages(app: FastifyInstance, deps: DashboardDeps): void {
  app.get('/payouts/:id', ROUTE, async (request: DetailRequest, reply) => sendPage(reply, await payoutPage(deps, request, signedIn(request))));
  app.post('/payouts/:id/cancel', ROUTE, (request: DetailRequest, reply) => cancel(deps, request, reply));
}
