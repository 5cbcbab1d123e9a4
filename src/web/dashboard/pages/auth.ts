// Sign-up, log-in, log-out, the test/live switch and joining a team by invitation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PASSWORD_LENGTH_MAX, PASSWORD_LENGTH_MIN } from '../../../modules/accounts/passwords.js';
import { SESSION_TTL_SECONDS, type SecondFactor } from '../../../modules/accounts/service.js';
import {
  actorOf,
  clearSessionCookie,
  cookiesOf,
  dashOf,
  emailOf,
  field,
  isToken,
  passwordOf,
  ROUTE,
  sessionCookieOf,
  sessionOf,
  setSessionCookie,
  signedIn,
  throttled,
  typedPassword,
  type Base,
  type Dash,
} from '../context.js';
import { html, type Html } from '../../html.js';
import type { MessageKey } from '../i18n.js';
import { csrfField, notice, page, sendPage } from '../layout.js';
import type { DashboardDeps, Form } from '../deps.js';

/** The email and password of a log-in form, or what is wrong with them. */
function credentials(form: Form | undefined): { email: string; password: string } | { error: MessageKey } {
  const email = emailOf(form);
  const password = passwordOf(form);
  if (email === null) return { error: 'emailInvalid' };
  if (password === null) return { error: 'passwordLength' };
  return { email, password };
}

export const emailInput = (dash: Dash, value: string, readonly = false) =>
  html`<label for="email">${dash.t('email')}</label>
  <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${value}"${readonly ? html` readonly` : ''}>`;

export const passwordInput = (dash: Dash, autocomplete: 'current-password' | 'new-password') =>
  html`<label for="password">${dash.t('password')}</label>
  <input id="password" name="password" type="password" autocomplete="${autocomplete}" required minlength="${autocomplete === 'new-password' ? PASSWORD_LENGTH_MIN : 1}" maxlength="${PASSWORD_LENGTH_MAX}"${autocomplete === 'new-password' ? html` aria-describedby="password-hint"` : ''}>
  ${autocomplete === 'new-password' ? html`<p class="hint" id="password-hint">${dash.t('passwordHint', { min: PASSWORD_LENGTH_MIN })}</p>` : ''}`;

function signupPage(dash: Dash, values: { email?: string; businessName?: string }, error?: string): Html {
  const { t } = dash;
  const body = html`${notice('error', error)}
<form class="card narrow" method="post" action="/dashboard/signup">${csrfField(dash)}
  ${emailInput(dash, values.email ?? '')}
  <label for="business">${t('businessName')}</label>
  <input id="business" name="businessName" required maxlength="200" autocomplete="organization" value="${values.businessName ?? ''}">
  <button type="submit" class="primary">${t('createAccount')}</button>
  <p class="hint">${t('signupTestOnly')}</p>
</form>
<p class="aside">${t('haveAccount')} <a href="/dashboard/login">${t('logIn')}</a></p>`;
  return page(dash, { title: t('signupTitle'), path: '/dashboard/signup', body });
}

function checkEmailPage(dash: Dash, email: string): Html {
  const { t } = dash;
  return page(dash, { title: t('checkEmailTitle'), path: '/dashboard/signup', body: html`<p class="card narrow" role="status">${t('checkEmailSignup', { email })}</p>` });
}

function loginPage(dash: Dash, email: string, messages: { error?: string; done?: string } = {}): Html {
  const { t } = dash;
  const body = html`${notice('error', messages.error)}${notice('ok', messages.done)}
<form class="card narrow" method="post" action="/dashboard/login">${csrfField(dash)}
  ${emailInput(dash, email)}
  ${passwordInput(dash, 'current-password')}
  <button type="submit" class="primary">${t('logIn')}</button>
  <p class="hint"><a href="/dashboard/password/forgot">${t('forgotPassword')}</a></p>
</form>
<p class="aside">${t('noAccount')} <a href="/dashboard/signup">${t('createAccount')}</a></p>`;
  return page(dash, { title: t('loginTitle'), path: '/dashboard/login', body });
}

export function signedInto(reply: FastifyReply, dash: Dash, token: string): FastifyReply {
  setSessionCookie(reply, dash, token, SESSION_TTL_SECONDS);
  return reply.redirect('/dashboard', 303);
}

