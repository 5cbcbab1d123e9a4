// Support's search: any object by its id (of any product, in either mode), or the payments of a card's last four
// digits, amount and Tashkent day; an object's page with its fields (a card only as network and last four, a payout's
// account only as its bank's MFO and last four), its product, the objects it names and its timeline. Every search is
// written to the audit log by the support module.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor, type OperatorSession } from '../../../modules/operators/service.js';
import {
  cardSearchOf,
  hitOf,
  isObjectId,
  MONEY_FACTS,
  tiyinOfSom,
  type CardSearchField,
  type FoundObject,
  type ObjectKind,
  type SearchHit,
  type TimelineEntry,
} from '../../../modules/support/service.js';
import { dashOf, type Dash } from '../../dashboard/context.js';
import type { FailureOf, MessageKey, StatusOf } from '../../dashboard/i18n.js';
import { sendPage, timeElement, when } from '../../dashboard/layout.js';
import { fieldsList } from '../../dashboard/pages/details.js';
import { badge, cardShown, failureReason, money } from '../../dashboard/pages/lists.js';
import { accountShown } from '../../dashboard/pages/payout-account.js';
import { html, type Html, type Value } from '../../html.js';
import { ROUTE, operatorOf } from '../context.js';
import type { ConsoleDeps } from '../deps.js';
import { consolePage } from '../layout.js';
import { modeText, objectLink, productLink, queryText, yesNo } from './shared.js';

const cardText = (card: FoundObject['card']) => (card === null ? '—' : card.network === null ? `•••• ${card.last4}` : cardShown({ rail: card.network, maskedPan: card.last4 }));

/** Whose words a status and a failure code have, by the kind of object. */
const STATUS_OF: Partial<Record<ObjectKind, StatusOf>> = { payment_intent: 'payment', order: 'order', refund: 'refund', receipt: 'receipt', payout: 'payout', card: 'card' };
const FAILURE_OF: Partial<Record<ObjectKind, Exclude<FailureOf, 'payoutFailureHelp'>>> = {
  payment_intent: 'failure',
  order: 'failure',
  refund: 'failure',
  receipt: 'receiptFailure',
  payout: 'payoutFailure',
};

/** A status in the page's words; a payment refunded in full says so, as the dashboard's do. */
function statusShown(dash: Dash, hit: Pick<SearchHit, 'object' | 'status' | 'refunded'>): Value {
  const of = STATUS_OF[hit.object];
  if (hit.status === null) return '—';
  return of === undefined ? html`<code>${hit.status}</code>` : badge(dash, of, hit.status, hit.refunded ? 'REFUNDED' : hit.status);
}

function idForm(dash: Dash, wrong: boolean): Html {
  const { t } = dash;
  return html`<form class="filters" method="get" action="/operator/search" role="search" aria-label="${t('supById')}">
  <label>${t('supObjectId')} <input type="search" name="q" required maxlength="70" autocomplete="off" spellcheck="false" autocapitalize="none"
    pattern="[a-z]{2,5}_[A-Za-z0-9]{1,60}" title="${t('supIdFormat')}" placeholder="pi_…, ord_…, re_…, po_…, rcpt_…"${wrong ? html` aria-invalid="true" aria-describedby="search-error"` : ''}></label>
  <button type="submit">${t('search')}</button>
</form>`;
}

type CardValues = Record<CardSearchField, string>;

function cardForm(dash: Dash, values: CardValues, wrong: readonly CardSearchField[]): Html {
  const { t } = dash;
  const invalid = (name: CardSearchField) => (wrong.includes(name) ? html` aria-invalid="true" aria-describedby="search-error"` : '');
  return html`<form class="filters" method="get" action="/operator/search" role="search" aria-label="${t('supByCard')}">
  <label>${t('supLast4')} <input name="last4" value="${values.last4}" required inputmode="numeric" pattern="[0-9]{4}" maxlength="4" size="6" autocomplete="off"${invalid('last4')}></label>
  <label>${t('supAmountSom')} <input name="amount" value="${values.amount}" required inputmode="decimal" maxlength="20" size="14" autocomplete="off"${invalid('amount')}></label>
  <label>${t('supDayTashkent')} <input type="date" name="day" value="${values.day}" required${invalid('day')}></label>
  <button type="submit">${t('supFindPayments')}</button>
</form>
<p class="hint">${t('supCardHint')}</p>`;
}

