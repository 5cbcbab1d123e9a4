// The money checks as an operator reads them: each in words, ok or not, and what it found, with links to the product
// and the object each problem is about. The same checks as GET /admin/v1/checks, which monitoring polls.
import type { FastifyInstance } from 'fastify';
import type { Check } from '../../../modules/checks/schema.js';
import { dashOf, type Dash } from '../../dashboard/context.js';
import { notice, sendPage, when } from '../../dashboard/layout.js';
import { html, type Html } from '../../html.js';
import { ROUTE, operatorOf } from '../context.js';
import type { ConsoleDeps } from '../deps.js';
import { consolePage } from '../layout.js';
import { modeText, objectLink, productLink } from './shared.js';

/** The checks the service makes, each with a name and a rule in the page's words. */
const CHECK_NAMES = ['ledger_total_zero', 'ledger_transactions_balanced', 'balances', 'bank_reconciliation', 'operations_open', 'receipts_unsettled', 'payouts_failed', 'webhook_endpoints_failing'] as const;
type CheckName = (typeof CHECK_NAMES)[number];
const isKnown = (name: string): name is CheckName => (CHECK_NAMES as readonly string[]).includes(name);

function problemsTable(dash: Dash, check: Check): Html {
  const { t } = dash;
  const rows = check.problems.map(
    (problem) => html`<tr><td data-label="${t('supProblem')}"><span lang="en">${problem.message}</span></td>
      <td data-label="${t('supProduct')}">${problem.productId === null ? '' : productLink(problem.productId)}</td>
      <td data-label="${t('supObject')}">${problem.objectId === null ? '' : objectLink(problem.objectId)}</td>
      <td data-label="${t('mode')}">${problem.livemode === null ? '' : modeText(dash, problem.livemode)}</td></tr>`,
  );
  return html`<div class="table-wrap"><table><caption>${t('supProblemsCaption', { count: check.problems.length })}</caption>
<thead><tr><th scope="col">${t('supProblem')}</th><th scope="col">${t('supProduct')}</th><th scope="col">${t('supObject')}</th><th scope="col">${t('mode')}</th></tr></thead>
<tbody>${rows}</tbody></table></div>
${check.truncated ? html`<p class="hint">${t('supProblemsTruncated', { count: check.problems.length })}</p>` : ''}`;
}

function checkSection(dash: Dash, check: Check): Html {
  const { t } = dash;
  const id = `check-${check.name}`;
  const title = isKnown(check.name) ? t(`supCheck_${check.name}`) : check.name;
  // A check this page has no words for yet still shows, with the service's own English rule.
  const rule = isKnown(check.name) ? t(`supCheckRule_${check.name}`) : html`<span lang="en">${check.description}</span>`;
  const state = html`<span class="status s-${check.ok ? 'succeeded' : 'failed'}">${t(check.ok ? 'supCheckOk' : 'supCheckNotOk')}</span>`;
  return html`<section class="card" aria-labelledby="${id}">
  <h2 id="${id}">${title} ${state}</h2>
  <p class="hint">${rule} <code>${check.name}</code></p>
  ${check.ok ? '' : problemsTable(dash, check)}
</section>`;
}

export function checkPages(app: FastifyInstance, { checks }: ConsoleDeps): void {
  app.get('/checks', ROUTE, async (request, reply) => {
    const session = operatorOf(request);
    const dash = dashOf(request);
    const { t } = dash;
    const checkedAt = new Date();
    const list = await checks.all(checkedAt);
    const failing = list.data.filter((check) => !check.ok).length;
    const body = html`${failing === 0 ? notice('ok', t('supChecksAllOk')) : notice('error', t('supChecksFailing', { count: failing }))}
<p class="lead">${t('supChecksLead', { at: when(checkedAt) })}</p>
${list.data.map((check) => checkSection(dash, check))}`;
    return sendPage(reply, consolePage(dash, session, { title: t('navOpChecks'), path: '/operator/checks', section: 'checks', body }));
  });
}
