// Payment links of the selected mode: a list like every other (its filters in the address, paging, CSV), and "New
// payment link" for owners and developers, whose form makes the link through the same command as the API, under the
// form's idempotency key (a form posted twice makes one link), audited with it. A form that cannot be read, or that the
// service refuses, comes back as typed, saying what is wrong at each field, in the page's language.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CHOSEN_AMOUNT_MAX, CHOSEN_AMOUNT_MIN, type PaymentLink, type PaymentLinksQuery } from '../../../modules/payment-links/schema.js';
import { CHANGES, dashOf, formKeyOf, invocationOf, outcomeOf, requireRole, ROUTE, signedIn, type Dash } from '../context.js';
import type { DashboardDeps, Form } from '../deps.js';
import { html, type Html } from '../../html.js';
import { page, sendPage, timeElement } from '../layout.js';
import { EMPTY_FORM, linkForm, readForm, refusalErrors, typedOf, type FieldErrors, type Typed } from './payment-link-form.js';
import { badge, listRoute, money, uzs, wholeMoney } from './lists.js';

export const LINKS_PATH = '/dashboard/payment-links';
/** A description longer than this is cut in the list (its page shows it whole). */
const DESCRIPTION_SHOWN = 80;

/** Active or turned off, in the page's words. */
export const linkBadge = (dash: Dash, link: Pick<PaymentLink, 'active'>) => badge(dash, 'paymentLink', link.active ? 'ACTIVE' : 'INACTIVE');

/** The bounds of the buyer's amount, in `key`'s words. */
export const boundsText = (dash: Dash, key: 'linkRange' | 'linkChosenBetween', link: Pick<PaymentLink, 'amountMin' | 'amountMax'>) =>
  dash.t(key, { min: wholeMoney(dash, link.amountMin ?? CHOSEN_AMOUNT_MIN), max: wholeMoney(dash, link.amountMax ?? CHOSEN_AMOUNT_MAX) });

/** The link's price in a list: its amount, or that the buyer chooses it, with the bounds under that. */
function priceCell(dash: Dash, link: PaymentLink): Html | string {
  if (link.amount !== null) return money(dash, link.amount);
  return html`${dash.t('buyerChooses')}<small class="range">${boundsText(dash, 'linkRange', link)}</small>`;
}

/** A link's address, which a narrow screen breaks before its code rather than inside it. */
export function urlShown(url: string): Html {
  const at = url.lastIndexOf('/') + 1;
  return html`${url.slice(0, at)}<wbr>${url.slice(at)}`;
}

const shortened = (text: string) => {
  const characters = [...text];
  return characters.length <= DESCRIPTION_SHOWN ? text : `${characters.slice(0, DESCRIPTION_SHOWN - 1).join('')}…`;
};

/** What the list says above itself: what a link is, and the way to make one (or who may). */
function intro(dash: Dash): Html {
  const { t } = dash;
  const mayMake = dash.signed !== null && CHANGES.includes(dash.signed.session.role);
  return html`<p class="lead">${t('paymentLinksIntro')}</p>
${mayMake ? html`<p><a class="button primary" href="${LINKS_PATH}/new">${t('newPaymentLink')}</a></p>` : html`<p class="hint">${t('paymentLinksRoles')}</p>`}`;
}

function linkList(app: FastifyInstance, { paymentLinks }: DashboardDeps): void {
  listRoute<PaymentLink>(app, {
    section: 'paymentLinks', title: 'navPaymentLinks', caption: 'paymentLinksCaption', dates: true,
    choices: [{ param: 'status', label: 'status', values: ['ACTIVE', 'INACTIVE'], of: 'paymentLink' }],
    search: { idPrefix: 'plink_', other: null },
    // The page's status filter is the API's `active`.
    list: (merchant, { status, ...query }) => paymentLinks.list(merchant, { ...(query as PaymentLinksQuery), ...(status === undefined ? {} : { active: status === 'ACTIVE' }) }),
    find: (merchant, id) => paymentLinks.get(merchant, id),
    intro: async (dash) => intro(dash),
    csv: [
      ['id', (item) => item.id], ['created', (item) => item.created], ['description', (item) => item.description],
      ['amount_uzs', (item) => (item.amount === null ? null : uzs(item.amount))], ['amount_min_uzs', (item) => (item.amountMin === null ? null : uzs(item.amountMin))],
      ['amount_max_uzs', (item) => (item.amountMax === null ? null : uzs(item.amountMax))], ['active', (item) => String(item.active)],
      ['quantity_max', (item) => item.quantityMax], ['url', (item) => item.url],
    ],
    columns: [
      { label: 'description', cell: (item) => html`<a href="${LINKS_PATH}/${item.id}" title="${item.description}">${shortened(item.description)}</a>` },
      { label: 'amount', cell: (item, dash) => priceCell(dash, item), num: true },
      { label: 'status', cell: (item, dash) => linkBadge(dash, item) },
      { label: 'linkUrl', cell: (item) => html`<code class="token">${urlShown(item.url)}</code>` },
      { label: 'created', cell: (item) => timeElement(item.created) },
    ],
  }, 'payment-links');
}

function newLinkPage(dash: Dash, typed: Typed, errors?: FieldErrors): Html {
  return page(dash, { title: dash.t('newPaymentLink'), path: `${LINKS_PATH}/new`, section: 'paymentLinks', body: linkForm(dash, typed, errors) });
}

/**
 * The form, and its post: the link made and its page shown, or the form again as typed, with what is wrong (400) or why
 * the service refused it (its status).
 */
function newLinkRoutes(app: FastifyInstance, { paymentLinks }: DashboardDeps): void {
  app.get('/payment-links/new', ROUTE, async (request: FastifyRequest, reply) => {
    requireRole(signedIn(request), CHANGES);
    return sendPage(reply, newLinkPage(dashOf(request), EMPTY_FORM));
  });

  app.post<{ Body: Form }>('/payment-links', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    requireRole(signed, CHANGES);
    const dash = dashOf(request);
    const typed = typedOf(request.body);
    const read = readForm(dash, typed);
    if ('errors' in read) return sendPage(reply, newLinkPage(dash, typed, read.errors), 400);
    const invocation = invocationOf(request, signed, read.body, formKeyOf(request.body));
    const outcome = await outcomeOf(() => paymentLinks.create(invocation, read.body));
    if ('refused' in outcome) return sendPage(reply, newLinkPage(dash, typed, refusalErrors(dash, outcome.refused, read.itemLines)), outcome.status);
    return reply.redirect(`${LINKS_PATH}/${outcome.value.id}?done=created`, 303);
  });
}

export function paymentLinkPages(app: FastifyInstance, deps: DashboardDeps): void {
  linkList(app, deps);
  newLinkRoutes(app, deps);
}
