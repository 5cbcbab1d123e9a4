// Tolov's staff: the operators and the open invitations. An admin invites the next operator by mail, with a role,
// revokes an invitation not used yet and removes an operator (never the last admin); support reads the list and gets
// no forms (their POSTs are refused).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OperatorSession } from '../../../modules/operators/service.js';
import { OPERATOR_ROLES, type OperatorRole } from '../../../modules/operators/store.js';
import { dashOf, emailOf, field, throttled, type Dash } from '../../dashboard/context.js';
import type { Form } from '../../dashboard/deps.js';
import type { MessageKey } from '../../dashboard/i18n.js';
import { csrfField, notice, sendPage, timeElement } from '../../dashboard/layout.js';
import { html, type Html } from '../../html.js';
import { ACTS, ROUTE, operatorOf, requireOperatorRole } from '../context.js';
import type { ConsoleDeps } from '../deps.js';
import { consolePage } from '../layout.js';
import { queryText } from './shared.js';

type Operators = Awaited<ReturnType<ConsoleDeps['operators']['list']>>;
type Invitations = Awaited<ReturnType<ConsoleDeps['operators']['invitations']>>;

type Done = 'invited' | 'revoked' | 'removed';
// Maps, so that `?done=toString` finds nothing, not the toString every object inherits.
const DONE = new Map<string, MessageKey>([['invited', 'supInviteSent'], ['revoked', 'invitationRevoked'], ['removed', 'supOperatorRemoved']] satisfies Array<[Done, MessageKey]>);
const REFUSED = new Map<string, MessageKey>([['not_found', 'supInvitationGone']]);
const INVITATION_ID = /^inv_[A-Za-z0-9]{1,60}$/;
/** Why a removal was refused, as a status and the page's words. */
const REMOVAL_REFUSED: Record<'not_found' | 'last_admin', [number, MessageKey]> = { not_found: [404, 'supOperatorGone'], last_admin: [409, 'supLastAdmin'] };
const INVITATION_REFUSED: Record<'email_taken' | 'second_factor_required' | 'wrong_code', [number, MessageKey]> = {
  email_taken: [409, 'supEmailTaken'],
  second_factor_required: [403, 'secondFactorProofRequired'],
  wrong_code: [401, 'changeCodeWrong'],
};

const roleOptions = (dash: Dash) => OPERATOR_ROLES.map((role) => html`<option value="${role}"${role === 'support' ? html` selected` : ''}>${dash.t(`opRole_${role}`)}</option>`);

/** An admin's button that removes the operator, after the browser asks to confirm (as other destructive buttons do). */
function removeCell(dash: Dash, operator: Operators['rows'][number]): Html {
  const { t } = dash;
  return html`<td class="actions"><form class="inline" method="post" action="/operator/operators/${encodeURIComponent(operator.user_id)}/remove" data-confirm="${t('supRemoveConfirm', { email: operator.email })}" data-once>${csrfField(dash)}<button type="submit" class="danger">${t('supRemoveOperator')}</button></form></td>`;
}

function operatorsTable(dash: Dash, operators: Operators, admin: boolean): Html {
  const { t } = dash;
  const rows = operators.rows.map(
    (row) => html`<tr><td data-label="${t('email')}">${row.email}</td><td data-label="${t('role')}">${t(`opRole_${row.role}`)}</td>
      <td data-label="${t('supSecondFactor')}">${t(row.totp_enabled ? 'supSecondFactorOn' : 'supSecondFactorOff')}</td><td data-label="${t('supSince')}">${timeElement(row.created_at)}</td>${admin ? removeCell(dash, row) : ''}</tr>`,
  );
  return html`<div class="table-wrap"><table><caption>${t('supOperatorsCaption')}</caption>
<thead><tr><th scope="col">${t('email')}</th><th scope="col">${t('role')}</th><th scope="col">${t('supSecondFactor')}</th><th scope="col">${t('supSince')}</th>${admin ? html`<th scope="col">${t('actions')}</th>` : ''}</tr></thead>
<tbody>${rows}</tbody></table></div>
${operators.hasMore ? html`<p class="hint">${t('supOperatorsMore', { count: operators.rows.length })}</p>` : ''}`;
}

function invitationsTable(dash: Dash, invitations: Invitations, admin: boolean): Html {
  const { t } = dash;
  if (invitations.length === 0) return html`<p class="empty">${t('supNoInvitations')}</p>`;
  const revoke = (id: string) =>
    html`<td class="actions"><form class="inline" method="post" action="/operator/operators/invitations/${id}/revoke">${csrfField(dash)}<button type="submit" class="danger">${t('revokeInvitation')}</button></form></td>`;
  const rows = invitations.map(
    (row) => html`<tr><td data-label="${t('email')}">${row.email}</td><td data-label="${t('role')}">${t(`opRole_${row.role}`)}</td>
      <td data-label="${t('supInvited')}">${timeElement(row.created_at)}</td><td data-label="${t('expires')}">${timeElement(row.expires_at)}</td>${admin ? revoke(row.id) : ''}</tr>`,
  );
  return html`<div class="table-wrap"><table><caption>${t('openInvitations')}</caption>
<thead><tr><th scope="col">${t('email')}</th><th scope="col">${t('role')}</th><th scope="col">${t('supInvited')}</th><th scope="col">${t('expires')}</th>${admin ? html`<th scope="col">${t('actions')}</th>` : ''}</tr></thead>
<tbody>${rows}</tbody></table></div>`;
}

