// The merchant dashboard at /dashboard: server-rendered pages, forms that post and redirect, sessions in the database.
// Every request gets its language and its session here; every POST must carry the form token (CSRF), and come from
// this origin when the browser says where it comes from.
import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { LOGO_MAX_BYTES } from '../../modules/products/branding.js';
import type { DashboardDeps, Form } from './deps.js';
import { activationPages } from './pages/activation.js';
import { authPages } from './pages/auth.js';
import { emailLinkPages } from './pages/email-links.js';
import { brandingPages } from './pages/branding.js';
import { keyPages } from './pages/keys.js';
import { listPages } from './pages/lists.js';
import { detailPages } from './pages/details.js';
import { overviewPages } from './pages/overview.js';
import { payoutAccountPages, payoutHoldOf } from './pages/payout-account.js';
import { payoutDetailPages } from './pages/payout-detail.js';
import { payoutPages } from './pages/payouts.js';
import { securityPages } from './pages/security.js';
import { startPages } from './pages/start.js';
import { statementPages } from './pages/statement.js';
import { teamPages } from './pages/team.js';
import { webhookPages } from './pages/webhooks.js';
import { cookiesOf, DashboardError, dashOf, isToken, SESSION_COOKIE, SignInRequired, setLanguageCookie, signedOf, signInto, startDash, tokensEqual } from './context.js';
import { html } from '../html.js';
import { isLang } from './i18n.js';
import { page, sendPage } from './layout.js';

const FORM_BODY_MAX_BYTES = 16 * 1024;
const FORM_FIELDS_MAX = 50;

/** URL-encoded forms, as browsers post them: repeated names (checkboxes) become lists. */
function parseForms(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_MAX_BYTES }, (_request, text: string, done) => {
    const form: Form = {};
    const params = new URLSearchParams(text);
    let count = 0;
    for (const [name, value] of params) {
      if (++count > FORM_FIELDS_MAX) return done(new DashboardError(400, 'badForm'), undefined);
      const before = form[name];
      form[name] = before === undefined ? value : [...(Array.isArray(before) ? before : [before]), value];
    }
    done(null, form);
  });
}

/**
 * Forms with a file input (the branding's logo), in memory: one file, the fields as text. A file over the logo's
 * limit arrives cut one byte past it, so that the page refuses it in the words it uses for every bad logo.
 */
async function parseFileForms(app: FastifyInstance): Promise<void> {
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    throwFileSizeLimit: false,
    limits: { fields: FORM_FIELDS_MAX, fieldSize: FORM_BODY_MAX_BYTES, files: 1, fileSize: LOGO_MAX_BYTES + 1, parts: FORM_FIELDS_MAX + 1, headerPairs: 20 },
  });
}

/** Whether a POST comes from this origin, when the browser says (it always does for forms today). */
function sameOrigin(request: FastifyRequest, publicUrl: string): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  return origin === new URL(publicUrl).origin || origin === `${request.protocol}://${request.host}`;
}

/**
 * The request's address without `lang`, as a path on this origin. Resolving the dots of `/dashboard/..//evil.example/`
 * leaves `//evil.example/` (backslashes read as slashes), which a client takes for another host: the leading slashes
 * become one.
 */
function withoutLang(requestUrl: string): string {
  const url = new URL(requestUrl, 'http://dashboard');
  url.searchParams.delete('lang');
  return `/${url.pathname.replace(/^\/+/, '')}${url.search}`;
}

function guardRequests(app: FastifyInstance, deps: DashboardDeps): void {
  const secure = deps.publicUrl.startsWith('https:');
  app.addHook('onRequest', async (request, reply) => {
    const dash = startDash(request, reply, secure || request.protocol === 'https');
    request.dash = dash;
    const token = cookiesOf(request).get(SESSION_COOKIE);
    if (token === undefined || !isToken(token)) return;
    const signed = await signedOf(deps, token);
    if (!signed) return;
    signInto(dash, signed);
    dash.payoutHold = await payoutHoldOf(deps.payouts, signed);
  });
  app.addHook('preHandler', async (request, reply) => {
    const dash = dashOf(request);
    const lang = (request.query as Record<string, unknown> | undefined)?.lang;
    if (request.method === 'GET' && isLang(lang)) {
      setLanguageCookie(reply, dash, lang);
      return reply.redirect(withoutLang(request.url), 303);
    }
    if (request.method !== 'POST') return;
    const form = (request.body ?? {}) as Form;
    if (!sameOrigin(request, deps.publicUrl) || !tokensEqual(form._csrf, dash.csrf)) throw new DashboardError(403, 'forbidden');
  });
}

function renderErrors(app: FastifyInstance): void {
  const show = (request: FastifyRequest, reply: FastifyReply, status: number, key: 'notFound' | 'forbidden' | 'badForm' | 'tooManyRequests') => {
    const dash = request.dash;
    if (dash === null) return reply.code(status).type('text/plain; charset=utf-8').send(String(status));
    const body = html`<p>${dash.t(`${key}Explained`)}</p><p><a href="/dashboard">${dash.t('backToDashboard')}</a></p>`;
    return sendPage(reply, page(dash, { title: dash.t(key), path: '/dashboard', body }), status);
  };
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof SignInRequired) return request.method === 'GET' ? reply.redirect('/dashboard/login', 303) : show(request, reply, 403, 'forbidden');
    if (error instanceof DashboardError) return show(request, reply, error.statusCode, error.messageKey);
    if (error instanceof ApiError && error.statusCode === 404) return show(request, reply, 404, 'notFound');
    if (error instanceof ApiError && error.statusCode === 429) return show(request, reply, 429, 'tooManyRequests');
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status >= 400 && status < 500) return show(request, reply, 400, 'badForm');
    request.log.error({ err: error }, 'dashboard request failed');
    return reply.code(500).type('text/plain; charset=utf-8').send('Internal error');
  });
  app.setNotFoundHandler((request, reply) => show(request, reply, 404, 'notFound'));
}

export const dashboardRoutes: FastifyPluginAsync<DashboardDeps> = async (app, deps) => {
  app.decorateRequest('dash', null);
  parseForms(app);
  guardRequests(app, deps);
  renderErrors(app);
  authPages(app, deps);
  emailLinkPages(app, deps);
  startPages(app, deps);
  overviewPages(app, deps);
  listPages(app, deps);
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