function resultsTable(dash: Dash, hits: SearchHit[], hasMore: boolean): Html {
  const { t } = dash;
  if (hits.length === 0) return html`<p class="empty" role="status">${t('supNoPayments')}</p>`;
  const rows = hits.map(
    (hit) => html`<tr><td data-label="${t('payment')}">${objectLink(hit.id)}</td><td data-label="${t('created')}">${timeElement(hit.created)}</td>
      <td data-label="${t('supProduct')}">${productLink(hit.productId)}</td><td data-label="${t('mode')}">${modeText(dash, hit.livemode)}</td>
      <td data-label="${t('status')}">${statusShown(dash, hit)}</td>
      <td data-label="${t('amount')}" class="num">${hit.amount === null ? '—' : money(dash, hit.amount)}</td><td data-label="${t('card')}">${cardText(hit.card)}</td></tr>`,
  );
  return html`<div class="table-wrap"><table><caption>${t('supPaymentsFound', { count: hits.length })}</caption>
<thead><tr><th scope="col">${t('payment')}</th><th scope="col">${t('created')}</th><th scope="col">${t('supProduct')}</th><th scope="col">${t('mode')}</th><th scope="col">${t('status')}</th><th scope="col" class="num">${t('amount')}</th><th scope="col">${t('card')}</th></tr></thead>
<tbody>${rows}</tbody></table></div>
${hasMore ? html`<p class="hint">${t('supMorePayments', { count: hits.length })}</p>` : ''}`;
}

interface SearchView {
  idWrong?: boolean;
  card?: CardValues;
  wrong?: CardSearchField[];
  results?: { hits: SearchHit[]; hasMore: boolean };
  /** An id nothing has, looked up. */
  missing?: string;
}

const WRONG_WORDS: Record<CardSearchField, MessageKey> = { last4: 'supWrongLast4', amount: 'supWrongAmount', day: 'supWrongDay' };

function searchPage(dash: Dash, session: OperatorSession, view: SearchView, path = '/operator/search'): Html {
  const { t } = dash;
  const errors = [
    ...(view.idWrong ? [t('supWrongId')] : []),
    ...(view.missing === undefined ? [] : [t('supNothingHasId', { id: view.missing })]),
    ...(view.wrong ?? []).map((field) => t(WRONG_WORDS[field])),
  ];
  const body = html`${errors.length ? html`<div class="notice error" role="alert" id="search-error">${errors.map((error) => html`<p>${error}</p>`)}</div>` : ''}
<p class="lead">${t('supSearchLead')}</p>
<h2>${t('supById')}</h2>
${idForm(dash, view.idWrong === true)}
<h2>${t('supByCard')}</h2>
${cardForm(dash, view.card ?? { last4: '', amount: '', day: '' }, view.wrong ?? [])}
${view.results ? resultsTable(dash, view.results.hits, view.results.hasMore) : ''}`;
  return consolePage(dash, session, { title: t('navOpSearch'), path, section: 'search', body });
}

function factValue(dash: Dash, found: FoundObject, name: FoundObject['facts'][number]['name'], value: string): Value {
  if (MONEY_FACTS.has(name)) return money(dash, value);
  const failureOf = FAILURE_OF[found.object];
  if (name === 'failure_code' && failureOf !== undefined) return failureReason(dash, value, failureOf);
  if (value === 'true' || value === 'false') return yesNo(dash, value === 'true');
  return name === 'url' || name === 'entries' ? html`<code>${value}</code>` : value;
}

