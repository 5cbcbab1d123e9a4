// Sign-up, log-in, log-out, the test/live switch and joining a team by invitation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PASSWORD_LENGTH_MAX, PASSWORD_LENGTH_MIN } from '../../../modules/accounts/passwords.js';
import { SESSION_TTL_SECONDS } from '../../../modules/accounts/service.js';
import {
  actorOf,
  clearSessionCookie,
  cookiesOf,
  dashOf,
  EMAIL_PATTERN,
  field,
  ROUTE,
  SESSION_COOKIE,
  setSessionCookie,
  signedIn,
  tooManyAttempts,
  type Dash,
} from '../context.js';
import { html, type Html } from '../../html.js';
import type { MessageKey } from '../i18n.js';
import { csrfField, notice, page, sendPage } from '../layout.js';
import type { DashboardDeps, Form } from '../deps.js';

interface Credentials {
  email: string;
  password: string;
}

/** The email and password of a form, or what is wrong with them. */
function credentials(form: Form | undefined): Credentials | { error: MessageKey } {
  const email = emailOf(form);
  const password = passwordOf(form);
  if (email === null) return { error: 'emailInvalid' };
  if (password === null) return { error: 'passwordLength' };
  return { email, password };
}

/** The form's e-mail, lower-cased, or null when it is no e-mail. */
export function emailOf(form: Form | undefined): string | null {
  const email = field(form, 'email').toLowerCase();
  return email.length > 254 || !EMAIL_PATTERN.test(email) ? null : email;
}

/** The form's `name` field as a password of an allowed length (untrimmed), or null. */
export function passwordOf(form: Form | undefined, name = 'password'): string | null {
  const password = typeof form?.[name] === 'string' ? form[name] : '';
  return password.length < PASSWORD_LENGTH_MIN || password.length > PASSWORD_LENGTH_MAX ? null : password;
}

const emailInput = (dash: Dash, value: string, readonly = false) =>
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
  ${passwordInput(dash, 'new-password')}
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

