// The user's own security: the optional second factor (an authenticator app, with recovery codes), and the password.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dashOf, field, passwordOf, ROUTE, sessionOf, signedIn, throttled, typedPassword, type Dash, type Signed } from '../context.js';
import { html, raw, type Html, type Value } from '../../html.js';
import { csrfField, notice, page, sendPage } from '../layout.js';
import type { DashboardDeps, Form } from '../deps.js';
import { PASSWORD_LENGTH_MAX, PASSWORD_LENGTH_MIN } from '../../../modules/accounts/passwords.js';

const PATH = '/dashboard/account';

function securityPage(dash: Dash, signed: Signed, content: { left: number; error?: string; done?: string; setup?: Value; codes?: string[] }): Html {
  const { t } = dash;
  const enabled = signed.session.totp_enabled;
  const codes = content.codes ? recoveryCodesShown(dash, content.codes) : '';
  const disable = signed.session.second_factor
    ? html`<form class="stack" method="post" action="${PATH}/second-factor/disable">${csrfField(dash)}
        <label for="disable-password">${t('password')}</label>
        <input id="disable-password" name="password" type="password" autocomplete="current-password" required maxlength="200">
        <button type="submit" class="danger">${t('turnOffSecondFactor')}</button></form>`
    : html`<p class="hint">${t('secondFactorProofRequired')}</p>`;
  const state = enabled
    ? html`<p>${t('secondFactorOn', { left: content.left })}</p>${disable}`
    : html`<p>${t('secondFactorOff')}</p>
      <form method="post" action="${PATH}/second-factor/begin">${csrfField(dash)}<button type="submit" class="primary">${t('setUpSecondFactor')}</button></form>`;
  const body = html`${notice('error', content.error)}${notice('ok', content.done)}${codes}
<section class="card" aria-labelledby="factor-title"><h2 id="factor-title">${t('secondFactorTitle')}</h2>${content.setup ?? state}</section>
${passwordForm(dash)}`;
  return page(dash, { title: t('accountSecurity'), path: PATH, body });
}

function passwordForm(dash: Dash): Html {
  const { t } = dash;
  return html`<section class="card" aria-labelledby="password-title"><h2 id="password-title">${t('passwordTitle')}</h2>
<form class="stack" method="post" action="${PATH}/password">${csrfField(dash)}
  <label for="current-password">${t('currentPassword')}</label>
  <input id="current-password" name="current" type="password" autocomplete="current-password" required maxlength="${PASSWORD_LENGTH_MAX}">
  <label for="new-password">${t('newPassword')}</label>
  <input id="new-password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_LENGTH_MIN}" maxlength="${PASSWORD_LENGTH_MAX}" aria-describedby="new-password-hint">
  <p class="hint" id="new-password-hint">${t('passwordHint', { min: PASSWORD_LENGTH_MIN })}</p>
  <button type="submit">${t('changePassword')}</button>
</form></section>`;
}

/** Recovery codes, shown once as the second factor is turned on, with a copy button. */
export function recoveryCodesShown(dash: Dash, codes: string[]): Html {
  const { t } = dash;
  return html`<div class="secret" role="group" aria-labelledby="codes-label"><p id="codes-label"><strong>${t('recoveryCodes')}</strong></p>
    <p class="hint">${t('recoveryCodesExplained')}</p><ul class="codes" id="recovery-codes">${codes.map((code) => html`<li><code>${code}</code></li>`)}</ul>
    <button type="button" class="copy" data-copy="recovery-codes">${t('copy')}</button></div>`;
}

/**
 * The set-up of an authenticator: its QR code and seed, and the form that proves the app has it (posted to `action`),
 * with the user's password when `askPassword` (a dashboard session may be someone else's at the user's browser).
 */