/** A right password of a user with a second factor: the session that waits for it, and the page that asks. */
function toSecondFactor(reply: FastifyReply, dash: Dash, token: string): FastifyReply {
  setSessionCookie(reply, dash, token, SESSION_TTL_SECONDS);
  return reply.redirect('/dashboard/login/verify', 303);
}

function accountRoutes(app: FastifyInstance, { accounts, accountLinks }: DashboardDeps): void {
  app.get('/signup', ROUTE, async (request, reply) => sendPage(reply, signupPage(dashOf(request), {})));
  app.post<{ Body: Form }>('/signup', ROUTE, async (request, reply) => {
    const dash = dashOf(request);
    const businessName = field(request.body, 'businessName');
    const email = emailOf(request.body);
    const values = { email: field(request.body, 'email'), businessName };
    if (email === null) return sendPage(reply, signupPage(dash, values, dash.t('emailInvalid')), 400);
    if (businessName.length < 1 || businessName.length > 200) return sendPage(reply, signupPage(dash, values, dash.t('businessNameInvalid')), 400);
    const result = await accountLinks.signUp({ email, businessName, address: request.ip, lang: dash.lang });
    if (!result.ok) {
      const { status, error } = throttled(reply, dash, result.retryAfterSeconds);
      return sendPage(reply, signupPage(dash, values, error), status);
    }
    return sendPage(reply, checkEmailPage(dash, email));
  });

  app.get<{ Querystring: { done?: string } }>('/login', ROUTE, async (request, reply) => {
    const dash = dashOf(request);
    if (dash.signed) return reply.redirect('/dashboard', 303);
    return sendPage(reply, loginPage(dash, '', request.query.done === 'reset' ? { done: dash.t('passwordReset') } : {}));
  });
  app.post<{ Body: Form }>('/login', ROUTE, async (request, reply) => {
    const dash = dashOf(request);
    const given = credentials(request.body);
    const email = field(request.body, 'email');
    // A password of the wrong length is no one's: the same answer as a wrong one, counted the same way.
    const result = await accounts.logIn({ email: email.toLowerCase(), password: 'error' in given ? '' : given.password, address: request.ip });
    if (!result.ok) {
      const { status, error } = result.reason === 'throttled' ? throttled(reply, dash, result.retryAfterSeconds) : { status: 401, error: dash.t('wrongPassword') };
      return sendPage(reply, loginPage(dash, email, { error }), status);
    }
    return result.secondFactor ? toSecondFactor(reply, dash, result.token) : signedInto(reply, dash, result.token);
  });
  secondFactorRoutes(app, dashboardStep(accounts), ROUTE);

  app.post('/logout', ROUTE, async (request, reply) => {
    const dash = dashOf(request);
    const signed = signedIn(request);
    await accounts.logOut(signed.token, actorOf(signed));
    clearSessionCookie(reply, dash);
    return reply.redirect('/dashboard/login', 303);
  });

  app.post<{ Body: Form }>('/mode', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    const live = field(request.body, 'mode') === 'live';
    if (!live || signed.product.live_enabled) await accounts.setMode(signed.token, live);
    return reply.redirect(dashboardPathOf(request.headers.referer), 303);
  });

  app.get('/', ROUTE, async (request, reply) => reply.redirect(dashOf(request).signed ? '/dashboard/overview' : '/dashboard/login', 303));
}

/** The dashboard page a Referer names, to go back to; the dashboard's first page for anything else. */
function dashboardPathOf(referer: string | undefined): string {
  let path = '/dashboard';
  try {
    path = new URL(referer ?? path, 'http://dashboard').pathname;
  } catch {
    // a Referer that is no URL: back to the first page
  }
  return /^\/dashboard(\/|$)/.test(path) ? path : '/dashboard';
}

/** The surface a log-in's second step belongs to: where it lives, and the page it is shown in. */
export interface SecondStep {
  base: Base;
  /** Whether the token is a session of this surface waiting for its second factor. */
  pending(token: string): Promise<boolean>;
  complete(token: string, code: string): Promise<SecondFactor>;
  /** The page asking for the code: the surface's frame around `body`. */
  page(dash: Dash, title: string, body: Html): Html;
}

