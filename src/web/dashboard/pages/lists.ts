// The record of the selected mode: payments, orders, refunds, fiscal receipts, saved cards, events and the request log
// (the statement, statement.ts, and the payouts, payouts.ts, are two more). Each is a table with its filters in the
// address (a link shares them), a search by id or customer reference, and cursor paging. The pages ask the same
// services, with the same filters, as the API.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../../core/errors.js';
import { isCalendarDay } from '../../../core/calendar.js';
import type { Merchant } from '../../../core/merchant.js';
import type { List } from '../../../core/pagination.js';
import { INTENT_STATUSES, type ChargesQuery, type PaymentIntent } from '../../../modules/payments/schema.js';
import { ORDER_STATUSES, type Order, type OrdersQuery } from '../../../modules/orders/schema.js';
import type { Refund, RefundsQuery } from '../../../modules/refunds/schema.js';
import { RECEIPT_STATUSES, RECEIPT_TYPES, type Receipt, type ReceiptsQuery } from '../../../modules/receipts/schema.js';
import type { Card, CardsQuery } from '../../../modules/cards/schema.js';
import type { Event, EventsQuery } from '../../../modules/webhooks/schema.js';
import type { RequestLogEntry, RequestLogQuery } from '../../../modules/request-log/schema.js';
import { SENT_EVENT_TYPES } from '../../../modules/webhooks/events.js';
import { dashOf, ROUTE, signedIn, merchantOfSigned, type Dash } from '../context.js';
import { html, type Html, type Value } from '../../html.js';
import { failureKey, LOCALES, statusKey, type FailureOf, type MessageKey, type StatusOf } from '../i18n.js';
import { notice, page, sendPage, timeElement, wrappingTime, type Section } from '../layout.js';
import type { DashboardDeps } from '../deps.js';

const PAGE_SIZE = 25;

/** Tiyin as an integer: a number (a safe one), a BigInt or decimal digits (a sum the ledger keeps exact). */
export type Tiyin = number | bigint | string;

/** So'm with two decimals and a point, from the integer: a float would round the cents of a large amount. */
function somOf(tiyin: Tiyin): string {
  const value = BigInt(tiyin);
  const size = value < 0n ? -value : value;
  return `${value < 0n ? '-' : ''}${size / 100n}.${String(size % 100n).padStart(2, '0')}`;
}

// Intl formats a decimal string exactly (ECMA-402 2023, in Node 20); the ES2022 lib typed here knows only numbers.
type DecimalFormat = (decimal: string) => string;
const formatOf = (locale: string) => new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format as unknown as DecimalFormat;
/** Made once: a page writes many amounts. */
const FORMATS = { uz: formatOf(LOCALES.uz), ru: formatOf(LOCALES.ru), en: formatOf(LOCALES.en) } as const;

/** So'm with two decimals, grouped as the language writes numbers, exact at any size: 150,000.00 · 150 000,00. */
export const somFigure = (dash: Dash, tiyin: Tiyin) => FORMATS[dash.lang](somOf(tiyin));

/** An amount in tiyin as so'm with two decimals and the currency, as the language writes them. */
export function money(dash: Dash, tiyin: Tiyin): string {
  return dash.t('moneyAmount', { amount: somFigure(dash, tiyin) });
}

/** An amount kept on one line where a sentence wraps: its figure and its currency together. */
export const wholeMoney = (dash: Dash, tiyin: Tiyin) => money(dash, tiyin).replaceAll(' ', '\u00a0');

const NETWORKS = { uzcard: 'Uzcard', humo: 'Humo' } as const;

/** The card a payment debited, saved or not, as the buyer's receipt names it: "Uzcard •••• 0007". */
export const cardShown = (intent: Pick<PaymentIntent, 'rail' | 'maskedPan'>) => `${NETWORKS[intent.rail]} •••• ${intent.maskedPan.slice(-4)}`;

/** A status in the page's words (`shown`, when the page says more than the API), the API's value in its title for engineers. */
export function badge(dash: Dash, of: StatusOf, status: string, shown = status): Html {
  const key = statusKey(of, shown);
  return html`<span class="status s-${shown.toLowerCase()}" title="${status}">${key ? dash.t(key) : status}</span>`;
}

