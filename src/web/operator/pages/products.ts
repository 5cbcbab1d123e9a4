// Products: a search by id, name or owner's e-mail; each product's details with the operator actions on it; and, to
// admins, its suspension and resumption, its fee and whether its live payments need fiscal lines, through the operator
// API's own actions (each audited in the transaction of its change). Support reads.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OperatorSession } from '../../../modules/operators/service.js';
import { consoleActor } from '../../../modules/operators/service.js';
import type { AuditRow } from '../../../modules/operators/store.js';
import { FEE_BPS_MAX, SEARCH_PAGE_MAX, SUSPENSION_REASON_MAX } from '../../../modules/products/service.js';
import type { OperatorProductRow } from '../../../modules/products/store.js';
import { dashOf, field, fields, type Dash } from '../../dashboard/context.js';
import type { Form } from '../../dashboard/deps.js';
import { NUMBER_WRITING, type MessageKey } from '../../dashboard/i18n.js';
import { csrfField, notice, sendPage, timeElement, when } from '../../dashboard/layout.js';
import { formField } from '../../dashboard/pages/form-fields.js';
import { table, type Column } from '../../dashboard/pages/lists.js';
import { html, type Html, type Value } from '../../html.js';
import { ACTS, ROUTE, operatorOf, requireOperatorRole } from '../context.js';
import type { ConsoleDeps } from '../deps.js';
import { consolePage } from '../layout.js';
import { activationBadge, reasonField, reasonOf, reviewPath, type ReasonSpec } from './activations.js';
import { auditTable, queryText, yesNo } from './shared.js';

const PRODUCTS_PATH = '/operator/products';
const productPath = (id: string) => `${PRODUCTS_PATH}/${encodeURIComponent(id)}`;
/** Operator actions a product's page shows: the latest; the audit log holds them all. */
const AUDIT_SHOWN = 20;
const SUSPENSION: ReasonSpec = { label: 'opSuspendReason', hint: 'opSuspendHint', max: SUSPENSION_REASON_MAX };

/** Basis points as a percent with two decimals, from integers only, in the language's decimal mark. */
export const feeShown = (dash: Dash, bps: number) =>
  dash.t('opFeeShown', { percent: `${Math.trunc(bps / 100)}${NUMBER_WRITING[dash.lang].decimal}${String(bps % 100).padStart(2, '0')}`, bps });

const suspendedCell = (dash: Dash, since: Date | null): Value => (since === null ? dash.t('opNo') : html`${dash.t('opYes')} · ${timeElement(since)}`);

const PRODUCT_COLUMNS: Column<OperatorProductRow>[] = [
  { label: 'opColName', cell: (item) => html`<a href="${productPath(item.id)}">${item.name}</a>` },
  { label: 'id', cell: (item) => html`<code>${item.id}</code>` },
  { label: 'opColLive', cell: (item, dash) => yesNo(dash, item.live_enabled) },
  { label: 'opColSuspended', cell: (item, dash) => suspendedCell(dash, item.suspended_at) },
  { label: 'opColFee', cell: (item, dash) => feeShown(dash, item.fee_bps), num: true },
  { label: 'opColReceipts', cell: (item, dash) => yesNo(dash, item.receipt_required) },
  { label: 'opColActivation', cell: (item, dash) => activationBadge(dash, item.activation_status) },
];

function searchPage(dash: Dash, operator: OperatorSession, q: string, found: { rows: OperatorProductRow[]; next: string | null }): Html {
  const { t } = dash;
  const listed = found.rows.length === 0 ? html`<p class="empty">${t('opProductsNone')}</p>` : table(dash, { columns: PRODUCT_COLUMNS, caption: 'opProductsCaption' }, found.rows, null);
  const body = html`<form class="filters" method="get" action="${PRODUCTS_PATH}" role="search" aria-label="${t('search')}">
  <label>${t('opProductSearch')} <input type="search" name="q" value="${q}" maxlength="200" autocapitalize="none" spellcheck="false"></label>
  <button type="submit">${t('search')}</button> <a href="${PRODUCTS_PATH}">${t('clearFilters')}</a>
</form>
${listed}
${found.next ? html`<p><a href="${found.next}">${t('opProductsNext')}</a></p>` : ''}`;
  const path = q === '' ? PRODUCTS_PATH : `${PRODUCTS_PATH}?${new URLSearchParams({ q })}`;
  return consolePage(dash, operator, { title: t('opProductsTitle'), path, section: 'products', body });
}

/** What a product's page says beyond the product: what was just done or refused, and what a refused form held. */
interface Said {
  done?: string;
  error?: string;
  suspend?: { value: string; error?: string };
  settings?: { fee: string; feeError: string; receiptRequired: boolean };
}

