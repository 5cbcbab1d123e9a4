// The payouts of the selected mode: a list like every other (its filters in the address, paging, CSV), under the balance,
// the next automatic payout and "Pay out now", where owners and developers pay out any amount up to the available
// balance through the same command as the API, under the form's idempotency key (a form posted twice pays out once). A
// refusal comes back on the page, in its words, with what was typed.
import type { FastifyInstance } from 'fastify';
import type { Merchant } from '../../../core/merchant.js';
import { PAYOUT_STATUSES, type Payout, type PayoutAccount, type PayoutsQuery } from '../../../modules/payouts/schema.js';
import type { NextPayout } from '../../../modules/payouts/service.js';
import { CHANGES, dashOf, field, invocationOf, merchantOfSigned, requiredFormKeyOf, requireRole, ROUTE, signedIn, type Dash } from '../context.js';
import type { DashboardDeps, Form } from '../deps.js';
import { html, type Html } from '../../html.js';
import { csrfField, formKeyField, notice, sendPage, timeElement, when } from '../layout.js';
import { badge, failureReason, linked, listRoute, money, uzs, type ListPage, type Tiyin } from './lists.js';
import { optionalAmountOf } from './form-fields.js';
import { availableTile, nextPayoutTile } from './overview.js';
import { accountShown, payoutAccountOf } from './payout-account.js';

/** What the service refused, and the amount asked for when there was one. */
interface Refused {
  code: string;
  asked: number | undefined;
}

/** What the pay-out form says when it comes back: what was typed, and what is wrong with it or why it was refused. */
interface Said {
  typed?: string;
  amountError?: string;
  refused?: Refused;
}

/** What the page above the list knows: the balance, the next payout and the account, as of now. */
interface Standing {
  available: Tiyin;
  next: NextPayout;
  account: PayoutAccount | null;
}

/**
 * Why the service refused the payout, in the page's words, with what the merchant needs to act on it; `atAmount` when
 * the amount typed is what to change, said at its field.
 */
function refusal(dash: Dash, { code, asked }: Refused, standing: Standing): { text: Html | string; atAmount: boolean } {
  const { t } = dash;
  const available = money(dash, standing.available);
  if (code === 'INSUFFICIENT_BALANCE' && asked !== undefined) {
    return { text: t('payOutInsufficient', { asked: money(dash, asked), available }), atAmount: true };
  }
  if (code === 'INSUFFICIENT_BALANCE') return { text: t('payOutNothingAvailable', { available }), atAmount: false };
  if (code === 'PAYOUTS_HELD') return { text: t('payOutHeld', { until: when(standing.next.heldUntil) }), atAmount: false };
  if (code === 'PAYOUT_ACCOUNT_REQUIRED') {
    return { text: html`${t('payOutAccountRequired')} <a href="/dashboard/payout-account">${t('setPayoutAccount')}</a>`, atAmount: false };
  }
  return { text: t('actionRefused', { code }), atAmount: false };
}

/**
 * "Pay out now", to the roles that may refund, confirmed first: the amount (none for the whole available balance) with
 * its hint and what is wrong with it above the field, as a person reads them before typing; any other refusal above all.
 */
function payOutForm(dash: Dash, standing: Standing, said: Said): Html {
  const { t } = dash;
  if (dash.signed === null || !CHANGES.includes(dash.signed.session.role)) return html`<p class="hint">${t('payOutRoles')}</p>`;
  const refused = said.refused === undefined ? null : refusal(dash, said.refused, standing);
  const error = said.amountError ?? (refused?.atAmount ? refused.text : undefined);
  const above = refused && !refused.atAmount ? notice('error', refused.text) : '';
  const invalid = error === undefined ? '' : html` aria-invalid="true" autofocus`;
  const described = `pay-out-amount-hint${error === undefined ? '' : ' pay-out-amount-error'}`;
  const confirm = standing.account ? html` data-confirm="${t('payOutConfirm', { account: accountShown(standing.account) })}"` : '';
  return html`<form class="card pay-out" method="post" action="/dashboard/payouts"${confirm} aria-labelledby="pay-out-title">${csrfField(dash)}${formKeyField()}
  <h2 id="pay-out-title">${t('payOutNow')}</h2>
  ${above}
  <label for="pay-out-amount">${t('payOutAmount')}</label>
  <p class="hint" id="pay-out-amount-hint">${t(BigInt(standing.available) > 0n ? 'payOutAmountHint' : 'payOutNothingHint', { available: money(dash, standing.available) })}</p>
  ${error === undefined ? '' : html`<p class="field-error" id="pay-out-amount-error">${error}</p>`}
  <div class="pay-out-row">
    <input id="pay-out-amount" name="amount" class="amount" inputmode="decimal" autocomplete="off" maxlength="30"
      value="${said.typed ?? ''}" aria-describedby="${described}"${invalid}>
    <button type="submit" class="primary">${t('payOutNow')}</button>
  </div>
</form>`;
}