function objectFields(dash: Dash, found: FoundObject): Html {
  const rows: Array<[MessageKey, Value]> = [
    ['supKind', dash.t(`supKind_${found.object}`)],
    ['supProduct', productLink(found.productId)],
    ['mode', modeText(dash, found.livemode)],
    ...(found.status === null ? [] : [['status', statusShown(dash, hitOf(found))] as [MessageKey, Value]]),
    ...(found.amount === null ? [] : [['amount', money(dash, found.amount)] as [MessageKey, Value]]),
    ...(found.card === null ? [] : [['card', cardText(found.card)] as [MessageKey, Value]]),
    ...(found.payoutAccount === null ? [] : [['opReviewAccount', accountShown(found.payoutAccount)] as [MessageKey, Value]]),
    ...found.facts.map(({ name, value }): [MessageKey, Value] => [`supFact_${name}`, factValue(dash, found, name, value)]),
    ...found.links.map(({ name, id }): [MessageKey, Value] => [`supLink_${name}`, objectLink(id)]),
    ['created', when(found.created)],
  ];
  return fieldsList(dash, rows);
}

function timelineList(dash: Dash, found: FoundObject, timeline: { entries: TimelineEntry[]; truncated: boolean }): Html {
  const { t } = dash;
  const now = Date.now();
  const items = timeline.entries.map((entry) => {
    const at = html`<span>${when(entry.at)}</span>`;
    if ('moment' in entry) return html`<li${entry.at.getTime() > now ? html` class="next"` : ''}>${at} ${t(`supMoment_${entry.moment}`)}</li>`;
    if ('child' in entry) return html`<li>${at} ${t(`supLink_${entry.child.name}`)} ${objectLink(entry.child.id)}</li>`;
    if ('ledger' in entry) return html`<li>${at} ${t('supLedgerMoved')} <code>${entry.ledger.reason}</code> ${objectLink(entry.ledger.id)}</li>`;
    const about = entry.event.object_id === found.id ? '' : html` · ${t('supAbout')} ${objectLink(entry.event.object_id)}`;
    return html`<li>${at} <code>${entry.event.type}</code> ${objectLink(entry.event.id)}${about}</li>`;
  });
  return html`<h2>${t('timeline')}</h2><ol class="timeline">${items}</ol>${timeline.truncated ? html`<p class="hint">${t('supTimelineTruncated')}</p>` : ''}`;
}

async function showObject(deps: ConsoleDeps, request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply): Promise<FastifyReply> {
  const session = operatorOf(request);
  const dash = dashOf(request);
  const { id } = request.params;
  if (!isObjectId(id)) return sendPage(reply, searchPage(dash, session, { idWrong: true }), 400);
  const found = await deps.support.find(consoleActor(session), id);
  if (!found) return sendPage(reply, searchPage(dash, session, { missing: id }), 404);
  const body = html`${objectFields(dash, found)}
<p><a href="/operator/audit?target=${found.id}">${dash.t('supAuditAboutIt')}</a> · <a href="/operator/search">${dash.t('supNewSearch')}</a></p>
${timelineList(dash, found, await deps.support.timeline(found))}`;
  const title = `${dash.t(`supKind_${found.object}`)} ${found.id}`;
  return sendPage(reply, consolePage(dash, session, { title, path: `/operator/search/${found.id}`, section: 'search', body }));
}

export function searchPages(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get('/search', ROUTE, async (request, reply) => {
    const session = operatorOf(request);
    const dash = dashOf(request);
    const q = queryText(request, 'q');
    const card = { last4: queryText(request, 'last4'), amount: queryText(request, 'amount'), day: queryText(request, 'day') };
    if (q !== '') return isObjectId(q) ? reply.redirect(`/operator/search/${q}`, 303) : sendPage(reply, searchPage(dash, session, { idWrong: true }), 400);
    if (card.last4 === '' && card.amount === '' && card.day === '') return sendPage(reply, searchPage(dash, session, {}));
    const checked = cardSearchOf({ last4: card.last4, amount: tiyinOfSom(card.amount), day: card.day });
    if (!checked.ok) return sendPage(reply, searchPage(dash, session, { card, wrong: checked.wrong }), 400);
    const results = await deps.support.payments(consoleActor(session), checked.search);
    const path = `/operator/search?${new URLSearchParams(card).toString()}`;
    return sendPage(reply, searchPage(dash, session, { card, results }, path));
  });
  app.get('/search/:id', ROUTE, (request: FastifyRequest<{ Params: { id: string } }>, reply) => showObject(deps, request, reply));
}
