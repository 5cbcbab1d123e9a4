// The activation queue: merchants' requests to go live, the longest waiting first, each opened to check the business
// and the account its live payouts go to, then approved or rejected by an admin through the operator API's own actions
// (each audited in the transaction of its change). Support reads.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../core/errors.js';
import { BUSINESS_CATEGORIES, REJECTION_REASON_MAX, type Activation } from '../../../modules/activations/schema.js';
import { consoleActor, type OperatorSession } from '../../../modules/operators/service.js';
import type { OperatorProductRow } from '../../../modules/products/store.js';
import { DashboardError, dashOf, field, type Dash } from '../../dashboard/context.js';
import type { Form } from '../../dashboard/deps.js';
import type { MessageKey } from '../../dashboard/i18n.js';
import { csrfField, notice, sendPage, timeElement, when } from '../../dashboard/layout.js';
import { formField } from '../../dashboard/pages/form-fields.js';
import { table, type Column } from '../../dashboard/pages/lists.js';
import { accountShown } from '../../dashboard/pages/payout-account.js';
import { html, type Html, type Value } from '../../html.js';
import { ACTS, ROUTE, operatorOf, requireOperatorRole } from '../context.js';
import type { ConsoleDeps } from '../deps.js';
import { consolePage } from '../layout.js';
import { queryText, yesNo } from './shared.js';

const QUEUE_PATH = '/operator/activations';
const QUEUE_STATUSES = ['submitted', 'approved', 'rejected'] as const;
type QueueStatus = (typeof QUEUE_STATUSES)[number];
/** Requests a page of the queue shows. */
const PAGE_SIZE = 50;

export const reviewPath = (productId: string) => `${QUEUE_PATH}/${encodeURIComponent(productId)}`;

/** Where a product's request stands, as the dashboard says it. */
export const activationBadge = (dash: Dash, status: Activation['status'] | null) => {
  const shown = status ?? 'not_submitted';
  return html`<span class="status s-${shown}">${dash.t(`activation_${shown}`)}</span>`;
};

const categoryLabel = (dash: Dash, value: string) => ((BUSINESS_CATEGORIES as readonly string[]).includes(value) ? dash.t(`category_${value as (typeof BUSINESS_CATEGORIES)[number]}`) : value);

/** A reason the merchant reads: the words of its field, and the most characters the API takes. */
export interface ReasonSpec {
  label: MessageKey;
  hint: MessageKey;
  max: number;
}

const REJECTION: ReasonSpec = { label: 'opReviewRejectReason', hint: 'opReviewRejectHint', max: REJECTION_REASON_MAX };

/** The field of a reason, with its hint; after a refused form, with what was typed and what is wrong with it. */
export function reasonField(dash: Dash, prefix: string, reason: ReasonSpec, state: { value: string; error?: string }): Html {
  const spec = { name: 'reason', label: reason.label, hint: reason.hint, attributes: html`rows="3" maxlength="${reason.max}"`, control: { kind: 'textarea' } } as const;
  return formField(dash, prefix, spec, { value: state.value, error: state.error, focus: state.error !== undefined, hint: dash.t(reason.hint, { max: reason.max }) });
}

/** The form's reason, its line breaks as a browser counts them; or what is wrong with it and what was typed. */
export function reasonOf(dash: Dash, form: Form | undefined, max: number): { reason: string } | { typed: string; error: string } {
  const typed = field(form, 'reason').replace(/\r\n?/g, '\n');
  if (typed === '') return { typed, error: dash.t('opReasonRequired') };
  if (typed.length > max) return { typed, error: dash.t('opReasonTooLong', { max }) };
  return { reason: typed };
}

interface Queue {
  items: Activation[];
  /** How the list is ordered, and how much of it is shown. */
  note: string;
  /** The next page's address, if there is one. */
  older: string | null;
}

/** The waiting requests, longest waiting first, a page at a time after the request `after`. */
async function waiting(deps: ConsoleDeps, dash: Dash, after: string): Promise<Queue> {
  const page = await deps.activations.list({ limit: PAGE_SIZE, status: 'submitted', ...(after === '' ? {} : { starting_after: after }) }, true);
  const later = page.has_more ? `${QUEUE_PATH}?${new URLSearchParams({ status: 'submitted', starting_after: page.data.at(-1)!.product })}` : null;
  return { items: page.data, note: dash.t('opQueueOldestFirst'), older: later };
}

/** Answered requests, latest submitted first, a page at a time after the request `after`. */
async function decided(deps: ConsoleDeps, dash: Dash, status: Exclude<QueueStatus, 'submitted'>, after: string): Promise<Queue> {
  const page = await deps.activations.list({ status, limit: PAGE_SIZE, ...(after === '' ? {} : { starting_after: after }) });
  const older = page.has_more ? `${QUEUE_PATH}?${new URLSearchParams({ status, starting_after: page.data.at(-1)!.product })}` : null;
  return { items: page.data, note: dash.t('opQueueNewestFirst'), older };
}

type Row = Activation & { id: string };

