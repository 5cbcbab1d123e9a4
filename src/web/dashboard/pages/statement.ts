// The statement: every movement of the balance (a payment, a refund, a payout and its return), newest first, as the API
// lists it (GET /v1/balance_transactions), under the balance it explains. A list like the others, with its filters,
// paging and CSV export, and narrowed to one payout's transactions from that payout's page (`?payout=po_…`); each row
// links to the payment or the payout it concerns.
import type { FastifyInstance } from 'fastify';
import type { Merchant } from '../../../core/merchant.js';
import type { List } from '../../../core/pagination.js';
import { STATEMENT_TYPES, type BalanceTransaction, type BalanceTransactionsQuery } from '../../../modules/ledger/schema.js';
import type { LedgerService } from '../../../modules/ledger/service.js';
import type { RefundsService } from '../../../modules/refunds/service.js';
import type { Dash } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { html, type Html } from '../../html.js';
import { wrappingTime } from '../layout.js';
import { badge, linked, listRoute, money, uzs, type Column } from './lists.js';
import { balanceTiles } from './overview.js';

/** A row with the payment it concerns: its source for a charge, the payment given back for a refund, none for a payout. */
export type StatementItem = BalanceTransaction & { payment: string | null };

/** A refund's row names the refund, but the merchant looks for the payment it gave back: read for the page at once. */
export async function withPayments(refunds: RefundsService, merchant: Merchant, rows: BalanceTransaction[]): Promise<StatementItem[]> {
  const refundIds = rows.filter((row) => row.type === 'refund').map((row) => row.source);
  const paymentsOfRefunds = refundIds.length === 0 ? new Map<string, string>() : await refunds.paymentsOf(merchant, refundIds);
  const paymentOf = (row: BalanceTransaction): string | null =>
    row.type === 'charge' ? row.source : row.type === 'refund' ? (paymentsOfRefunds.get(row.source) ?? null) : null;
  return rows.map((row) => ({ ...row, payment: paymentOf(row) }));
}

/**
 * What moved the balance, linking to the payment it concerns (a refund has no page of its own; its payment shows it)
 * or to the payout.
 */
function sourceCell(item: StatementItem): Html {
  if (item.type === 'payout' || item.type === 'payout_failure') return linked('payouts')({ id: item.source });
  const shown = html`<code>${item.source}</code>`;
  return item.payment === null ? shown : html`<a href="/dashboard/payments/${item.payment}">${shown}</a>`;
}

/** A row's type in the page's words, the API's value in its title. */
const typeText = (dash: Dash, type: BalanceTransaction['type']) => html`<span title="${type}">${dash.t(`balanceType_${type}`)}</span>`;

/** The statement's columns: its page's, and a payout's transactions on the payout's page. */
export const STATEMENT_COLUMNS: Column<StatementItem>[] = [
  { label: 'created', cell: (item) => wrappingTime(item.created) },
  { label: 'transactionType', cell: (item, dash) => typeText(dash, item.type) },
  { label: 'amount', cell: (item, dash) => money(dash, item.amount), num: true },
  { label: 'fee', cell: (item, dash) => money(dash, item.fee), num: true },
  { label: 'net', cell: (item, dash) => money(dash, item.net), num: true },
  { label: 'status', cell: (item, dash) => badge(dash, 'balance', item.status) },
  { label: 'availableOn', cell: (item) => wrappingTime(item.availableOn) },
  { label: 'source', cell: sourceCell },
];

/** The balance the statement explains, and how: its rows' net sums to each part, whatever filters the list has. */
async function balanceIntro(ledger: LedgerService, dash: Dash, merchant: Merchant): Promise<Html> {
  return html`<section class="tiles balance" aria-label="${dash.t('balance')}">${balanceTiles(dash, await ledger.balance(merchant))}</section>
<p class="sums">${dash.t('statementSums')}</p>`;
}

export function statementPages(app: FastifyInstance, { ledger, refunds }: DashboardDeps): void {
  const page = async (merchant: Merchant, found: Promise<List<BalanceTransaction>>): Promise<List<StatementItem>> => {
    const list = await found;
    return { ...list, data: await withPayments(refunds, merchant, list.data) };
  };
  listRoute<StatementItem>(app, {
    section: 'statement', title: 'navStatement', caption: 'statementCaption', dates: true, scopedBy: 'payout',
    choices: [{ param: 'type', label: 'transactionType', values: STATEMENT_TYPES, of: 'balanceType' }],
    search: { idPrefix: 'txn_', other: 'source' },
    list: (merchant, query) => page(merchant, ledger.statement(merchant, query as BalanceTransactionsQuery)),
    find: async (merchant, id) => (await withPayments(refunds, merchant, [await ledger.statementRow(merchant, id)]))[0]!,
    intro: (dash, merchant) => balanceIntro(ledger, dash, merchant),
    csv: [
      ['id', (item) => item.id], ['created', (item) => item.created], ['type', (item) => item.type], ['amount_uzs', (item) => uzs(item.amount)],
      ['fee_uzs', (item) => uzs(item.fee)], ['net_uzs', (item) => uzs(item.net)], ['status', (item) => item.status], ['available_on', (item) => item.availableOn],
      ['source', (item) => item.source], ['payment_intent', (item) => item.payment], ['payout', (item) => item.payout],
    ],
    columns: STATEMENT_COLUMNS,
  }, 'statement');
}
