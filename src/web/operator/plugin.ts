// Tolov's operator console at /operator: server-rendered like the dashboard and under its rules (sessions in the
// database, form tokens, Origin, throttled log-in), with a session of its own, which no merchant session stands for.
import type { FastifyPluginAsync } from 'fastify';
import { cookiesOf, dashOf, isToken, sessionCookieOf, startDash } from '../dashboard/context.js';
import { errorPages, guardForms, parseForms, renderErrors } from '../dashboard/forms.js';
import { SecondFactorSetUpRequired } from './context.js';
import type { ConsoleDeps } from './deps.js';
import { consolePage } from './layout.js';
import { activationPages } from './pages/activations.js';
import { auditPages } from './pages/audit.js';
import { authPages } from './pages/auth.js';
import { checkPages } from './pages/checks.js';
import { operatorPages } from './pages/operators.js';
import { productPages } from './pages/products.js';
import { searchPages } from './pages/search.js';

const showError = errorPages((request, dash, title, body) => consolePage(dash, request.operator, { title, path: '/operator', body }), 'opBackToConsole');

export const consoleRoutes: FastifyPluginAsync<ConsoleDeps> = async (app, deps) => {
  app.decorateRequest('dash', null);
  app.decorateRequest('operator', null);
  parseForms(app);
  const secure = deps.publicUrl.startsWith('https:');
  app.addHook('onRequest', async (request, reply) => {
    request.dash = startDash(request, reply, secure || request.protocol === 'https', '/operator');
  });
  // Looked up once the request holds its place among those in flight, as the dashboard's sessions are.
  app.addHook('preHandler', async (request) => {
    const token = cookiesOf(request).get(sessionCookieOf('/operator'));
    if (token === undefined || !isToken(token)) return;
    const session = await deps.operators.session(token);
    if (!session) return;
    request.operator = session;
    dashOf(request).csrf = session.csrf_token;
  });
  guardForms(app, deps.publicUrl);
  renderErrors(app, showError, (error, request, reply) =>
    error instanceof SecondFactorSetUpRequired ? (request.method === 'GET' ? reply.redirect('/operator/second-factor', 303) : showError(request, reply, 403, 'forbidden')) : null,
  );
  authPages(app, deps);
  activationPages(app, deps);
  productPages(app, deps);
  searchPages(app, deps);
  checkPages(app, deps);
  auditPages(app, deps);
  operatorPages(app, deps);
};