const QUEUE_COLUMNS: Column<Row>[] = [
  { label: 'opColBusiness', cell: (item) => html`<a href="${reviewPath(item.product)}">${item.legalName}</a> <small class="hint">${item.tin}</small>` },
  { label: 'opColProduct', cell: (item) => html`${item.productName} <code>${item.product}</code>` },
  { label: 'businessCategory', cell: (item, dash) => categoryLabel(dash, item.category) },
  { label: 'opColSubmitted', cell: (item) => timeElement(item.submitted) },
  { label: 'status', cell: (item, dash) => activationBadge(dash, item.status) },
];

function queuePage(dash: Dash, operator: OperatorSession, status: QueueStatus, queue: Queue): Html {
  const { t } = dash;
  const options = QUEUE_STATUSES.map((value) => html`<option value="${value}"${value === status ? html` selected` : ''}>${t(`activation_${value}`)}</option>`);
  const rows = queue.items.map((item) => ({ ...item, id: item.product }));
  const listed = rows.length === 0 ? html`<p class="empty">${t('opQueueEmpty')}</p>` : table(dash, { columns: QUEUE_COLUMNS, caption: 'opQueueCaption' }, rows, null);
  const body = html`<p class="lead">${t('opQueueIntro')}</p>
<form class="filters" method="get" action="${QUEUE_PATH}" role="search" aria-label="${t('filters')}">
  <label>${t('status')} <select name="status">${options}</select></label>
  <button type="submit">${t('applyFilters')}</button>
</form>
<p class="hint">${queue.note}</p>
${listed}
${queue.older ? html`<p><a href="${queue.older}">${t(status === 'submitted' ? 'opProductsNext' : 'olderItems')}</a></p>` : ''}`;
  const path = status === 'submitted' ? QUEUE_PATH : `${QUEUE_PATH}?status=${status}`;
  return consolePage(dash, operator, { title: t('opQueueTitle'), path, section: 'activations', body });
}

/** What a review page says beyond the request: what was just done, what was refused, the reason as typed. */
interface Said {
  done?: string;
  error?: string;
  reason?: { value: string; error?: string };
}

/** Where the request stands: when and by whom it was sent, and, once answered, when and (a rejection) why. */
function standing(dash: Dash, activation: Activation, product: OperatorProductRow): Html {
  const { t } = dash;
  const who = product.activation_submitted_by ?? t('opReviewSubmittedBy');
  const answer = activation.decided === null ? '' : html`<p>${t('opReviewDecided', { when: when(activation.decided) })}</p>`;
  const reason = activation.rejectionReason === null ? '' : html`<p>${t('opReviewReason')}</p><blockquote class="reason">${activation.rejectionReason}</blockquote>`;
  return html`<section class="card activation-status s-${activation.status}" aria-labelledby="review-status-title">
  <h2 id="review-status-title">${t('activationStatus')}: ${activationBadge(dash, activation.status)}</h2>
  <p>${t('opReviewSubmitted', { when: when(activation.submitted), who })}</p>
  ${answer}${reason}
</section>`;
}

/** The request as the merchant sent it (the account number masked), and the product it is for. */
function requestFacts(dash: Dash, activation: Activation, product: OperatorProductRow): Html {
  const { t } = dash;
  const account = activation.payoutAccount;
  // The schema takes only http(s) links; checked again here, as the page makes it a link.
  const website = /^https?:\/\//i.test(activation.website) ? html`<a href="${activation.website}" rel="noopener noreferrer" target="_blank">${activation.website}</a>` : activation.website;
  const owners = product.owner_emails.length === 0 ? t('opProductNoOwners') : product.owner_emails.join(', ');
  return html`<h2>${t('opReviewBusiness')}</h2>
<dl class="facts">
<dt>${t('legalName')}</dt><dd>${activation.legalName}</dd>
<dt>${t('businessTin')}</dt><dd>${activation.tin}</dd>
<dt>${t('legalAddress')}</dt><dd>${activation.legalAddress}</dd>
<dt>${t('website')}</dt><dd>${website}</dd>
<dt>${t('businessCategory')}</dt><dd>${categoryLabel(dash, activation.category)}</dd>
</dl>
<h2>${t('activationPayoutAccount')}</h2>
<dl class="facts">
<dt>${t('opReviewAccount')}</dt><dd class="masked">${accountShown(account)}</dd>
<dt>${t('holderName')}</dt><dd>${account.holderName}</dd>
<dt>${t('holderTin')}</dt><dd>${account.tin}</dd>
</dl>
<h2>${t('opReviewProduct')}</h2>
<dl class="facts">
<dt>${t('opColName')}</dt><dd><a href="/operator/products/${encodeURIComponent(product.id)}">${product.name}</a></dd>
<dt>${t('id')}</dt><dd><code>${product.id}</code></dd>
<dt>${t('opProductOwners')}</dt><dd>${owners}</dd>
<dt>${t('opColLive')}</dt><dd>${yesNo(dash, product.live_enabled)}</dd>
<dt>${t('opColSuspended')}</dt><dd>${product.suspended_at === null ? t('opNo') : t('opProductSuspendedSince', { when: when(product.suspended_at) })}</dd>
</dl>`;
}

