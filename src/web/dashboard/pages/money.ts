// The latest payments and orders of the selected mode, a page at a time.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Merchant } from '../../../core/merchant.js';
import type { List, ListQuery } from '../../../core/pagination.js';
import { dashOf, ROUTE, signedIn, merchantOfSigned, type Dash } from '../context.js';
import { html, type Html } from '../html.js';
import { page, sendPage, when } from '../layout.js';
import type { DashboardDeps } from '../deps.js';

const PAGE_SIZE = 25;
const CURSOR = /^[a-z]{2,4}_[0-9A-Za-z]{8,64}$/;

/** An amount in tiyin as so'm with two decimals, grouped as the language writes numbers. */
export function money(dash: Dash, tiyin: number): string {
  const locale = { uz: 'uz-UZ', ru: 'ru-RU', en: 'en-US' }[dash.lang];
  return `${new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(tiyin / 100)} UZS`;
}

interface Row {
  id: string;
  amount: number;
  status: string;
  description?: string | null;
  created: string;
}

function table(dash: Dash, caption: string, rows: Row[], next: string | null, path: string): Html {
  const { t } = dash;
  if (rows.length === 0) return html`<p class="empty">${t('nothingYet')}</p>`;
  const body = rows.map(
    (row) => html`<tr><td><code>${row.id}</code></td><td class="num">${money(dash, row.amount)}</td>
      <td><span class="status s-${row.status.toLowerCase()}">${row.status}</span></td><td>${row.description ?? ''}</td><td>${when(row.created)}</td></tr>`,
  );
  return html`<div class="table-wrap"><table><caption>${caption}</caption>
<thead><tr><th scope="col">${t('id')}</th><th scope="col" class="num">${t('amount')}</th><th scope="col">${t('status')}</th><th scope="col">${t('description')}</th><th scope="col">${t('created')}</th></tr></thead>
<tbody>${body}</tbody></table></div>
${next ? html`<p><a href="${path}?starting_after=${next}">${t('olderItems')}</a></p>` : ''}`;
}

export function moneyPages(app: FastifyInstance, { payments, orders }: DashboardDeps): void {
  type Listed = FastifyRequest<{ Querystring: { starting_after?: string } }>;
  const listPage = (section: 'payments' | 'orders', list: (merchant: Merchant, query: ListQuery) => Promise<List<Row>>) => {
    const path = `/dashboard/${section}`;
    const [title, caption] = section === 'payments' ? (['navPayments', 'paymentsCaption'] as const) : (['navOrders', 'ordersCaption'] as const);
    app.get(`/${section}`, ROUTE, async (request: Listed, reply) => {
      const dash = dashOf(request);
      const cursor = request.query.starting_after;
      const query = typeof cursor === 'string' && CURSOR.test(cursor) ? { limit: PAGE_SIZE, starting_after: cursor } : { limit: PAGE_SIZE };
      const found = await list(merchantOfSigned(signedIn(request)), query);
      const next = found.has_more ? found.data.at(-1)!.id : null;
      const body = table(dash, dash.t(caption), found.data, next, path);
      return sendPage(reply, page(dash, { title: dash.t(title), path, section, body }));
    });
  };
  listPage('payments', (merchant, query) => payments.list(merchant, query));
  listPage('orders', (merchant, query) => orders.list(merchant, query));
}