/**
 * Why the bank refused a payment (or the fiscal module a receipt), in the page's words, the code in its title; a code
 * without words is shown as code.
 */
export function failureReason(dash: Dash, code: string, of: Exclude<FailureOf, 'payoutFailureHelp'> = 'failure'): Html {
  const key = failureKey(code, of);
  return key ? html`<small title="${code}">${dash.t(key)}</small>` : html`<code>${code}</code>`;
}

/** A receipt's status, and why it failed under it. */
export const receiptBadge = (dash: Dash, receipt: Pick<Receipt, 'status' | 'failureCode'>) =>
  html`${badge(dash, 'receipt', receipt.status)}${receipt.failureCode ? html` ${failureReason(dash, receipt.failureCode, 'receiptFailure')}` : ''}`;

/** A receipt's type (sale, return) in the page's words, the API's value in its title. */
export const receiptTypeText = (dash: Dash, type: Receipt['type']) => html`<span title="${type}">${dash.t(`receiptType_${type}`)}</span>`;

/**
 * A payment's status as a merchant reads it: the API keeps a refunded payment SUCCEEDED (its refund is an object of its
 * own), so a fully refunded one says so here. Refunds are full only: there is no partly refunded payment to show.
 */
export const paymentBadge = (dash: Dash, intent: Pick<PaymentIntent, 'status' | 'amount' | 'amountRefunded'>) =>
  badge(dash, 'payment', intent.status, intent.amountRefunded > 0 && intent.amountRefunded === intent.amount ? 'REFUNDED' : intent.status);

/** Rows an export writes at most; past it the file ends with a line that says so. */
const EXPORT_ROWS_MAX = 1_000_000;
const EXPORT_PAGE = 100;

/**
 * Where a spreadsheet may start a cell inside a text: at its start, or after a separator some locale splits on (`,`
 * in en, `;` in ru and uz, a tab) or a line break, past any spaces or quotes; a formula start there runs. A reader
 * splitting on `;` ignores the quotes of a `,` file, so every separator in the text counts, not only the file's own.
 */