/**
 * The forms that approve and reject the request, shown to an admin while it waits; support is told instead that an
 * admin decides.
 */
function decisionForms(dash: Dash, operator: OperatorSession, activation: Activation, said: Said): Value {
  const { t } = dash;
  if (activation.status !== 'submitted') return '';
  if (!ACTS.includes(operator.role)) return html`<p class="hint">${t('opReviewSupportOnly')}</p>`;
  const base = reviewPath(activation.product);
  return html`<section class="card" aria-labelledby="decide-title"><h2 id="decide-title">${t('opReviewDecide')}</h2>
  <form class="stack" method="post" action="${base}/approve" data-confirm="${t('opReviewApproveConfirm')}" data-once>${csrfField(dash)}
    <p class="hint">${t('opReviewApproveHint')}</p>
    <button type="submit" class="primary">${t('opReviewApprove')}</button>
  </form>
  <form class="stack" method="post" action="${base}/reject" data-once>${csrfField(dash)}
    ${reasonField(dash, 'reject', REJECTION, said.reason ?? { value: '' })}
    <button type="submit" class="danger">${t('opReviewReject')}</button>
  </form>
</section>`;
}

function reviewPage(dash: Dash, operator: OperatorSession, activation: Activation, product: OperatorProductRow, said: Said): Html {
  // A refused reason is said at its field; once the request is answered there is no field, and the answer is the news.
  const error = said.error ?? (activation.status !== 'submitted' && said.reason?.error !== undefined ? dash.t('opReviewAlreadyDecided') : undefined);
  const body = html`${notice('ok', said.done)}${notice('error', error)}
${standing(dash, activation, product)}
${requestFacts(dash, activation, product)}
${decisionForms(dash, operator, activation, said)}
<p><a href="${QUEUE_PATH}">${dash.t('opQueueTitle')}</a></p>`;
  return consolePage(dash, operator, { title: dash.t('opReviewTitle', { name: product.name }), path: reviewPath(activation.product), section: 'activations', body });
}

type Done = 'approved' | 'rejected';
/** What `?done=` says after a decision; a Map, so that `?done=toString` finds nothing. */
const DONE = new Map<string, MessageKey>([['approved', 'opReviewApproved'], ['rejected', 'opReviewRejected']] satisfies Array<[Done, MessageKey]>);

/** Runs a decision; false when the request was answered already (409), which the page says. */
async function decidedNow(decide: () => Promise<unknown>): Promise<boolean> {
  try {
    await decide();
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'INVALID_STATE') return false;
    throw error;
  }
}

export function activationPages(app: FastifyInstance, deps: ConsoleDeps): void {
  type Review = FastifyRequest<{ Params: { productId: string }; Body: Form }>;
  const show = async (request: Review, reply: FastifyReply, said: Said, status = 200) => {
    const { productId } = request.params;
    const [activation, product] = await Promise.all([deps.activations.get(productId), deps.products.operatorView(productId)]);
    return sendPage(reply, reviewPage(dashOf(request), operatorOf(request), activation, product, said), status);
  };
  const alreadyDecided = (request: Review, reply: FastifyReply) => show(request, reply, { error: dashOf(request).t('opReviewAlreadyDecided') }, 409);
  const done = (reply: FastifyReply, productId: string, what: Done) => reply.redirect(`${reviewPath(productId)}?done=${what}`, 303);

  app.get('/activations', ROUTE, async (request, reply) => {
    const operator = operatorOf(request);
    const dash = dashOf(request);
    const status = queryText(request, 'status') || 'submitted';
    if (!(QUEUE_STATUSES as readonly string[]).includes(status)) throw new DashboardError(400, 'badForm');
    const queue = status === 'submitted' ? await waiting(deps, dash, queryText(request, 'starting_after')) : await decided(deps, dash, status as Exclude<QueueStatus, 'submitted'>, queryText(request, 'starting_after'));
    return sendPage(reply, queuePage(dash, operator, status as QueueStatus, queue));
  });
  app.get('/activations/:productId', ROUTE, async (request: Review, reply) => {
    operatorOf(request);
    const key = DONE.get(queryText(request, 'done'));
    return show(request, reply, { done: key && dashOf(request).t(key) });
  });
  app.post('/activations/:productId/approve', ROUTE, async (request: Review, reply) => {
    const session = operatorOf(request);
    requireOperatorRole(session, ACTS);
    const { productId } = request.params;
    if (!(await decidedNow(() => deps.actions.approve(consoleActor(session), productId)))) return alreadyDecided(request, reply);
    return done(reply, productId, 'approved');
  });
  app.post('/activations/:productId/reject', ROUTE, async (request: Review, reply) => {
    const session = operatorOf(request);
    requireOperatorRole(session, ACTS);
    const { productId } = request.params;
    const read = reasonOf(dashOf(request), request.body, REJECTION.max);
    if ('error' in read) return show(request, reply, { reason: { value: read.typed, error: read.error } }, 400);
    if (!(await decidedNow(() => deps.actions.reject(consoleActor(session), productId, read.reason)))) return alreadyDecided(request, reply);
    return done(reply, productId, 'rejected');
  });
}
