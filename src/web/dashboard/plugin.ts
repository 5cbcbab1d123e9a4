// The merchant dashboard at /dashboard: server-rendered pages, forms that post and redirect, sessions in the database.
// Every request gets its language and its session here; every POST must carry the form token (CSRF), and come from
// this origin when the browser says where it comes from.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { DashboardDeps } from './deps.js';
import { activationPages } from './pages/activation.js';
import { authPages } from './pages/auth.js';
import { emailLinkPages } from './pages/email-links.js';
import { brandingPages } from './pages/branding.js';
import { keyPages } from './pages/keys.js';
import { listPages } from './pages/lists.js';
import { detailPages } from './pages/details.js';
import { overviewPages } from './pages/overview.js';
import { paymentLinkDetailPages } from './pages/payment-link-detail.js';
import { paymentLinkPages } from './pages/payment-links.js';
import { payoutAccountPages, payoutHoldOf } from './pages/payout-account.js';
import { payoutDetailPages } from './pages/payout-detail.js';
import { payoutPages } from './pages/payouts.js';
import { securityPages } from './pages/security.js';
import { startPages } from './pages/start.js';
import { statementPages } from './pages/statement.js';
import { teamPages } from './pages/team.js';
import { webhookPages } from './pages/webhooks.js';
import { cookiesOf, dashOf, isToken, SESSION_COOKIE, signedOf, signInto, startDash } from './context.js';
import { errorPages, guardForms, parseFileForms, parseForms, renderErrors } from './forms.js';
import { page } from './layout.js';

function guardRequests(app: FastifyInstance, deps: DashboardDeps): void {
  const secure = deps.publicUrl.startsWith('https:');
  app.addHook('onRequest', async (request, reply) => {
    request.dash = startDash(request, reply, secure || request.protocol === 'https');
  });
  // The session is looked up once the request holds its place among those in flight (a preHandler the service adds
  // before every page's): requests with made-up session tokens then queue no more lookups than the places bound. An
  // error before it (a form that cannot be read) is shown in the signed-out frame.
  app.addHook('preHandler', async (request) => {
    const dash = dashOf(request);
    const token = cookiesOf(request).get(SESSION_COOKIE);
    if (token === undefined || !isToken(token)) return;
    const signed = await signedOf(deps, token);
    if (!signed) return;
    signInto(dash, signed);
    dash.payoutHold = await payoutHoldOf(deps.payouts, signed);
  });
  guardForms(app, deps.publicUrl);
}

const showError = errorPages((_request, dash, title, body) => page(dash, { title, path: '/dashboard', body }), 'backToDashboard');

export const dashboardRoutes: FastifyPluginAsync<DashboardDeps> = async (app, deps) => {
  app.decorateRequest('dash', null);
  parseForms(app);
  guardRequests(app, deps);
  renderErrors(app, showError);
  authPages(app, deps);
  emailLinkPages(app, deps);
  startPages(app, deps);
  overviewPages(app, deps);
  listPages(app, deps);
  paymentLinkPages(app, deps);
  paymentLinkDetailPages(app, deps);
  statementPages(app, deps);
  payoutPages(app, deps);
  detailPages(app, deps);
  payoutDetailPages(app, deps);
  keyPages(app, deps);
  webhookPages(app, deps);
  // Only the branding's form carries a file: a multipart body anywhere else is refused as a form that cannot be read.
  await app.register(async (withFiles) => {
    await parseFileForms(withFiles);
    brandingPages(withFiles, deps);
  });
  teamPages(app, deps);
  securityPages(app, deps);
  payoutAccountPages(app, deps);
  activationPages(app, deps);
};
