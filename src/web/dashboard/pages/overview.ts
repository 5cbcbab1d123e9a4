// The overview, where the day starts: fiscal receipts that failed (a legal matter for the merchant), the balance (with
// the way to its statement), what came in over the last 30 days (a chart, with its figures as a table for screen
// readers), the success rate, the next automatic payout (or why none is coming), and the latest payments.
import type { FastifyInstance } from 'fastify';
import type { Merchant } from '../../../core/merchant.js';
import type { ReceiptsService } from '../../../modules/receipts/service.js';
import type { NextPayout } from '../../../modules/payouts/service.js';
import type { Day } from '../../../modules/payments/activity.js';
import { dashOf, merchantOfSigned, ROUTE, signedIn, type Dash } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { html, type Html, type Value } from '../../html.js';
import { formatCount, formatLongDay, formatPercent, formatShortDay, NUMBER_WRITING } from '../i18n.js';
import { page, sendPage, timeElement, when } from '../layout.js';
import { money, paymentBadge, type Tiyin } from './lists.js';
import { accountShown, payoutAccountOf } from './payout-account.js';
import type { PayoutAccount } from '../../../modules/payouts/schema.js';
import { serveLibrary } from '../../library.js';

const RECENT = 5;
/** Failed receipts counted at most: past it the flag says "100+", the list has them all. */
const FAILED_RECEIPTS_COUNTED = 100;

/**
 * The receipts of the overview's 30 days (from `firstDay`) that the fiscal module will never register, said calmly, with
 * a link to them in the receipts list; nothing when there are none.
 */
async function failedReceipts(dash: Dash, receipts: ReceiptsService, merchant: Merchant, firstDay: string): Promise<Html | ''> {
  const failed = await receipts.list(merchant, { limit: FAILED_RECEIPTS_COUNTED, status: 'FAILED', 'created[gte]': `${firstDay}T00:00:00Z` });
  if (failed.data.length === 0) return '';
  const count = `${formatCount(dash.lang, failed.data.length)}${failed.has_more ? '+' : ''}`;
  return html`<p class="notice warning">${dash.t('failedReceiptsFlag', { count })} <a href="/dashboard/receipts?status=FAILED&amp;from=${firstDay}">${dash.t('showFailedReceipts')}</a></p>`;
}

const tile = (label: string, value: string, hint?: string) =>
  html`<div class="tile"><p class="tile-label">${label}</p><p class="tile-value">${value}</p>${hint ? html`<p class="hint">${hint}</p>` : ''}</div>`;

/** The available balance as a tile: what a payout can take now. */
export const availableTile = (dash: Dash, available: Tiyin) =>
  tile(dash.t('availableBalance'), money(dash, available), BigInt(available) < 0n ? dash.t('negativeBalanceExplained') : undefined);

/** The balance's two parts as tiles: the overview's first two, and the head of the statement that explains them. */
export function balanceTiles(dash: Dash, balance: { available: Tiyin; pending: Tiyin }): Html {
  return html`${availableTile(dash, balance.available)}
  ${tile(dash.t('pendingBalance'), money(dash, balance.pending), dash.t('pendingExplained'))}`;
}

/**
 * When the next automatic payout comes and where it goes; or what stops it: no account (with the way to set one), a
 * hold after a change of the account, or too little unpaid.
 */
function nextPayoutState(dash: Dash, next: NextPayout, account: PayoutAccount | null): Value {
  const { t } = dash;
  if (account === null) return html`${t('nextPayoutNoAccount')} <a href="/dashboard/payout-account">${t('setPayoutAccount')}</a>`;
  if (next.heldUntil !== null) return html`<strong class="held">${t('nextPayoutHeld', { until: when(next.heldUntil) })}</strong>`;
  if (BigInt(next.amount) < BigInt(next.minimum)) return t('nextPayoutBelowMinimum', { minimum: money(dash, next.minimum) });
  return t('nextPayoutOn', { date: formatLongDay(dash.lang, next.date), time: next.time, account: accountShown(account) });
}

/**
 * The next automatic payout as a tile: what it would pay out now, and when (or why not). Refunds may leave less than
 * nothing unpaid: no payout takes money back, so that is nothing to pay out.
 */
export function nextPayoutTile(dash: Dash, next: NextPayout, account: PayoutAccount | null): Html {
  const amount = next.amount > 0 ? next.amount : 0;
  return html`<div class="tile"><p class="tile-label">${dash.t('nextPayout')}</p><p class="tile-value">${money(dash, amount)}</p>
  <p class="hint">${nextPayoutState(dash, next, account)}</p></div>`;
}

interface Figures {
  days: Day[];
  balance: { available: Tiyin; pending: Tiyin };
  next: NextPayout;
  account: PayoutAccount | null;
}

