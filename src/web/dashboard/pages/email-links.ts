// The pages that links in Tolov's mail open: finishing a sign-up with its password, and setting a new password. A
// link's GET only shows a form (mail scanners open links); its POST does the work, once.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dashOf, emailOf, isToken, passwordOf, ROUTE, setSessionCookie, signedOf, signInto, throttled, type Dash } from '../context.js';
import { html, type Html } from '../../html.js';
import { csrfField, notice, page, sendPage } from '../layout.js';
import type { DashboardDeps, Form } from '../deps.js';
import { SESSION_TTL_SECONDS } from '../../../modules/accounts/service.js';
import { passwordInput } from './auth.js';
import { startPage } from './start.js';

type Link = FastifyRequest<{ Params: { token: string }; Body: Form }>;

function linkGone(reply: FastifyReply, dash: Dash): FastifyReply {
  const body = html`<p>${dash.t('linkGoneExplained')}</p><p><a href="/dashboard/password/forgot">${dash.t('forgotPassword')}</a></p>`;
  return sendPage(reply, page(dash, { title: dash.t('linkGone'), path: '/dashboard', body }), 404);
}

function confirmSignupPage(dash: Dash, token: string, signup: { email: string; business_name: string }, error?: string): Html {
  const { t } = dash;
  const body = html`${notice('error', error)}<form class="card narrow" method="post" action="/dashboard/signup/confirm/${token}">${csrfField(dash)}
  <p>${t('confirmSignupText', { business: signup.business_name, email: signup.email })}</p>
  <p class="hint">${t('confirmSignupPassword')}</p>
  <input type="hidden" name="email" value="${signup.email}" autocomplete="username">
  ${passwordInput(dash, 'new-password')}
  <button type="submit" class="primary">${t('createAccount')}</button>
</form>`;
  return page(dash, { title: t('confirmSignupTitle'), path: `/dashboard/signup/confirm/${token}`, body });
}

/** A finished sign-up: signed in at once, on the getting-started page that shows the first test key this once. */
async function welcome(reply: FastifyReply, dash: Dash, deps: DashboardDeps, created: { token: string; testKey: string }): Promise<FastifyReply> {
  const signed = await signedOf(deps, created.token);
  if (!signed) return reply.redirect('/dashboard/login', 303);
  setSessionCookie(reply, dash, created.token, SESSION_TTL_SECONDS);
  signInto(dash, signed);
  return sendPage(reply, startPage(dash, signed, deps.publicUrl, created.testKey), 201);
}

function signupLinks(app: FastifyInstance, deps: DashboardDeps): void {
  const { accountLinks } = deps;
  app.get('/signup/confirm/:token', ROUTE, async (request: Link, reply) => {
    const dash = dashOf(request);
    const signup = isToken(request.params.token) ? await accountLinks.signupOf(request.params.token) : undefined;
    if (!signup) return linkGone(reply, dash);
    return sendPage(reply, confirmSignupPage(dash, request.params.token, signup));
  });
  app.post('/signup/confirm/:token', ROUTE, async (request: Link, reply) => {
    const dash = dashOf(request);
    const { token } = request.params;
    const signup = isToken(token) ? await accountLinks.signupOf(token) : undefined;
    if (!signup) return linkGone(reply, dash);
    const password = passwordOf(request.body);
    if (password === null) return sendPage(reply, confirmSignupPage(dash, token, signup, dash.t('passwordLength')), 400);
    const result = await accountLinks.confirmSignUp(token, password, request.ip);
    if (result.ok) return welcome(reply, dash, deps, result);
    if (result.reason === 'not_found') return linkGone(reply, dash);
    if (result.reason === 'throttled') {
      const { status, error } = throttled(reply, dash, result.retryAfterSeconds);
      return sendPage(reply, confirmSignupPage(dash, token, signup, error), status);
    }
    const body = html`<p>${dash.t('emailTakenAtConfirm')}</p><p><a href="/dashboard/login">${dash.t('logIn')}</a> · <a href="/dashboard/password/forgot">${dash.t('forgotPassword')}</a></p>`;
    return sendPage(reply, page(dash, { title: dash.t('confirmSignupTitle'), path: '/dashboard', body }), 409);
  });
}

function forgotPage(dash: Dash, content: { email?: string; error?: string; sent?: string } = {}): Html {
  const { t } = dash;
  const body = content.sent
    ? html`<p class="card narrow" role="status">${content.sent}</p>`
    : html`${notice('error', content.error)}
<form class="card narrow" method="post" action="/dashboard/password/forgot">${csrfField(dash)}
  <p>${t('forgotIntro')}</p>
  <label for="email">${t('email')}</label>
  <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${content.email ?? ''}">
  <button type="submit" class="primary">${t('sendLink')}</button>
</form>`;
  return page(dash, { title: t('forgotTitle'), path: '/dashboard/password/forgot', body });
}

function resetPage(dash: Dash, token: string, error?: string): Html {
  const { t } = dash;
  const body = html`${notice('error', error)}
<form class="card narrow" method="post" action="/dashboard/password/reset/${token}">${csrfField(dash)}
  ${passwordInput(dash, 'new-password')}
  <button type="submit" class="primary">${t('setPassword')}</button>
</form>`;
  return page(dash, { title: t('forgotTitle'), path: `/dashboard/password/reset/${token}`, body });
}

function passwordLinks(app: FastifyInstance, { accountLinks }: DashboardDeps): void {
  app.get('/password/forgot', ROUTE, async (request, reply) => sendPage(reply, forgotPage(dashOf(request))));
  app.post<{ Body: Form }>('/password/forgot', ROUTE, async (request, reply) => {
    const dash = dashOf(request);
    const email = emailOf(request.body);
    if (email === null) return sendPage(reply, forgotPage(dash, { error: dash.t('emailInvalid') }), 400);
    const result = await accountLinks.requestPasswordReset({ email, address: request.ip, lang: dash.lang });
    if (!result.ok) {
      const { status, error } = throttled(reply, dash, result.retryAfterSeconds);
      return sendPage(reply, forgotPage(dash, { email, error }), status);
    }
    return sendPage(reply, forgotPage(dash, { sent: dash.t('resetSent', { email }) }));
  });

  app.get('/password/reset/:token', ROUTE, async (request: Link, reply) => {
    const dash = dashOf(request);
    if (!isToken(request.params.token) || !(await accountLinks.passwordResetOpen(request.params.token))) return linkGone(reply, dash);
    return sendPage(reply, resetPage(dash, request.params.token));
  });
  app.post('/password/reset/:token', ROUTE, async (request: Link, reply) => {
    const dash = dashOf(request);
    if (!isToken(request.params.token)) return linkGone(reply, dash);
    const password = passwordOf(request.body);
    if (password === null) return sendPage(reply, resetPage(dash, request.params.token, dash.t('passwordLength')), 400);
    const result = await accountLinks.resetPassword(request.params.token, password, { address: request.ip, lang: dash.lang });
    if (result.ok) return reply.redirect('/dashboard/login?done=reset', 303);
    if (result.reason === 'not_found') return linkGone(reply, dash);
    const { status, error } = throttled(reply, dash, result.retryAfterSeconds);
    return sendPage(reply, resetPage(dash, request.params.token, error), status);
  });
}

export function emailLinkPages(app: FastifyInstance, deps: DashboardDeps): void {
  signupLinks(app, deps);
  passwordLinks(app, deps);
}