export function setupForm(dash: Dash, seed: { base32: string; qrSvg: string; sealed: string }, { action = `${PATH}/second-factor/enable`, askPassword = true } = {}): Html {
  const { t } = dash;
  const password = askPassword
    ? html`<label for="setup-password">${t('password')}</label>
  <input id="setup-password" name="password" type="password" autocomplete="current-password" required maxlength="${PASSWORD_LENGTH_MAX}">`
    : '';
  return html`<p>${t('scanQr')}</p>
<figure class="qr" aria-label="${t('qrLabel')}">${raw(seed.qrSvg)}</figure>
<p class="hint">${t('typeSeed')} <code id="seed">${seed.base32}</code></p>
<form class="stack" method="post" action="${action}">${csrfField(dash)}
  <input type="hidden" name="seed" value="${seed.sealed}">
  ${password}
  <label for="setup-code">${t('authenticationCode')}</label>
  <input id="setup-code" name="code" required maxlength="6" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}">
  <button type="submit" class="primary">${t('turnOnSecondFactor')}</button>
</form>`;
}

export function securityPages(app: FastifyInstance, { accounts, accountLinks }: DashboardDeps): void {
  const show = async (request: FastifyRequest, content: { error?: string; done?: string; setup?: Value; codes?: string[] } = {}) => {
    const signed = signedIn(request);
    // The session was read before this request's change: what it says of the second factor is read again.
    const fresh = (await accounts.session(signed.token)) ?? signed.session;
    return securityPage(dashOf(request), { ...signed, session: fresh }, { left: await accounts.recoveryCodesLeft(signed.session.user_id), ...content });
  };
  app.get('/account', ROUTE, async (request, reply) => sendPage(reply, await show(request)));

  app.post('/account/second-factor/begin', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    const seed = await accounts.beginSecondFactor(signed.session.email);
    return sendPage(reply, await show(request, { setup: setupForm(dashOf(request), seed) }));
  });

  // The password first: whoever holds a stolen session must not lock its user out behind an authenticator of theirs.
  app.post<{ Body: Form }>('/account/second-factor/enable', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    const dash = dashOf(request);
    // Refused, the same seed's set-up again: the user's app holds it already.
    const again = async (status: number, error: string) => {
      const seed = await accounts.resumeSecondFactor(signed.session.email, field(request.body, 'seed'));
      return sendPage(reply, await show(request, { error, ...(seed ? { setup: setupForm(dash, seed) } : {}) }), status);
    };
    const checked = await accounts.confirmPassword(signed.session.user_id, typedPassword(request.body), request.ip);
    if (!checked.ok) {
      const { status, error } = refusal(reply, dash, checked);
      return again(status, error);
    }
    const result = await accounts.enableSecondFactor(sessionOf(signed), field(request.body, 'seed'), field(request.body, 'code'));
    if (!result.ok) return again(400, dash.t('wrongSetupCode'));
    return sendPage(reply, await show(request, { codes: result.recoveryCodes, done: dash.t('secondFactorEnabled') }));
  });

  app.post<{ Body: Form }>('/account/password', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    const dash = dashOf(request);
    const next = passwordOf(request.body);
    if (next === null) return sendPage(reply, await show(request, { error: dash.t('passwordLength') }), 400);
    const result = await accountLinks.changePassword(sessionOf(signed), typedPassword(request.body, 'current'), next, { address: request.ip, lang: dash.lang });
    if (result.ok) return sendPage(reply, await show(request, { done: dash.t('passwordChanged') }));
    const { status, error } = refusal(reply, dash, result);
    return sendPage(reply, await show(request, { error }), status);
  });

  app.post<{ Body: Form }>('/account/second-factor/disable', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    const dash = dashOf(request);
    const result = await accounts.disableSecondFactor(sessionOf(signed), typedPassword(request.body), request.ip);
    if (result.ok) return sendPage(reply, await show(request, { done: dash.t('secondFactorDisabled') }));
    const { status, error } = refusal(reply, dash, result);
    return sendPage(reply, await show(request, { error }), status);
  });
}

/** Why a change of the user's own security was refused, and its status. */
function refusal(reply: FastifyReply, dash: Dash, result: { reason: 'wrong_password' | 'second_factor_required' | 'throttled'; retryAfterSeconds?: number }): { status: number; error: string } {
  if (result.reason === 'throttled') return throttled(reply, dash, result.retryAfterSeconds!);
  if (result.reason === 'second_factor_required') return { status: 403, error: dash.t('secondFactorProofRequired') };
  return { status: 401, error: dash.t('wrongPasswordGeneric') };
}
