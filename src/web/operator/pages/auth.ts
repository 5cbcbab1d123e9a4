// The console's way in: log-in (the dashboard's throttles), the second factor at every log-in, its set-up before
// anything else opens, log-out, and joining by an admin's invitation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_TTL_SECONDS } from '../../../modules/accounts/service.js';
import type { OperatorInvitationRow } from '../../../modules/operators/store.js';
import { clearSessionCookie, dashOf, emailOf, field, isToken, passwordOf, setSessionCookie, throttled, typedPassword, type Dash } from '../../dashboard/context.js';
import type { Form } from '../../dashboard/deps.js';
import { csrfField, notice, sendPage } from '../../dashboard/layout.js';
import { emailInput, passwordInput, secondFactorRoutes, type SecondStep } from '../../dashboard/pages/auth.js';
import { recoveryCodesShown, setupForm } from '../../dashboard/pages/security.js';
import { html, type Html, type Value } from '../../html.js';
import { ROUTE, operatorOf, operatorSession } from '../context.js';
import type { ConsoleDeps } from '../deps.js';
import { consolePage } from '../layout.js';

function loginPage(dash: Dash, email: string, error?: string): Html {
  const { t } = dash;
  const body = html`${notice('error', error)}
<form class="card narrow" method="post" action="/operator/login">${csrfField(dash)}
  ${emailInput(dash, email)}
  ${passwordInput(dash, 'current-password')}
  <button type="submit" class="primary">${t('logIn')}</button>
  <p class="hint">${t('opLoginHint')}</p>
</form>`;
  return consolePage(dash, null, { title: t('opLoginTitle'), path: '/operator/login', body });
}

/** A new session's cookie, and the console (or, without a second factor yet, its set-up). */
function signedInto(reply: FastifyReply, dash: Dash, token: string, to = '/operator'): FastifyReply {
  setSessionCookie(reply, dash, token, SESSION_TTL_SECONDS);
  return reply.redirect(to, 303);
}

/** The console's second step: an operator's waiting session only. */
const consoleStep = (operators: ConsoleDeps['operators']): SecondStep => ({
  base: '/operator',
  pending: async (token) => (await operators.pendingSession(token)) !== undefined,
  complete: (token, code) => operators.completeSecondFactor(token, code),
  page: (dash, title, body) => consolePage(dash, null, { title, path: '/operator/login/verify', body }),
});

function logInRoutes(app: FastifyInstance, { operators }: ConsoleDeps): void {
  app.get('/login', ROUTE, async (request, reply) => {
    if (request.operator) return reply.redirect('/operator', 303);
    return sendPage(reply, loginPage(dashOf(request), ''));
  });
  app.post<{ Body: Form }>('/login', ROUTE, async (request, reply) => {
    const dash = dashOf(request);
    const email = field(request.body, 'email');
    // A password of the wrong length is no one's: the same answer as a wrong one, counted the same way.
    const password = emailOf(request.body) === null || passwordOf(request.body) === null ? '' : typedPassword(request.body);
    const result = await operators.logIn({ email: email.toLowerCase(), password, address: request.ip });
    if (!result.ok) {
      const { status, error } = result.reason === 'throttled' ? throttled(reply, dash, result.retryAfterSeconds) : { status: 401, error: dash.t('wrongPassword') };
      return sendPage(reply, loginPage(dash, email, error), status);
    }
    return signedInto(reply, dash, result.token, result.next === 'verify' ? '/operator/login/verify' : '/operator/second-factor');
  });

  secondFactorRoutes(app, consoleStep(operators), ROUTE);

  app.post('/logout', ROUTE, async (request, reply) => {
    await operators.logOut(operatorSession(request));
    clearSessionCookie(reply, dashOf(request));
    return reply.redirect('/operator/login', 303);
  });
  app.get('/', ROUTE, async (request, reply) => {
    operatorOf(request);
    return reply.redirect('/operator/activations', 303);
  });
}

function setUpPage(dash: Dash, request: FastifyRequest, content: { setup?: Value; codes?: string[]; error?: string }): Html {
  const { t } = dash;
  const done = content.codes
    ? html`${notice('ok', t('opSetUpDone'))}${recoveryCodesShown(dash, content.codes)}<p><a class="button primary" href="/operator">${t('opContinue')}</a></p>`
    : '';
  const body = html`${notice('error', content.error)}${done}${content.setup ? html`<section class="card narrow"><p>${t('opSetUpRequired')}</p>${content.setup}</section>` : ''}`;
  return consolePage(dash, request.operator, { title: t('opSetUpTitle'), path: '/operator/second-factor', body });
}