function figures(dash: Dash, { days, balance, next, account }: Figures): Html {
  const { t } = dash;
  const succeeded = days.reduce((sum, day) => sum + day.succeededCount, 0);
  const failed = days.reduce((sum, day) => sum + day.failedCount, 0);
  const volume = days.reduce((sum, day) => sum + day.succeededAmount, 0n);
  const rate = succeeded + failed === 0 ? '—' : formatPercent(dash.lang, succeeded / (succeeded + failed));
  return html`<section class="tiles" aria-label="${t('navOverview')}">
  ${balanceTiles(dash, balance)}
  ${tile(t('volume30'), money(dash, volume), t('paymentsCountOf', { count: formatCount(dash.lang, succeeded) }))}
  ${tile(t('successRate'), rate, t('declinedCountOf', { count: formatCount(dash.lang, failed) }))}
  ${nextPayoutTile(dash, next, account)}
</section>
<p class="tiles-more"><a href="/dashboard/statement">${t('seeStatement')}</a> · <a href="/dashboard/payouts">${t('seePayouts')}</a> · <a href="/dashboard/payout-account">${t('navPayoutAccount')}</a></p>`;
}

/** The chart (drawn by overview.js from the data attribute) and the same figures as a table. */
function activity(dash: Dash, days: Day[]): Html {
  const { t } = dash;
  // The chart only draws (to the pixel): a float is enough there; the table below says each figure exactly.
  const data = JSON.stringify({ days: days.map((day) => day.day), dayLabels: days.map((day) => formatShortDay(dash.lang, day.day)), volume: days.map((day) => Number(day.succeededAmount) / 100), count: days.map((day) => day.succeededCount), labels: { day: t('day'), volume: t('chartVolume'), count: t('navPayments') } });
  const rows = days.map(
    (day) => html`<tr><td>${day.day}</td><td class="num">${money(dash, day.succeededAmount)}</td><td class="num">${formatCount(dash.lang, day.succeededCount)}</td><td class="num">${formatCount(dash.lang, day.failedCount)}</td></tr>`,
  );
  return html`<h2>${t('last30Days')}</h2>
<div class="chart" id="activity-chart" data-activity="${data}" data-numbers="${JSON.stringify(NUMBER_WRITING[dash.lang])}" role="img" aria-label="${t('chartLabel')}"></div>
<details><summary>${t('chartTable')}</summary><div class="table-wrap keeps-columns"><table><caption>${t('chartLabel')}</caption>
<thead><tr><th scope="col">${t('day')}</th><th scope="col" class="num">${t('volume')}</th><th scope="col" class="num">${t('navPayments')}</th><th scope="col" class="num">${t('declined')}</th></tr></thead>
<tbody>${rows}</tbody></table></div></details>`;
}

export function overviewPages(app: FastifyInstance, { payments, activity: paymentActivity, ledger, receipts, payouts }: DashboardDeps): void {
  serveLibrary(app, '/library', 'uplot', { 'uPlot.iife.min.js': 'dist/uPlot.iife.min.js', 'uPlot.min.css': 'dist/uPlot.min.css' });
  app.get('/overview', ROUTE, async (request, reply) => {
    const dash = dashOf(request);
    const merchant = merchantOfSigned(signedIn(request));
    const [days, balance, recent, next, account] = await Promise.all([
      paymentActivity.daily(merchant),
      ledger.balance(merchant),
      payments.list(merchant, { limit: RECENT }),
      payouts.next(merchant),
      payoutAccountOf(payouts, merchant),
    ]);
    const flag = await failedReceipts(dash, receipts, merchant, days[0]!.day);
    const latest = recent.data.map(
      (intent) => html`<tr><td data-label="${dash.t('id')}"><a href="/dashboard/payments/${intent.id}"><code>${intent.id}</code></a></td><td data-label="${dash.t('amount')}" class="num">${money(dash, intent.amount)}</td>
        <td data-label="${dash.t('status')}">${paymentBadge(dash, intent)}</td><td data-label="${dash.t('created')}">${timeElement(intent.created)}</td></tr>`,
    );
    const body = html`${flag}${figures(dash, { days, balance, next, account })}
${activity(dash, days)}
<h2>${dash.t('recentPayments')}</h2>
${latest.length === 0 ? html`<p class="empty">${dash.t('nothingYet')}</p>` : html`<div class="table-wrap"><table><caption>${dash.t('recentPayments')}</caption>
<thead><tr><th scope="col">${dash.t('id')}</th><th scope="col" class="num">${dash.t('amount')}</th><th scope="col">${dash.t('status')}</th><th scope="col">${dash.t('created')}</th></tr></thead>
<tbody>${latest}</tbody></table></div><p><a href="/dashboard/payments">${dash.t('allPayments')}</a></p>`}`;
    const head = html`<link rel="stylesheet" href="/dashboard/library/uPlot.min.css">
<script src="/dashboard/library/uPlot.iife.min.js" defer></script>
<script src="/assets/overview.js" defer></script>`;
    return sendPage(reply, page(dash, { title: dash.t('navOverview'), path: '/dashboard/overview', section: 'overview', body, head }));
  });
}

