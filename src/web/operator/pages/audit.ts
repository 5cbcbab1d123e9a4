// The operators' audit log, newest first, a page at a time, optionally about one object: who, through what, did what
// to what, and when. Read-only: no route changes it, and the database refuses any statement that would.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DashboardError, dashOf, type Dash } from '../../dashboard/context.js';
import { sendPage } from '../../dashboard/layout.js';
import { html, type Html } from '../../html.js';
import { ROUTE, operatorOf } from '../context.js';
import type { ConsoleDeps } from '../deps.js';
import { consolePage } from '../layout.js';
import { auditTable, queryText } from './shared.js';

const SEQ = /^[0-9]{1,18}$/;
/** As long as the log keeps a target. */
const TARGET_LENGTH_MAX = 200;

/** The page's address: `before` an entry, about `target`; the first page of all when neither. */
function auditAddress(query: { before?: string; target?: string }): string {
  const kept = Object.entries(query).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== '');
  return kept.length === 0 ? '/operator/audit' : `/operator/audit?${new URLSearchParams(kept).toString()}`;
}

/** The address's `before` and `target`, checked: a malformed one is a bad request, not a page of something else. */
function auditQuery(request: FastifyRequest): { before?: string; target?: string } {
  const before = queryText(request, 'before');
  const target = queryText(request, 'target');
  if (before !== '' && !SEQ.test(before)) throw new DashboardError(400, 'badForm');
  if (target.length > TARGET_LENGTH_MAX) throw new DashboardError(400, 'badForm');
  return { ...(before === '' ? {} : { before }), ...(target === '' ? {} : { target }) };
}

function filterForm(dash: Dash, target: string | undefined): Html {
  const { t } = dash;
  return html`<form class="filters" method="get" action="/operator/audit" role="search" aria-label="${t('filters')}">
  <label>${t('supAuditTarget')} <input type="search" name="target" value="${target ?? ''}" maxlength="${TARGET_LENGTH_MAX}" autocomplete="off" spellcheck="false"></label>
  <button type="submit">${t('applyFilters')}</button> <a href="/operator/audit">${t('clearFilters')}</a>
</form>`;
}

export function auditPages(app: FastifyInstance, { operators }: ConsoleDeps): void {
  app.get('/audit', ROUTE, async (request, reply) => {
    const session = operatorOf(request);
    const dash = dashOf(request);
    const { t } = dash;
    const query = auditQuery(request);
    const { rows, hasMore } = await operators.auditLog({ before: query.before === undefined ? undefined : BigInt(query.before), target: query.target ?? null });
    const table = rows.length === 0 ? html`<p class="empty">${t('supAuditEmpty')}</p>` : auditTable(dash, rows, 'supAuditCaption', query.target !== undefined);
    const older = hasMore ? html`<p><a href="${auditAddress({ before: rows.at(-1)!.seq, target: query.target })}" rel="next">${t('supAuditOlder')}</a></p>` : '';
    const body = html`<p class="lead">${t('supAuditLead')}</p>${filterForm(dash, query.target)}${table}${older}`;
    return sendPage(reply, consolePage(dash, session, { title: t('navOpAudit'), path: auditAddress(query), section: 'audit', body }));
  });
}