/** The set-up of the second factor: the one page a session without it opens. */
function setUpRoutes(app: FastifyInstance, { operators }: ConsoleDeps): void {
  // No password asked: a console session without the second factor, just made by the password, opens only this page.
  const form = async (request: FastifyRequest) => setupForm(dashOf(request), await operators.beginSecondFactor(operatorSession(request)), { action: '/operator/second-factor', askPassword: false });
  app.get('/second-factor', ROUTE, async (request, reply) => {
    if (operatorSession(request).second_factor) return reply.redirect('/operator', 303);
    return sendPage(reply, setUpPage(dashOf(request), request, { setup: await form(request) }));
  });
  app.post<{ Body: Form }>('/second-factor', ROUTE, async (request, reply) => {
    const session = operatorSession(request);
    const dash = dashOf(request);
    if (session.second_factor) return reply.redirect('/operator', 303);
    const result = await operators.enableSecondFactor(session, field(request.body, 'seed'), field(request.body, 'code'));
    if (!result.ok) return sendPage(reply, setUpPage(dash, request, { setup: await form(request), error: dash.t('wrongSetupCode') }), 400);
    request.operator = { ...session, second_factor: true, totp_enabled: true };
    return sendPage(reply, setUpPage(dash, request, { codes: result.recoveryCodes }));
  });
}

function invitationPage(dash: Dash, invitation: OperatorInvitationRow, token: string, error?: string): Html {
  const { t } = dash;
  const action = `/operator/invite/${token}`;
  const body = html`${notice('error', error)}<form class="card narrow" method="post" action="${action}">${csrfField(dash)}
  <p>${t('opInvitedAs', { role: t(`opRole_${invitation.role}`) })}</p>
  ${emailInput(dash, invitation.email, true)}
  ${passwordInput(dash, 'new-password')}
  <button type="submit" class="primary">${t('opJoin')}</button></form>`;
  return consolePage(dash, null, { title: t('opInviteTitle'), path: action, body });
}

function invitationGone(reply: FastifyReply, dash: Dash, status = 404): FastifyReply {
  const { t } = dash;
  return sendPage(reply, consolePage(dash, null, { title: t('opInviteGone'), path: '/operator', body: html`<p>${t('opInviteGoneExplained')}</p>` }), status);
}

function invitationRoutes(app: FastifyInstance, { operators }: ConsoleDeps): void {
  type Invite = FastifyRequest<{ Params: { token: string }; Body: Form }>;
  const invitationOf = (request: Invite) => (isToken(request.params.token) ? operators.invitation(request.params.token) : Promise.resolve(undefined));
  app.get('/invite/:token', ROUTE, async (request: Invite, reply) => {
    const invitation = await invitationOf(request);
    if (!invitation) return invitationGone(reply, dashOf(request));
    return sendPage(reply, invitationPage(dashOf(request), invitation, request.params.token));
  });
  app.post('/invite/:token', ROUTE, async (request: Invite, reply) => {
    const dash = dashOf(request);
    const invitation = await invitationOf(request);
    if (!invitation) return invitationGone(reply, dash);
    const password = passwordOf(request.body);
    if (password === null) return sendPage(reply, invitationPage(dash, invitation, request.params.token, dash.t('passwordLength')), 400);
    const result = await operators.accept(request.params.token, password, request.ip);
    if (result.ok) return signedInto(reply, dash, result.token, '/operator/second-factor');
    if (result.reason === 'throttled') {
      const { status, error } = throttled(reply, dash, result.retryAfterSeconds);
      return sendPage(reply, invitationPage(dash, invitation, request.params.token, error), status);
    }
    if (result.reason === 'email_taken') return sendPage(reply, invitationPage(dash, invitation, request.params.token, dash.t('opInviteEmailTaken')), 409);
    return invitationGone(reply, dash);
  });
}

export function authPages(app: FastifyInstance, deps: ConsoleDeps): void {
  logInRoutes(app, deps);
  setUpRoutes(app, deps);
  invitationRoutes(app, deps);
}
