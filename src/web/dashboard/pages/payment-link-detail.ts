// A payment link's page: its address to copy, its QR code (shown, and to download as SVG or as a PNG to print), a
// "Share to Telegram" link (a plain link: the page asks nothing of another site), its fields and fiscal lines, and the
// orders buyers opened through it, each linking to its order's and its payment's page. Owners and developers turn it
// off (confirmed first) or on again and change its description here, through the same command as the API, audited.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { valueOf } from '../../../core/commands.js';
import type { Merchant } from '../../../core/merchant.js';
import type { Order } from '../../../modules/orders/schema.js';
import type { PaymentLink, UpdatePaymentLinkBody } from '../../../modules/payment-links/schema.js';
import { CHANGES, dashOf, formKeyOf, invocationOf, merchantOfSigned, requireRole, ROUTE, signedIn, type Dash, type Signed } from '../context.js';
import type { DashboardDeps, Form } from '../deps.js';
import { html, type Html, type Value } from '../../html.js';
import { formatCount, messageNamed, type MessageKey } from '../i18n.js';
import { csrfField, formKeyField, notice, page, sendPage, timeElement, when } from '../layout.js';
import { actionForm, fieldsList } from './details.js';
import { formField, lineOf } from './form-fields.js';
import { DESCRIPTION_MAX, descriptionError } from './payment-link-form.js';
import { badge, linked, money, table, type Column } from './lists.js';
import { linesTable } from './payment-receipts.js';
import { boundsText, LINKS_PATH, linkBadge, urlShown } from './payment-links.js';

type LinkRequest = FastifyRequest<{ Params: { id: string }; Querystring: { done?: string }; Body: Form }>;

/** The latest orders the page shows; the orders list, narrowed to the link, has them all. */
const ORDERS_SHOWN = 10;

const DONE = {
  created: 'linkCreatedDone',
  deactivated: 'linkDeactivatedDone',
  activated: 'linkActivatedDone',
  described: 'linkDescribedDone',
} as const satisfies Record<string, MessageKey>;

/**
 * The link's code, the last part of its address. Its QR images are asked for at this server's own path, whatever
 * address the dashboard is reached by: the page's policy takes images from its own origin only.
 */
const slugOf = (link: PaymentLink) => link.url.slice(link.url.lastIndexOf('/') + 1);

function shareCard(dash: Dash, link: PaymentLink): Html {
  const { t } = dash;
  const qr = `/l/${encodeURIComponent(slugOf(link))}/qr`;
  const telegram = `https://t.me/share/url?url=${encodeURIComponent(link.url)}&text=${encodeURIComponent(link.description)}`;
  return html`<section class="card share" aria-labelledby="share-title">
  <h2 id="share-title">${t('linkShare')}</h2>
  ${link.active ? '' : html`<p class="notice warning">${t('linkOffNotice')}</p>`}
  <p class="hint">${t('linkShareHint')}</p>
  <div class="copy-row"><code id="link-url">${urlShown(link.url)}</code><button type="button" class="copy" data-copy="link-url">${t('copy')}</button></div>
  <div class="share-body">
    <img class="link-qr" src="${qr}.svg" width="180" height="180" alt="${t('linkQrAlt')}">
    <ul class="share-actions">
      <li><a href="${qr}.svg?download" download>${t('downloadQrSvg')}</a></li>
      <li><a href="${qr}.png?download" download>${t('downloadQrPng')}</a></li>
      <li><a href="${telegram}">${t('shareTelegram')}</a></li>
      <li><a href="${link.url}">${t('linkOpenPage')}</a></li>
    </ul>
  </div>
</section>`;
}

function linkFields(dash: Dash, link: PaymentLink): Html {
  const { t } = dash;
  const rows: Array<[MessageKey, Value]> = [
    ['description', link.description],
    ['amount', link.amount === null ? boundsText(dash, 'linkChosenBetween', link) : money(dash, link.amount)],
    ['status', linkBadge(dash, link)],
    ['linkQuantityMax', link.quantityMax === null ? t('linkNoLimit') : formatCount(dash.lang, link.quantityMax)],
    ['id', html`<code>${link.id}</code>`],
    ['created', when(link.created)],
  ];
  return fieldsList(dash, rows);
}

/** Each order's fiscal lines, as the payment's page lists a receipt's. */
function receiptSection(dash: Dash, link: PaymentLink): Value {
  if (link.receipt === null) return '';
  const items = link.receipt.items.map((item) => ({ ...item, discount: item.discount ?? 0, commissionTin: item.commissionTin ?? null }));
  return html`<h2>${dash.t('receiptLines')}</h2>${linesTable(dash, { items, shipping: link.receipt.shipping ?? null }, 'linkReceiptCaption')}`;
}