/** A throttled attempt's answer: 429 with the wait, in the header and on the page. */
export function throttled(reply: FastifyReply, dash: Dash, retryAfterSeconds: number): { status: 429; error: string } {
  reply.header('Retry-After', String(retryAfterSeconds));
  return { status: 429, error: tooManyAttempts(dash, retryAfterSeconds) };
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

function accountRoutes(app: FastifyInstance, { accounts }: DashboardDeps): void {
  app.get('/signup', ROUTE, async (request, reply) => sendPage(reply, signupPage(dashOf(request), {})));
  app.post<{ Body: Form }>('/signup', ROUTE, async (request, reply) => {
    const dash = dashOf(request);
    const businessName = field(request.body, 'businessName');
    const given = credentials(request.body);
    const values = { email: field(request.body, 'email'), businessName };
    if ('error' in given) return sendPage(reply, signupPage(dash, values, dash.t(given.error)), 400);
    if (businessName.length < 1 || businessName.length > 200) return sendPage(reply, signupPage(dash, values, dash.t('businessNameInvalid')), 400);
    const result = await accounts.signUp({ ...given, businessName, address: request.ip, lang: dash.lang });
    if (!result.ok) {
      const { status, error } = throttled(reply, dash, result.retryAfterSeconds);
      return sendPage(reply, signupPage(dash, values, error), status);
    }
    return sendPage(reply, checkEmailPage(dash, given.email));
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
  secondFactorRoutes(app, accounts);

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
    const back = new URL(String(request.headers.referer ?? '/dashboard'), 'http://dashboard').pathname;
    return reply.redirect(back.startsWith('/dashboard') ? back : '/dashboard', 303);
  });

  app.get('/', ROUTE, async (request, reply) => reply.redirect(dashOf(request).signed ? '/dashboard/overview' : '/dashboard/login', 303));
}

function verifyPage(dash: Dash, error?: string): Html {
  const { t } = dash;
  const body = html`${notice('error', error)}
<form class="card narrow" method="post" action="/dashboard/login/verify">${csrfField(dash)}
  <label for="code">${t('authenticationCode')}</label>
  <input id="code" name="code" required maxlength="20" autocomplete="one-time-code" inputmode="text" autocapitalize="none" spellcheck="false" aria-describedby="code-hint">
  <p class="hint" id="code-hint">${t('authenticationCodeHint')}</p>
  <button type="submit" class="primary">${t('verify')}</button>
</form>`;
  return page(dash, { title: t('secondFactorTitle'), path: '/dashboard/login/verify', body });
}

/** The second step of a log-in with a second factor, on the session the password opened for it. */
function secondFactorRoutes(app: FastifyInstance, accounts: DashboardDeps['accounts']): void {
  const pendingToken = async (request: FastifyRequest) => {
    const token = cookiesOf(request).get(SESSION_COOKIE);
    return token !== undefined && (await accounts.pendingSession(token)) ? token : null;
  };
  app.get('/login/verify', ROUTE, async (request, reply) => {
    if ((await pendingToken(request)) === null) return reply.redirect('/dashboard/login', 303);
    return sendPage(reply, verifyPage(dashOf(request)));
  });
  app.post<{ Body: Form }>('/login/verify', ROUTE, async (request, reply) => {
    const dash = dashOf(request);
    const token = await pendingToken(request);
    if (token === null) return reply.redirect('/dashboard/login', 303);
    const result = await accounts.completeSecondFactor(token, field(request.body, 'code'));
    if (result.ok) return signedInto(reply, dash, result.token);
    if (result.reason === 'expired') return reply.redirect('/dashboard/login', 303);
    const { status, error } = result.reason === 'throttled' ? throttled(reply, dash, result.retryAfterSeconds) : { status: 401, error: dash.t('wrongAuthenticationCode') };
    return sendPage(reply, verifyPage(dash, error), status);
  });
}

function invitationPage(dash: Dash, invitation: { email: string; account_name: string; role: string }, token: string, error?: string): Html {
  const { t } = dash;
  const body = html`${notice('error', error)}
<p>${t('invitedTo', { account: invitation.account_name, role: t(`role_${invitation.role as 'owner'}`) })}</p>
<form class="card narrow" method="post" action="/dashboard/invite/${token}">${csrfField(dash)}
  ${emailInput(dash, invitation.email, true)}
  ${passwordInput(dash, 'new-password')}
  <p class="hint">${t('inviteExistingUser')}</p>
  <button type="submit" class="primary">${t('joinTeam')}</button>
</form>`;
  return page(dash, { title: t('inviteTitle'), path: `/dashboard/invite/${token}`, body });
}

function invitationRoutes(app: FastifyInstance, { accounts }: DashboardDeps): void {
  type Invite = FastifyRequest<{ Params: { token: string }; Body: Form }>;
  const invitationOf = async (request: Invite) => {
    const token = request.params.token;
    return /^[A-Za-z0-9_-]{43}$/.test(token) ? accounts.invitation(token) : undefined;
  };
  app.get('/invite/:token', ROUTE, async (request: Invite, reply) => {
    const dash = dashOf(request);
    const invitation = await invitationOf(request);
    if (!invitation) return sendPage(reply, page(dash, { title: dash.t('inviteGone'), path: '/dashboard', body: html`<p>${dash.t('inviteGoneExplained')}</p>` }), 404);
    return sendPage(reply, invitationPage(dash, invitation, request.params.token));
  });
  app.post('/invite/:token', ROUTE, async (request: Invite, reply) => {
    const dash = dashOf(request);
    const invitation = await invitationOf(request);
    if (!invitation) return sendPage(reply, page(dash, { title: dash.t('inviteGone'), path: '/dashboard', body: html`<p>${dash.t('inviteGoneExplained')}</p>` }), 404);
    const given = credentials({ ...request.body, email: invitation.email });
    if ('error' in given) return sendPage(reply, invitationPage(dash, invitation, request.params.token, dash.t(given.error)), 400);
    const result = await accounts.acceptInvitation(request.params.token, given.password, request.ip);
    if (!result.ok) {
      const refused =
        result.reason === 'throttled'
          ? throttled(reply, dash, result.retryAfterSeconds)
          : result.reason === 'wrong_password'
            ? { status: 401, error: dash.t('inviteWrongPassword') }
            : { status: 404, error: dash.t('inviteGoneExplained') };
      return sendPage(reply, invitationPage(dash, invitation, request.params.token, refused.error), refused.status);
    }
    return result.secondFactor ? toSecondFactor(reply, dash, result.token) : signedInto(reply, dash, result.token);
  });
}

export function authPages(app: FastifyInstance, deps: DashboardDeps): void {
  accountRoutes(app, deps);
  invitationRoutes(app, deps);
}