// The spaces skipped are any but the separators, so that each character is looked at once (linear on runs of tabs).
const FORMULA_STARTS = /(^|[,;\t\r\n])((?:[^\S\t\r\n]|")*)(?=[=+\-@])/g;

/** Text no spreadsheet runs as a formula (OWASP, ASVS 1.2.10): `'`, which makes a cell text, before each formula start. */
function inert(text: string): string {
  const neutral = text.replace(FORMULA_STARTS, "$1$2'");
  return /^[\t\r\0]/.test(neutral) ? `'${neutral}` : neutral;
}

/** A signed decimal, as `uzs` writes an amount: a number to every spreadsheet, never a formula, even negative. */
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

/**
 * A CSV cell: text made inert, and quoted when it holds a quote, a line break or any separator a locale may use. A
 * decimal is left as it is, so that a refund's negative amount stays a number the spreadsheet sums.
 */
function csvCell(value: string | number | null): string {
  if (value === null) return '';
  const text = typeof value === 'string' && !DECIMAL.test(value) ? inert(value) : String(value);
  return /[",;\t\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** So'm with two decimals and a point, as a spreadsheet reads a number. */
export const uzs = (tiyin: Tiyin) => somOf(tiyin);

/** What the address may say about a list. */
interface Params {
  q?: string;
  status?: string;
  type?: string;
  from?: string;
  to?: string;
  /** Payments: those of one saved card (a card's link). */
  card?: string;
  /** The statement: the transactions one payout paid out (a payout's link). */
  payout?: string;
  /** Orders: those opened through one payment link (the link's page). */
  paymentLink?: string;
  starting_after?: string;
}

const PARAMS = ['q', 'status', 'type', 'card', 'payout', 'paymentLink', 'from', 'to', 'starting_after'] as const;

/**
 * What narrows a list to one object's items, from that object's link: a saved card's payments, a payout's transactions,
 * a payment link's orders.
 */
type Scope = 'card' | 'payout' | 'paymentLink';
const SCOPE_LINES: Record<Scope, MessageKey> = { card: 'scopedToCard', payout: 'scopedToPayout', paymentLink: 'scopedToPaymentLink' };

export interface Column<Item> {
  label: MessageKey;
  cell: (item: Item, dash: Dash) => Value;
  num?: boolean;
}

/** What the filters of a list are, whatever its items. */
type Filtering = Pick<ListSpec<{ id: string }>, 'choices' | 'dates' | 'search' | 'scopedBy'>;

/** A select of a list's filters: the statuses or types it offers (said in the page's words when `of` says whose). */
interface Choice {
  param: 'status' | 'type';
  label: MessageKey;
  values: readonly string[];
  of?: StatusOf;
}

interface ListSpec<Item extends { id: string }> {
  section: Section;
  title: MessageKey;
  caption: MessageKey;
  /** The selects the filters offer: statuses, event types, receipt types. */
  choices?: Choice[];
  /** Whether the list has creation dates to filter on. */
  dates: boolean;
  /** The parameter that narrows the list to one object's items, when it takes one. */
  scopedBy?: Scope;
  /** What the search box takes; an id with `idPrefix` always finds that object. */
  search?: { idPrefix: string; other: 'customerRef' | 'objectId' | 'paymentIntent' | 'source' | null };
  /** The list, given the API query the address stands for (its values checked by the list's schema's choices). */
  list(merchant: Merchant, query: Record<string, unknown>): Promise<List<Item>>;
  find?(merchant: Merchant, id: string): Promise<Item>;
  /** What the page shows above its filters, whatever they are (the statement's balance). */
  intro?(dash: Dash, merchant: Merchant): Promise<Value>;
  columns: Column<Item>[];
  /** The CSV export's columns: a header, and the cell's value (amounts in so'm with a decimal point). */
  csv: Array<[string, (item: Item) => string | number | null]>;
}

/** The API query a list's address stands for; a bad date is refused as the API refuses one. */
function apiQuery(spec: Filtering, params: Params): Record<string, unknown> {
  const query: Record<string, unknown> = { limit: PAGE_SIZE };
  if (params.starting_after) query.starting_after = params.starting_after;
  for (const choice of spec.choices ?? []) {
    const value = params[choice.param];
    if (!value) continue;
    // The API refuses a value it does not know; the services the pages call take what they are given.
    if (!choice.values.includes(value)) throw new ApiError('VALIDATION_ERROR', `${choice.param}: one of ${choice.values.join(', ')}`, { param: choice.param });
    query[choice.param] = value;
  }
  for (const [param, bound, days] of [['from', 'created[gte]', 0], ['to', 'created[lt]', 1]] as const) {
    const day = params[param];
    if (!spec.dates || !day) continue;
    if (!isCalendarDay(day)) throw new ApiError('VALIDATION_ERROR', `${param}: a real day, YYYY-MM-DD`, { param });
    const instant = new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString();
    // The end of 9999-12-31 is +010000-01-01, which no query can carry; nothing is created that late, so no bound.
    if (!instant.startsWith('+')) query[bound] = instant.replace('.000Z', 'Z');
  }
  const q = params.q?.trim();
  if (q && spec.search?.other) query[spec.search.other] = q;
  const scope = scopeOf(spec, params);
  if (scope) query[scope.param] = scope.id;
  return query;
}

/** The object the address narrows the list to, if it does. */
function scopeOf(spec: Filtering, params: Params): { param: Scope; id: string } | null {
  const id = spec.scopedBy && params[spec.scopedBy];
  return spec.scopedBy && id ? { param: spec.scopedBy, id } : null;
}

/** The address of this list with `params` (empty ones left out). */
function addressOf(path: string, params: Params): string {
  const kept = Object.entries(params).filter(([, value]) => typeof value === 'string' && value !== '');
  return kept.length === 0 ? path : `${path}?${new URLSearchParams(kept as [string, string][])}`;
}

/** A select's option: a status in the page's words; an event type as it is (it is code). */
function choiceText(dash: Dash, of: StatusOf | undefined, value: string): string {
  const key = of && statusKey(of, value);
  return key ? dash.t(key) : value;
}

/** The field a refused filter names, as its label reads on the list. */
const FILTER_LABELS: Record<string, MessageKey> = { q: 'search', from: 'from', to: 'to', card: 'card' };
const filterLabel = (spec: Filtering, param: string | undefined): MessageKey =>
  spec.choices?.find((choice) => choice.param === param)?.label ?? FILTER_LABELS[param ?? ''] ?? 'filters';

const PLACEHOLDER_OTHERS: Partial<Record<string, MessageKey>> = { customerRef: 'orCustomerRef', paymentIntent: 'orPaymentId', source: 'orSourceId' };

function searchPlaceholder(dash: Dash, search: NonNullable<Filtering['search']>): string {
  const other = search.other === null ? undefined : PLACEHOLDER_OTHERS[search.other];
  return `${search.idPrefix}…${other ? ` ${dash.t(other)}` : ''}`;
}

function filterForm(dash: Dash, spec: Filtering, path: string, params: Params): Value {
  const { t } = dash;
  const selects = (spec.choices ?? []).map(
    (choice) => html`<label>${t(choice.label)} <select name="${choice.param}">
        <option value="">${t('filterAll')}</option>
        ${choice.values.map((value) => html`<option value="${value}"${params[choice.param] === value ? html` selected` : ''}>${choiceText(dash, choice.of, value)}</option>`)}
      </select></label>`,
  );
  const select = selects.length ? selects : '';
  const dates = spec.dates
    ? html`<label>${t('from')} <input type="date" name="from" value="${params.from ?? ''}"></label>
      <label>${t('to')} <input type="date" name="to" value="${params.to ?? ''}"></label>`
    : '';
  const search = spec.search
    ? html`<label>${t('search')} <input type="search" name="q" value="${params.q ?? ''}" placeholder="${searchPlaceholder(dash, spec.search)}"></label>`
    : '';
  if (!select && !dates && !search) return '';
  const scope = scopeOf(spec, params);
  // Filters applied to a narrowed list keep it narrowed; "Clear" undoes both.
  const kept = scope ? html`<input type="hidden" name="${scope.param}" value="${scope.id}">` : '';
  return html`<form class="filters" method="get" action="${path}" role="search" aria-label="${t('filters')}">
  ${kept}${search}${select}${dates}
  <button type="submit">${t('applyFilters')}</button> <a href="${path}">${t('clearFilters')}</a>
</form>`;
}

/** Which object a narrowed list shows the items of, and the way back to all of them. */
function scopeLine(dash: Dash, spec: Filtering, path: string, params: Params): Value {
  const scope = scopeOf(spec, params);
  if (!scope) return '';
  return html`<p class="scope">${dash.t(SCOPE_LINES[scope.param])} ${objectLink(scope.id)} · <a href="${path}">${dash.t('showAll')}</a></p>`;
}

/** A table of items, one column each as `columns` declares, or a line saying there are none; `older` pages on. */
export function table<Item extends { id: string }>(dash: Dash, spec: Pick<ListSpec<Item>, 'columns' | 'caption'>, items: Item[], older: string | null): Html {
  const { t } = dash;
  if (items.length === 0) return html`<p class="empty">${t('nothingFound')}</p>`;
  const head = spec.columns.map((column) => html`<th scope="col"${column.num ? html` class="num"` : ''}>${t(column.label)}</th>`);
  const rows = items.map(
    (item) => html`<tr>${spec.columns.map((column) => html`<td data-label="${t(column.label)}"${column.num ? html` class="num"` : ''}>${column.cell(item, dash)}</td>`)}</tr>`,
  );
  return html`<div class="table-wrap"><table><caption>${t(spec.caption)}</caption>
<thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table></div>
${older ? html`<p><a href="${older}">${t('olderItems')}</a></p>` : ''}`;
}

/** The items the address asks for: one found by its id, or a filtered page of `limit`. */
async function itemsOf<Item extends { id: string }>(spec: ListSpec<Item>, merchant: Merchant, params: Params, limit = PAGE_SIZE): Promise<List<Item>> {
  const q = params.q?.trim();
  if (q && spec.search && spec.find && q.startsWith(spec.search.idPrefix)) {
    const found = await spec.find(merchant, q).catch((error: unknown) => {
      if (error instanceof ApiError && error.code === 'NOT_FOUND') return null;
      throw error;
    });
    return { object: 'list', data: found ? [found] : [], has_more: false };
  }
  return spec.list(merchant, { ...apiQuery(spec, params), limit });
}

/**
 * Every row of a filtered list as CSV, a page at a time from `first`: however long the list, one page is held at once.
 */
async function* csvRows<Item extends { id: string }>(spec: ListSpec<Item>, merchant: Merchant, params: Params, first: List<Item>): AsyncGenerator<string> {
  yield `${spec.csv.map(([header]) => header).join(',')}\r\n`;
  let written = 0;
  for (let found = first; ; found = await itemsOf(spec, merchant, { ...params, starting_after: found.data.at(-1)!.id }, EXPORT_PAGE)) {
    const rows = found.data.slice(0, EXPORT_ROWS_MAX - written);
    if (rows.length > 0) yield rows.map((item) => `${spec.csv.map(([, cell]) => csvCell(cell(item))).join(',')}\r\n`).join('');
    written += rows.length;
    if (!found.has_more) return;
    if (written >= EXPORT_ROWS_MAX) return yield `# stopped at ${EXPORT_ROWS_MAX} rows: narrow the dates to export the rest\r\n`;
  }
}

function exportRoute<Item extends { id: string }>(app: FastifyInstance, spec: ListSpec<Item>, slug: string): void {
  app.get(`/${slug}.csv`, ROUTE, async (request: FastifyRequest<{ Querystring: Params }>, reply) => {
    const merchant = merchantOfSigned(signedIn(request));
    const params = paramsOf(request);
    // The first page is read before the download starts: a filter the list refuses is a 400 page, not a cut stream.
    const first = await itemsOf(spec, merchant, { ...params, starting_after: '' }, EXPORT_PAGE);
    const mode = merchant.livemode ? 'live' : 'test';
    return reply
      .header('Content-Disposition', `attachment; filename="tolov-${slug}-${mode}.csv"`)
      .header('Cache-Control', 'no-store')
      .header('X-Content-Type-Options', 'nosniff')
      .type('text/csv; charset=utf-8')
      .send(Readable.from(csvRows(spec, merchant, params, first)));
  });
}

const paramsOf = (request: FastifyRequest<{ Querystring: Params }>): Params => {
  const given = (request.query ?? {}) as Record<string, unknown>;
  return Object.fromEntries(PARAMS.filter((name) => typeof given[name] === 'string').map((name) => [name, given[name]]));
};

/** A list's page as the request's address asks for it; `intro` shown in place of the spec's (a form shown again, refused). */
export type ListPage = (request: FastifyRequest, intro?: Value) => Promise<Html>;

function listPage<Item extends { id: string }>(spec: ListSpec<Item>, path: string): ListPage {
  return async (request, given) => {
    const dash = dashOf(request);
    const params = paramsOf(request as FastifyRequest<{ Querystring: Params }>);
    const merchant = merchantOfSigned(signedIn(request));
    const intro = given ?? (spec.intro ? await spec.intro(dash, merchant) : '');
    let body: Value;
    try {
      const found = await itemsOf(spec, merchant, params);
      const older = found.has_more ? addressOf(path, { ...params, starting_after: found.data.at(-1)!.id }) : null;
      body = table(dash, spec, found.data, older);
    } catch (error) {
      if (!(error instanceof ApiError) || error.statusCode >= 500) throw error;
      body = notice('error', dash.t('badFilter', { field: dash.t(filterLabel(spec, error.extra.param)) }));
    }
    const { starting_after: _page, ...filters } = params;
    const exported = html`<p class="export"><a href="${addressOf(`${path}.csv`, filters)}" download>${dash.t('exportCsv')}</a></p>`;
    const content = html`${intro}${filterForm(dash, spec, path, params)}${scopeLine(dash, spec, path, params)}${exported}${body}`;
    return page(dash, { title: dash.t(spec.title), path: addressOf(path, params), section: spec.section, body: content });
  };
}

/** A list's page and its CSV export; returns the page, for a form on it to show again. */
export function listRoute<Item extends { id: string }>(app: FastifyInstance, spec: ListSpec<Item>, slug: string): ListPage {
  exportRoute(app, spec, slug);
  const render = listPage(spec, `/dashboard/${slug}`);
  app.get(`/${slug}`, ROUTE, async (request, reply) => sendPage(reply, await render(request)));
  return render;
}

const id = (item: { id: string }) => html`<code>${item.id}</code>`;
/** The id, linking to the object's page. */
export const linked = (section: 'payments' | 'orders' | 'payouts' | 'payment-links') => (item: { id: string }) => html`<a href="/dashboard/${section}/${item.id}"><code>${item.id}</code></a>`;
/** An object's id, linking to its page when it has one (a receipt's is its row in the receipts list). */
function objectLink(objectId: string): Html {
  if (objectId.startsWith('pi_')) return linked('payments')({ id: objectId });
  if (objectId.startsWith('ord_')) return linked('orders')({ id: objectId });
  if (objectId.startsWith('po_')) return linked('payouts')({ id: objectId });
  if (objectId.startsWith('plink_')) return linked('payment-links')({ id: objectId });
  if (objectId.startsWith('rcpt_')) return html`<a href="/dashboard/receipts?q=${objectId}"><code>${objectId}</code></a>`;
  return html`<code>${objectId}</code>`;
}
const created = (item: { created: string }) => timeElement(item.created);

/** Payments, orders and refunds. */
function moneyLists(app: FastifyInstance, { payments, orders, refunds }: DashboardDeps): void {
  listRoute<PaymentIntent>(app, {
    section: 'payments', title: 'navPayments', caption: 'paymentsCaption', dates: true, scopedBy: 'card',
    choices: [{ param: 'status', label: 'status', values: INTENT_STATUSES, of: 'payment' }],
    search: { idPrefix: 'pi_', other: 'customerRef' },
    list: (merchant, query) => payments.list(merchant, query as ChargesQuery),
    find: (merchant, found) => payments.get(merchant, found),
    csv: [
      ['id', (item) => item.id], ['created', (item) => item.created], ['amount_uzs', (item) => uzs(item.amount)], ['fee_uzs', (item) => uzs(item.fee)],
      ['status', (item) => item.status], ['failure_code', (item) => item.failureCode], ['card', (item) => item.card], ['network', (item) => item.rail],
      ['masked_pan', (item) => item.maskedPan], ['order', (item) => item.order],
      ['refunded_uzs', (item) => uzs(item.amountRefunded)], ['description', (item) => item.description],
    ],
    columns: [
      { label: 'id', cell: linked('payments') },
      { label: 'amount', cell: (item, dash) => money(dash, item.amount), num: true },
      { label: 'status', cell: (item, dash) => html`${paymentBadge(dash, item)}${item.failureCode ? html` ${failureReason(dash, item.failureCode)}` : ''}` },
      { label: 'card', cell: (item) => (item.card ? html`<a class="one-line" href="/dashboard/payments?card=${item.card}">${cardShown(item)}</a>` : html`<span class="one-line">${cardShown(item)}</span>`) },
      { label: 'description', cell: (item) => item.description ?? '' },
      { label: 'created', cell: created },
    ],
  }, 'payments');
  listRoute<Order>(app, {
    section: 'orders', title: 'navOrders', caption: 'ordersCaption', dates: true, scopedBy: 'paymentLink',
    choices: [{ param: 'status', label: 'status', values: ORDER_STATUSES, of: 'order' }],
    search: { idPrefix: 'ord_', other: 'customerRef' },
    list: (merchant, query) => orders.list(merchant, query as OrdersQuery),
    find: (merchant, found) => orders.get(merchant, found),
    csv: [
      ['id', (item) => item.id], ['created', (item) => item.created], ['amount_uzs', (item) => uzs(item.amount)], ['status', (item) => item.status],
      ['customer_ref', (item) => item.customerRef], ['payment_intent', (item) => item.paymentIntent], ['paid_at', (item) => item.paidAt],
      ['payment_link', (item) => item.paymentLink], ['description', (item) => item.description],
    ],
    columns: [
      { label: 'id', cell: linked('orders') },
      { label: 'amount', cell: (item, dash) => money(dash, item.amount), num: true },
      { label: 'status', cell: (item, dash) => badge(dash, 'order', item.status) },
      { label: 'customer', cell: (item) => item.customerRef ?? '' },
      { label: 'description', cell: (item) => item.description ?? '' },
      { label: 'created', cell: created },
    ],
  }, 'orders');
  listRoute<Refund>(app, {
    section: 'refunds', title: 'navRefunds', caption: 'refundsCaption', dates: true,
    choices: [{ param: 'status', label: 'status', values: ['PENDING', 'SUCCEEDED', 'FAILED'], of: 'refund' }],
    search: { idPrefix: 're_', other: null },
    list: (merchant, query) => refunds.list(merchant, query as RefundsQuery),
    find: (merchant, found) => refunds.get(merchant, found),
    csv: [
      ['id', (item) => item.id], ['created', (item) => item.created], ['amount_uzs', (item) => uzs(item.amount)], ['status', (item) => item.status],
      ['payment_intent', (item) => item.paymentIntent], ['failure_code', (item) => item.failureCode],
    ],
    columns: [
      { label: 'id', cell: id },
      { label: 'amount', cell: (item, dash) => money(dash, item.amount), num: true },
      { label: 'status', cell: (item, dash) => badge(dash, 'refund', item.status) },
      { label: 'payment', cell: (item) => objectLink(item.paymentIntent) },
      { label: 'created', cell: created },
    ],
  }, 'refunds');
}

/** Saved cards, events and the request log. */
function recordLists(app: FastifyInstance, { cards, webhooks, requestLog }: DashboardDeps): void {
  listRoute<Card>(app, {
    section: 'cards', title: 'navCards', caption: 'cardsCaption', dates: true,
    choices: [{ param: 'status', label: 'status', values: ['ACTIVE', 'BLOCKED', 'DELETED'], of: 'card' }],
    search: { idPrefix: 'card_', other: 'customerRef' },
    list: (merchant, query) => cards.list(merchant, query as CardsQuery),
    find: (merchant, found) => cards.get(merchant, found),
    csv: [
      ['id', (item) => item.id], ['created', (item) => item.created], ['customer_ref', (item) => item.customerRef], ['masked_pan', (item) => item.maskedPan],
      ['network', (item) => item.rail], ['expiry', (item) => item.expiry], ['status', (item) => item.status],
    ],
    columns: [
      { label: 'customer', cell: (item) => item.customerRef ?? '' },
      { label: 'card', cell: (item) => html`<a href="/dashboard/payments?card=${item.id}"><code>${item.maskedPan}</code></a> ${item.rail} ${item.expiry}` },
      { label: 'status', cell: (item, dash) => badge(dash, 'card', item.status) },
      { label: 'id', cell: id },
      { label: 'created', cell: created },
    ],
  }, 'cards');
  listRoute<Event>(app, {
    section: 'events', title: 'navEvents', caption: 'eventsCaption', dates: true,
    choices: [{ param: 'type', label: 'eventType', values: SENT_EVENT_TYPES }],
    search: { idPrefix: 'evt_', other: 'objectId' },
    list: (merchant, query) => webhooks.events(merchant, query as EventsQuery),
    find: (merchant, found) => webhooks.event(merchant, found),
    csv: [['id', (item) => item.id], ['created', (item) => item.created], ['type', (item) => item.type], ['object', (item) => String((item.data as { id?: unknown }).id ?? '')]],
    columns: [
      { label: 'id', cell: id },
      { label: 'eventType', cell: (item) => item.type },
      { label: 'object', cell: (item) => objectLink(String((item.data as { id?: unknown }).id ?? '')) },
      { label: 'created', cell: created },
    ],
  }, 'events');
  listRoute<RequestLogEntry>(app, {
    section: 'logs', title: 'navRequestLog', caption: 'requestLogCaption', dates: false,
    list: (merchant, query) => requestLog.list(merchant, query as RequestLogQuery),
    csv: [
      ['request_id', (item) => item.id], ['created', (item) => item.created], ['method', (item) => item.method], ['path', (item) => item.path],
      ['status', (item) => item.status], ['duration_ms', (item) => item.durationMs], ['idempotency_key', (item) => item.idempotencyKey],
    ],
    columns: [
      { label: 'when', cell: created },
      { label: 'method', cell: (item) => item.method },
      // A long path breaks after a slash (<wbr>), never inside an id.
      { label: 'path', cell: (item) => html`<code class="path">${item.path.split('/').map((part, index) => (index === 0 ? part : html`/<wbr>${part}`))}</code>` },
      { label: 'status', cell: (item) => html`<span class="status ${item.status < 400 ? 's-succeeded' : 's-failed'}">${String(item.status)}</span>` },
      { label: 'duration', cell: (item, dash) => dash.t('durationMs', { ms: String(item.durationMs) }), num: true },
      { label: 'requestId', cell: id },
      { label: 'idempotencyKey', cell: (item) => (item.idempotencyKey === null ? '' : html`<code class="token">${item.idempotencyKey}</code>`) },
    ],
  }, 'logs');
}

/**
 * Fiscal receipts: each row links to its payment, whose page shows the receipt in full (its anchor is the receipt's
 * id); the search takes a receipt's id or a payment's, whose receipts it lists.
 */
function receiptList(app: FastifyInstance, { receipts }: DashboardDeps): void {
  listRoute<Receipt>(app, {
    section: 'receipts', title: 'navReceipts', caption: 'receiptsCaption', dates: true,
    choices: [
      { param: 'status', label: 'status', values: RECEIPT_STATUSES, of: 'receipt' },
      { param: 'type', label: 'receiptType', values: RECEIPT_TYPES, of: 'receiptType' },
    ],
    search: { idPrefix: 'rcpt_', other: 'paymentIntent' },
    list: (merchant, query) => receipts.list(merchant, query as ReceiptsQuery),
    find: (merchant, found) => receipts.get(merchant, found),
    csv: [
      ['id', (item) => item.id], ['created', (item) => item.created], ['type', (item) => item.type], ['status', (item) => item.status],
      ['amount_uzs', (item) => uzs(item.amount)], ['vat_uzs', (item) => uzs(item.vatAmount)], ['payment_intent', (item) => item.paymentIntent],
      ['refund', (item) => item.refund], ['terminal_id', (item) => item.terminalId], ['receipt_number', (item) => item.receiptNumber],
      ['fiscal_sign', (item) => item.fiscalSign], ['fiscalized_at', (item) => item.fiscalizedAt], ['failure_code', (item) => item.failureCode],
      ['qr_url', (item) => item.qrUrl], ['receipt_url', (item) => item.url],
    ],
    columns: [
      { label: 'id', cell: (item) => html`<a href="/dashboard/payments/${item.paymentIntent}#${item.id}"><code>${item.id}</code></a>` },
      { label: 'receiptType', cell: (item, dash) => receiptTypeText(dash, item.type) },
      { label: 'amount', cell: (item, dash) => money(dash, item.amount), num: true },
      { label: 'vat', cell: (item, dash) => money(dash, item.vatAmount), num: true },
      { label: 'status', cell: (item, dash) => receiptBadge(dash, item) },
      { label: 'payment', cell: (item) => linked('payments')({ id: item.paymentIntent }) },
      // Two ids to a row: the time gives way first, in the languages whose words are longer.
      { label: 'created', cell: (item) => wrappingTime(item.created) },
    ],
  }, 'receipts');
}

export function listPages(app: FastifyInstance, deps: DashboardDeps): void {
  moneyLists(app, deps);
  receiptList(app, deps);
  recordLists(app, deps);
}