function inviteForm(dash: Dash, email: string): Html {
  const { t } = dash;
  return html`<section class="card narrow" aria-labelledby="invite-title"><h2 id="invite-title">${t('supInviteTitle')}</h2>
  <p>${t('supInviteExplained')}</p>
  <form class="stack" method="post" action="/operator/operators/invite">${csrfField(dash)}
    <label for="invite-email">${t('email')}</label><input id="invite-email" name="email" type="email" value="${email}" required maxlength="254" autocomplete="off">
    <label for="invite-role">${t('role')}</label><select id="invite-role" name="role">${roleOptions(dash)}</select>
    <label for="invite-code">${t('authenticationCode')}</label>
    <input id="invite-code" name="code" required maxlength="6" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" aria-describedby="invite-code-hint">
    <p class="hint" id="invite-code-hint">${t('supInviteCodeHint')}</p>
    <button type="submit" class="primary">${t('supInviteButton')}</button></form>
</section>`;
}

interface Shown {
  error?: string;
  done?: string;
  email?: string;
}

async function operatorsPage(deps: ConsoleDeps, dash: Dash, session: OperatorSession, shown: Shown): Promise<Html> {
  const { t } = dash;
  const admin = ACTS.includes(session.role);
  const [operators, invitations] = await Promise.all([deps.operators.list(), deps.operators.invitations()]);
  const body = html`${notice('error', shown.error)}${notice('ok', shown.done)}
<p class="lead">${t('supRolesExplained')}</p>
${operatorsTable(dash, operators, admin)}
${invitationsTable(dash, invitations, admin)}
${admin ? inviteForm(dash, shown.email ?? '') : ''}`;
  return consolePage(dash, session, { title: t('navOpOperators'), path: '/operator/operators', section: 'operators', body });
}

/** The signed-in admin: support and a session without the second factor are refused. */
function adminOf(request: FastifyRequest): OperatorSession {
  const session = operatorOf(request);
  requireOperatorRole(session, ACTS);
  return session;
}

export function operatorPages(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get('/operators', ROUTE, async (request, reply) => {
    const session = operatorOf(request);
    const dash = dashOf(request);
    const done = DONE.get(queryText(request, 'done'));
    const refused = REFUSED.get(queryText(request, 'refused'));
    return sendPage(reply, await operatorsPage(deps, dash, session, { ...(done ? { done: dash.t(done) } : {}), ...(refused ? { error: dash.t(refused) } : {}) }));
  });

  app.post<{ Body: Form }>('/operators/invite', ROUTE, async (request, reply) => {
    const session = adminOf(request);
    const dash = dashOf(request);
    const refuse = async (status: number, key: MessageKey): Promise<FastifyReply> =>
      sendPage(reply, await operatorsPage(deps, dash, session, { error: dash.t(key), email: field(request.body, 'email') }), status);
    const email = emailOf(request.body);
    const role = field(request.body, 'role') as OperatorRole;
    if (email === null) return refuse(400, 'emailInvalid');
    if (!OPERATOR_ROLES.includes(role)) return refuse(400, 'badFormExplained');
    const result = await deps.operators.invite(session, { email, role, lang: dash.lang }, field(request.body, 'code'));
    if (result.ok) return reply.redirect('/operator/operators?done=invited', 303);
    if (result.reason === 'throttled') {
      const { status, error } = throttled(reply, dash, result.retryAfterSeconds);
      return sendPage(reply, await operatorsPage(deps, dash, session, { error, email }), status);
    }
    const [status, key] = INVITATION_REFUSED[result.reason];
    return refuse(status, key);
  });

  app.post<{ Params: { id: string }; Body: Form }>('/operators/invitations/:id/revoke', ROUTE, async (request, reply) => {
    const session = adminOf(request);
    // An id of no invitation is answered without an audit entry of a revocation that could not be.
    const revoked = INVITATION_ID.test(request.params.id) && (await deps.operators.revokeInvitation(session, request.params.id));
    return reply.redirect(`/operator/operators?${revoked ? 'done=revoked' : 'refused=not_found'}`, 303);
  });

  app.post<{ Params: { id: string }; Body: Form }>('/operators/:id/remove', ROUTE, async (request, reply) => {
    const session = adminOf(request);
    const result = await deps.operators.remove(session, request.params.id);
    if (result.ok) return reply.redirect('/operator/operators?done=removed', 303);
    const dash = dashOf(request);
    const [status, key] = REMOVAL_REFUSED[result.reason];
    return sendPage(reply, await operatorsPage(deps, dash, session, { error: dash.t(key) }), status);
  });
}