function verifyPage(dash: Dash, step: SecondStep, error?: string): Html {
  const { t } = dash;
  const body = html`${notice('error', error)}
<form class="card narrow" method="post" action="${step.base}/login/verify">${csrfField(dash)}
  <label for="code">${t('authenticationCode')}</label>
  <input id="code" name="code" required maxlength="20" autocomplete="one-time-code" inputmode="text" autocapitalize="none" spellcheck="false" aria-describedby="code-hint">
  <p class="hint" id="code-hint">${t('authenticationCodeHint')}</p>
  <button type="submit" class="primary">${t('verify')}</button>
</form>`;
  return step.page(dash, t('secondFactorTitle'), body);
}

/**
 * The second step of a log-in with a second factor, on the session the password opened for it: the dashboard's and the
 * operator console's, each on its own sessions.
 */
export function secondFactorRoutes(app: FastifyInstance, step: SecondStep, route: typeof ROUTE): void {
  const login = `${step.base}/login`;
  const pendingToken = async (request: FastifyRequest) => {
    const token = cookiesOf(request).get(sessionCookieOf(step.base));
    return token !== undefined && isToken(token) && (await step.pending(token)) ? token : null;
  };
  app.get('/login/verify', route, async (request, reply) => {
    if ((await pendingToken(request)) === null) return reply.redirect(login, 303);
    return sendPage(reply, verifyPage(dashOf(request), step));
  });
  app.post<{ Body: Form }>('/login/verify', route, async (request, reply) => {
    const dash = dashOf(request);
    const token = await pendingToken(request);
    if (token === null) return reply.redirect(login, 303);
    const result = await step.complete(token, field(request.body, 'code'));
    if (result.ok) {
      setSessionCookie(reply, dash, result.token, SESSION_TTL_SECONDS);
      return reply.redirect(step.base, 303);
    }
    if (result.reason === 'expired') return reply.redirect(login, 303);
    const { status, error } = result.reason === 'throttled' ? throttled(reply, dash, result.retryAfterSeconds) : { status: 401, error: dash.t('wrongAuthenticationCode') };
    return sendPage(reply, verifyPage(dash, step, error), status);
  });
}

/** The dashboard's second step: a merchant's waiting session; an operator's (no account) is the console's. */
const dashboardStep = (accounts: DashboardDeps['accounts']): SecondStep => ({
  base: '/dashboard',
  pending: async (token) => typeof (await accounts.pendingSession(token))?.account_id === 'string',
  complete: (token, code) => accounts.completeSecondFactor(token, code),
  page: (dash, title, body) => page(dash, { title, path: '/dashboard/login/verify', body }),
});

type Invitation = NonNullable<Awaited<ReturnType<DashboardDeps['accounts']['invitation']>>>;

/**
 * An invitation, as its reader (the invited address) sees it: signed in as that login, a button that joins; with a
 * login of that address in an account, the way to log in first; with one in no account (which cannot log in), its
 * password; without one, the password of the login it makes.
 */
function invitationPage(dash: Dash, invitation: Invitation, token: string, error?: string): Html {
  const { t } = dash;
  const signedAs = dash.signed?.session.email;
  const action = `/dashboard/invite/${token}`;
  const invited = html`<p>${t('invitedTo', { account: invitation.account_name, role: t(`role_${invitation.role}`) })}</p>`;
  const withPassword = (kind: 'current-password' | 'new-password', explained: Html | string = '') =>
    html`${notice('error', error)}<form class="card narrow" method="post" action="${action}">${csrfField(dash)}${invited}${explained}
          ${emailInput(dash, invitation.email, true)}
          ${passwordInput(dash, kind)}
          <button type="submit" class="primary">${t('joinTeam')}</button></form>`;
  const body =
    signedAs === invitation.email
      ? html`<form class="card narrow" method="post" action="${action}">${csrfField(dash)}${invited}<button type="submit" class="primary">${t('joinTeam')}</button></form>`
      : signedAs && invitation.hasLogin
        ? html`<div class="card narrow">${invited}${invitation.idleLogin ? '' : html`<p>${t('inviteLogInFirst', { email: invitation.email })}</p>`}
          <p class="hint">${t('inviteOtherLogin', { current: signedAs })}</p></div>`
        : invitation.idleLogin
          ? withPassword('current-password', html`<p>${t('inviteIdleLogin', { email: invitation.email })}</p>`)
          : invitation.hasLogin
            ? html`<div class="card narrow">${invited}<p>${t('inviteLogInFirst', { email: invitation.email })}</p><p><a href="/dashboard/login">${t('logIn')}</a></p></div>`
            : withPassword('new-password');
  return page(dash, { title: t('inviteTitle'), path: action, body });
}