function productFacts(dash: Dash, product: OperatorProductRow): Html {
  const { t } = dash;
  const owners = product.owner_emails.length === 0 ? t('opProductNoOwners') : product.owner_emails.join(', ');
  const suspension =
    product.suspended_at === null
      ? t('opProductNotSuspended')
      : html`${t('opProductSuspendedSince', { when: when(product.suspended_at) })}<blockquote class="reason">${product.suspension_reason}</blockquote>`;
  const activation = product.activation_status === null ? activationBadge(dash, null) : html`${activationBadge(dash, product.activation_status)} <a href="${reviewPath(product.id)}">${t('opProductOpenRequest')}</a>`;
  return html`<dl class="facts">
<dt>${t('opColName')}</dt><dd>${product.name}</dd>
<dt>${t('id')}</dt><dd><code>${product.id}</code></dd>
<dt>${t('opProductAccount')}</dt><dd>${product.account_id === null ? t('opProductNoAccount') : html`<code>${product.account_id}</code>`}</dd>
<dt>${t('opProductOwners')}</dt><dd>${owners}</dd>
<dt>${t('created')}</dt><dd>${timeElement(product.created_at)}</dd>
<dt>${t('opColLive')}</dt><dd>${yesNo(dash, product.live_enabled)}</dd>
<dt>${t('opColFee')}</dt><dd>${feeShown(dash, product.fee_bps)}</dd>
<dt>${t('opColReceipts')}</dt><dd>${yesNo(dash, product.receipt_required)}</dd>
<dt>${t('opProductSuspension')}</dt><dd>${suspension}</dd>
<dt>${t('opColActivation')}</dt><dd>${activation}</dd>
</dl>`;
}

/** Suspend (with the reason the merchant reads) while it takes payments; resume while suspended. */
function suspensionForm(dash: Dash, product: OperatorProductRow, said: Said): Html {
  const { t } = dash;
  const path = productPath(product.id);
  if (product.suspended_at !== null) {
    return html`<section class="card" aria-labelledby="resume-title"><h2 id="resume-title">${t('opResumeTitle')}</h2><p class="hint">${t('opResumeIntro')}</p>
  <form class="stack" method="post" action="${path}/resume" data-once>${csrfField(dash)}<button type="submit" class="primary">${t('opResume')}</button></form>
</section>`;
  }
  return html`<section class="card" aria-labelledby="suspend-title"><h2 id="suspend-title">${t('opSuspendTitle')}</h2><p class="hint">${t('opSuspendIntro')}</p>
  <form class="stack" method="post" action="${path}/suspend" data-confirm="${t('opSuspendConfirm')}" data-once>${csrfField(dash)}
    ${reasonField(dash, 'suspend', SUSPENSION, said.suspend ?? { value: '' })}
    <button type="submit" class="danger">${t('opSuspend')}</button>
  </form>
</section>`;
}

/** The fee in basis points and whether live payments need fiscal lines: as they are, or as a refused form held them. */
function settingsForm(dash: Dash, product: OperatorProductRow, said: Said): Html {
  const { t } = dash;
  const typed = said.settings;
  const spec = { name: 'feeBps', label: 'opFeeBps', hint: 'opFeeBpsHint', attributes: html`inputmode="numeric" pattern="[0-9]{1,5}" maxlength="5" autocomplete="off"` } as const;
  const fee = formField(dash, 'settings', spec, { value: typed?.fee ?? String(product.fee_bps), error: typed?.feeError, focus: typed !== undefined });
  const checked = typed?.receiptRequired ?? product.receipt_required;
  return html`<section class="card" aria-labelledby="settings-title"><h2 id="settings-title">${t('opSettingsTitle')}</h2>
  <form class="stack" method="post" action="${productPath(product.id)}/settings">${csrfField(dash)}
    ${fee}
    <label><input type="checkbox" name="receiptRequired" value="true"${checked ? html` checked` : ''}> ${t('opReceiptRequired')}</label>
    <button type="submit" class="primary">${t('opSettingsSave')}</button>
  </form>
</section>`;
}

function auditSection(dash: Dash, rows: AuditRow[]): Html {
  const { t } = dash;
  const listed = rows.length === 0 ? html`<p class="empty">${t('opProductAuditNone')}</p>` : auditTable(dash, rows, 'opProductAuditCaption', true);
  return html`<h2>${t('opProductAudit')}</h2>${listed}`;
}

function productPage(dash: Dash, operator: OperatorSession, product: OperatorProductRow, audit: AuditRow[], said: Said): Html {
  const forms = ACTS.includes(operator.role)
    ? html`${suspensionForm(dash, product, said)}${settingsForm(dash, product, said)}`
    : html`<p class="hint">${dash.t('opProductReadOnly')}</p>`;
  const body = html`${notice('ok', said.done)}${notice('error', said.error)}
${productFacts(dash, product)}
${forms}
${auditSection(dash, audit)}
<p><a href="${PRODUCTS_PATH}">${dash.t('opProductsTitle')}</a></p>`;
  return consolePage(dash, operator, { title: product.name, path: productPath(product.id), section: 'products', body });
}