/** Turning off (confirmed: buyers are turned away) or on again, and the description, with what was wrong with it. */
function changes(dash: Dash, link: PaymentLink, described: { typed: string; error: string } | undefined): Html {
  const { t } = dash;
  const toggle = link.active
    ? actionForm(dash, `${LINKS_PATH}/${link.id}/deactivate`, 'deactivateLink', 'deactivateLinkConfirm')
    : actionForm(dash, `${LINKS_PATH}/${link.id}/activate`, 'activateLink', 'activateLinkConfirm', false);
  const spec = { name: 'description', label: 'description', hint: 'linkDescriptionHint', attributes: html`class="wide" maxlength="${DESCRIPTION_MAX}"` } as const;
  const state = { value: described?.typed ?? link.description, error: described?.error, focus: described !== undefined };
  return html`<div class="actions-row">${toggle}</div>
<details class="describe"${described ? html` open` : ''}><summary>${t('changeDescription')}</summary>
  <form class="stack" method="post" action="${LINKS_PATH}/${link.id}/description">${csrfField(dash)}${formKeyField()}
    ${formField(dash, 'describe', spec, state)}
    <button type="submit">${t('saveDescription')}</button></form>
</details>`;
}

const ORDER_COLUMNS: Column<Order>[] = [
  { label: 'order', cell: linked('orders') },
  { label: 'amount', cell: (item, dash) => money(dash, item.amount), num: true },
  { label: 'status', cell: (item, dash) => badge(dash, 'order', item.status) },
  { label: 'payment', cell: (item) => (item.paymentIntent === null ? '' : linked('payments')({ id: item.paymentIntent })) },
  { label: 'created', cell: (item) => timeElement(item.created) },
];

function ordersSection(dash: Dash, link: PaymentLink, orders: Order[]): Html {
  const { t } = dash;
  const shown = orders.length === 0 ? html`<p class="empty">${t('linkNoOrders')}</p>` : table(dash, { columns: ORDER_COLUMNS, caption: 'linkOrdersCaption' }, orders, null);
  return html`<h2>${t('linkOrders')}</h2>${shown}
<p><a href="/dashboard/orders?paymentLink=${link.id}">${t('linkAllOrders')}</a></p>`;
}

interface Said {
  done?: string;
  /** The description typed into the form, and what is wrong with it. */
  described?: { typed: string; error: string };
}

async function linkPage(deps: DashboardDeps, dash: Dash, signed: Signed, merchant: Merchant, id: string, said: Said): Promise<Html> {
  const link = await deps.paymentLinks.get(merchant, id);
  const orders = await deps.orders.list(merchant, { limit: ORDERS_SHOWN, paymentLink: link.id });
  const body = html`${notice('ok', said.done)}
${shareCard(dash, link)}
${linkFields(dash, link)}
${CHANGES.includes(signed.session.role) ? changes(dash, link, said.described) : ''}
${receiptSection(dash, link)}
${ordersSection(dash, link, orders.data)}`;
  return page(dash, { title: `${dash.t('paymentLinkTitle')} ${link.id}`, path: `${LINKS_PATH}/${link.id}`, section: 'paymentLinks', body });
}

/**
 * A change by an owner or developer: the link's update command under the form's key (audited with it), then back to its
 * page saying so.
 */
async function change(deps: DashboardDeps, request: LinkRequest, reply: FastifyReply, body: UpdatePaymentLinkBody, done: keyof typeof DONE) {
  const signed = signedIn(request);
  requireRole(signed, CHANGES);
  const { id } = request.params;
  valueOf(await deps.paymentLinks.update(invocationOf(request, signed, body, formKeyOf(request.body)), id, body));
  return reply.redirect(`${LINKS_PATH}/${id}?done=${done}`, 303);
}

export function paymentLinkDetailPages(app: FastifyInstance, deps: DashboardDeps): void {
  const show = async (request: LinkRequest, said: Said) => {
    const signed = signedIn(request);
    return linkPage(deps, dashOf(request), signed, merchantOfSigned(signed), request.params.id, said);
  };
  app.get('/payment-links/:id', ROUTE, async (request: LinkRequest, reply) => {
    const done = messageNamed(DONE, request.query.done);
    return sendPage(reply, await show(request, done ? { done: dashOf(request).t(done) } : {}));
  });
  app.post('/payment-links/:id/deactivate', ROUTE, (request: LinkRequest, reply) => change(deps, request, reply, { active: false }, 'deactivated'));
  app.post('/payment-links/:id/activate', ROUTE, (request: LinkRequest, reply) => change(deps, request, reply, { active: true }, 'activated'));
  app.post('/payment-links/:id/description', ROUTE, async (request: LinkRequest, reply) => {
    requireRole(signedIn(request), CHANGES);
    const typed = lineOf(request.body, 'description');
    const error = descriptionError(dashOf(request), typed);
    if (error === undefined) return change(deps, request, reply, { description: typed }, 'described');
    return sendPage(reply, await show(request, { described: { typed, error } }), 400);
  });
}