function invitationGone(reply: FastifyReply, dash: Dash): FastifyReply {
  return sendPage(reply, page(dash, { title: dash.t('inviteGone'), path: '/dashboard', body: html`<p>${dash.t('inviteGoneExplained')}</p>` }), 404);
}

/** The join of an idle login by its password: logged in as at the log-in page, or the invitation again with why not. */
async function joinWithIdleLogin(
  accounts: DashboardDeps['accounts'],
  reply: FastifyReply,
  dash: Dash,
  invitation: Invitation,
  input: { token: string; password: string; address: string },
): Promise<FastifyReply> {
  const result = await accounts.joinWithIdleLogin(input.token, input.password, input.address);
  if (result.ok) return result.secondFactor ? toSecondFactor(reply, dash, result.token) : signedInto(reply, dash, result.token);
  if (result.reason === 'not_found') return invitationGone(reply, dash);
  if (result.reason === 'not_idle') return sendPage(reply, invitationPage(dash, { ...invitation, idleLogin: false }, input.token), 409);
  const { status, error } = result.reason === 'throttled' ? throttled(reply, dash, result.retryAfterSeconds) : { status: 401, error: dash.t('wrongPasswordGeneric') };
  return sendPage(reply, invitationPage(dash, invitation, input.token, error), status);
}

function invitationRoutes(app: FastifyInstance, { accounts }: DashboardDeps): void {
  type Invite = FastifyRequest<{ Params: { token: string }; Body: Form }>;
  const invitationOf = (request: Invite) => (isToken(request.params.token) ? accounts.invitation(request.params.token) : Promise.resolve(undefined));
  app.get('/invite/:token', ROUTE, async (request: Invite, reply) => {
    const dash = dashOf(request);
    const invitation = await invitationOf(request);
    if (!invitation) return invitationGone(reply, dash);
    return sendPage(reply, invitationPage(dash, invitation, request.params.token));
  });
  app.post('/invite/:token', ROUTE, async (request: Invite, reply) => {
    const dash = dashOf(request);
    const invitation = await invitationOf(request);
    if (!invitation) return invitationGone(reply, dash);
    const { token } = request.params;
    if (dash.signed?.session.email === invitation.email) {
      const joined = await accounts.joinSignedIn(token, { ...sessionOf(dash.signed), email: dash.signed.session.email });
      return joined.ok ? signedInto(reply, dash, joined.token) : invitationGone(reply, dash);
    }
    if (invitation.idleLogin && !dash.signed) return joinWithIdleLogin(accounts, reply, dash, invitation, { token, password: typedPassword(request.body), address: request.ip });
    if (invitation.hasLogin) return sendPage(reply, invitationPage(dash, invitation, token), 409);
    const password = passwordOf(request.body);
    if (password === null) return sendPage(reply, invitationPage(dash, invitation, token, dash.t('passwordLength')), 400);
    const result = await accounts.joinAsNewUser(token, password, request.ip);
    if (result.ok) return signedInto(reply, dash, result.token);
    if (result.reason === 'throttled') {
      const { status, error } = throttled(reply, dash, result.retryAfterSeconds);
      return sendPage(reply, invitationPage(dash, invitation, token, error), status);
    }
    return result.reason === 'has_login' ? sendPage(reply, invitationPage(dash, { ...invitation, hasLogin: true }, token), 409) : invitationGone(reply, dash);
  });
}

export function authPages(app: FastifyInstance, deps: DashboardDeps): void {
  accountRoutes(app, deps);
  invitationRoutes(app, deps);
}