/** The form's fee in basis points, or null when it is no whole number from 0 to FEE_BPS_MAX. */
function feeOf(form: Form | undefined): number | null {
  const typed = field(form, 'feeBps');
  if (!/^\d{1,5}$/.test(typed)) return null;
  const bps = Number(typed);
  return bps <= FEE_BPS_MAX ? bps : null;
}

type Done = 'suspended' | 'resumed' | 'saved' | 'unchanged';
/** What `?done=` says after a change; a Map, so that `?done=toString` finds nothing. */
const DONE = new Map<string, MessageKey>([['suspended', 'opProductSuspended'], ['resumed', 'opProductResumed'], ['saved', 'opProductSaved'], ['unchanged', 'opProductUnchanged']] satisfies Array<[Done, MessageKey]>);

type ProductRequest = FastifyRequest<{ Params: { id: string }; Body: Form }>;

function searchRoute(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get('/products', ROUTE, async (request, reply) => {
    const operator = operatorOf(request);
    const q = queryText(request, 'q');
    const found = await deps.products.search({ q, after: queryText(request, 'after') || null, limit: SEARCH_PAGE_MAX });
    const next = found.hasMore ? `${PRODUCTS_PATH}?${new URLSearchParams({ ...(q === '' ? {} : { q }), after: found.rows.at(-1)!.id })}` : null;
    return sendPage(reply, searchPage(dashOf(request), operator, q, { rows: found.rows, next }));
  });
}

/** The changes of a product: each refused with the page again (400, or 409 when it is in that state already). */
function actionRoutes(app: FastifyInstance, deps: ConsoleDeps, show: (request: ProductRequest, reply: FastifyReply, said: Said, status?: number) => Promise<FastifyReply>): void {
  const admin = async (request: ProductRequest) => {
    const session = operatorOf(request);
    requireOperatorRole(session, ACTS);
    return { actor: consoleActor(session), product: await deps.products.find(request.params.id), t: dashOf(request).t };
  };
  const done = (reply: FastifyReply, id: string, what: Done) => reply.redirect(`${productPath(id)}?done=${what}`, 303);
  app.post('/products/:id/suspend', ROUTE, async (request: ProductRequest, reply) => {
    const { actor, product, t } = await admin(request);
    if (product.suspended_at !== null) return show(request, reply, { error: t('opProductAlreadySuspended') }, 409);
    const read = reasonOf(dashOf(request), request.body, SUSPENSION.max);
    if ('error' in read) return show(request, reply, { suspend: { value: read.typed, error: read.error } }, 400);
    await deps.actions.suspend(actor, product.id, read.reason);
    return done(reply, product.id, 'suspended');
  });
  app.post('/products/:id/resume', ROUTE, async (request: ProductRequest, reply) => {
    const { actor, product, t } = await admin(request);
    if (product.suspended_at === null) return show(request, reply, { error: t('opProductNotSuspendedNow') }, 409);
    await deps.actions.resume(actor, product.id);
    return done(reply, product.id, 'resumed');
  });
  app.post('/products/:id/settings', ROUTE, async (request: ProductRequest, reply) => {
    const { actor, product, t } = await admin(request);
    const feeBps = feeOf(request.body);
    const receiptRequired = fields(request.body, 'receiptRequired').includes('true');
    if (feeBps === null) {
      const settings = { fee: field(request.body, 'feeBps'), feeError: t('opFeeInvalid'), receiptRequired };
      return show(request, reply, { error: t('opSettingsRefused'), settings }, 400);
    }
    // Only what changes is sent, so that the audit entry says what changed.
    const change = { ...(feeBps === product.fee_bps ? {} : { feeBps }), ...(receiptRequired === product.receipt_required ? {} : { receiptRequired }) };
    if (Object.keys(change).length === 0) return done(reply, product.id, 'unchanged');
    await deps.actions.updateSettings(actor, product.id, change);
    return done(reply, product.id, 'saved');
  });
}

export function productPages(app: FastifyInstance, deps: ConsoleDeps): void {
  const show = async (request: ProductRequest, reply: FastifyReply, said: Said, status = 200) => {
    // The log's first page about the product, cut to the latest AUDIT_SHOWN: a read of the (target, seq) index that
    // stops after a hundred and one entries, however long the log, so asking for fewer would save next to nothing.
    const [product, audit] = await Promise.all([deps.products.operatorView(request.params.id), deps.operators.auditLog({ target: request.params.id })]);
    return sendPage(reply, productPage(dashOf(request), operatorOf(request), product, audit.rows.slice(0, AUDIT_SHOWN), said), status);
  };
  searchRoute(app, deps);
  app.get('/products/:id', ROUTE, async (request: ProductRequest, reply) => {
    operatorOf(request);
    const key = DONE.get(queryText(request, 'done'));
    return show(request, reply, { done: key && dashOf(request).t(key) });
  });
  actionRoutes(app, deps, show);
}