/** Above the list: how payouts work, what is available and the next payout, and the form. */
async function intro(deps: DashboardDeps, dash: Dash, merchant: Merchant, said: Said = {}): Promise<Html> {
  const [balance, next, account] = await Promise.all([deps.ledger.balance(merchant), deps.payouts.next(merchant), payoutAccountOf(deps.payouts, merchant)]);
  const standing = { available: balance.available, next, account };
  return html`<p class="lead">${dash.t('payoutsIntro', { minimum: money(dash, next.minimum), time: next.time })}</p>
<section class="tiles payouts" aria-label="${dash.t('balance')}">${availableTile(dash, balance.available)}${nextPayoutTile(dash, next, account)}</section>
${payOutForm(dash, standing, said)}`;
}

/** Whether the daily schedule made the payout or someone asked for it. */
export const kindText = (dash: Dash, payout: Pick<Payout, 'automatic'>) => dash.t(payout.automatic ? 'payoutAutomatic' : 'payoutManual');

/** A payout's status, and why it failed under it. */
export const payoutBadge = (dash: Dash, payout: Pick<Payout, 'status' | 'failureCode'>): Html =>
  html`${badge(dash, 'payout', payout.status)}${payout.failureCode ? html` ${failureReason(dash, payout.failureCode, 'payoutFailure')}` : ''}`;

function payoutList(app: FastifyInstance, deps: DashboardDeps): ListPage {
  return listRoute<Payout>(app, {
    section: 'payouts', title: 'navPayouts', caption: 'payoutsCaption', dates: true,
    choices: [{ param: 'status', label: 'status', values: PAYOUT_STATUSES, of: 'payout' }],
    search: { idPrefix: 'po_', other: null },
    list: (merchant, query) => deps.payouts.list(merchant, query as PayoutsQuery),
    find: (merchant, id) => deps.payouts.get(merchant, id),
    intro: (dash, merchant) => intro(deps, dash, merchant),
    csv: [
      ['id', (item) => item.id], ['created', (item) => item.created], ['amount_uzs', (item) => uzs(item.amount)], ['status', (item) => item.status],
      ['automatic', (item) => String(item.automatic)], ['arrival_date', (item) => item.arrivalDate], ['bank_mfo', (item) => item.destination.bankMfo],
      ['account_last4', (item) => item.destination.accountLast4], ['failure_code', (item) => item.failureCode],
    ],
    columns: [
      { label: 'id', cell: linked('payouts') },
      { label: 'amount', cell: (item, dash) => money(dash, item.amount), num: true },
      { label: 'status', cell: (item, dash) => payoutBadge(dash, item) },
      { label: 'payoutKind', cell: (item, dash) => kindText(dash, item) },
      { label: 'arrivalDate', cell: (item) => html`<time datetime="${item.arrivalDate}">${item.arrivalDate}</time>` },
      { label: 'destination', cell: (item) => html`<span class="one-line">${accountShown(item.destination)}</span>` },
      { label: 'created', cell: (item) => timeElement(item.created) },
    ],
  }, 'payouts');
}

/**
 * "Pay out now" posted: the payout made, and its page shown; or the list's page again, with what was typed and what
 * was wrong (400) or why the service refused it (409).
 */
function payOutRoute(app: FastifyInstance, deps: DashboardDeps, render: ListPage): void {
  app.post<{ Body: Form }>('/payouts', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    requireRole(signed, CHANGES);
    const key = requiredFormKeyOf(request.body);
    const dash = dashOf(request);
    const merchant = merchantOfSigned(signed);
    const typed = field(request.body, 'amount');
    const again = async (status: number, said: Said) => sendPage(reply, await render(request, await intro(deps, dash, merchant, { typed, ...said })), status);
    const read = optionalAmountOf(dash, typed);
    if ('error' in read) return again(400, { amountError: read.error });
    const body = read.amount === undefined ? {} : { amount: read.amount };
    const answer = await deps.payouts.create(invocationOf(request, signed, body, key), body);
    if (!answer.ok) return again(answer.status, { refused: { code: answer.error.code, asked: read.amount } });
    return reply.redirect(`/dashboard/payouts/${answer.value.id}?done=created`, 303);
  });
}

export function payoutPages(app: FastifyInstance, deps: DashboardDeps): void {
  payOutRoute(app, deps, payoutList(app, deps));
}
