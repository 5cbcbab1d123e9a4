// The team: members and their roles, invitations mailed to the invitee, and the audit log (owners only manage and read it).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TeamChange } from '../../../modules/accounts/service.js';
import { ROLES, type Role } from '../../../modules/accounts/store.js';
import { actorOf, dashOf, emailOf, field, MANAGES_TEAM, requireRole, ROUTE, signedIn, throttled, type Dash, type Signed } from '../context.js';
import { html, type Html } from '../../html.js';
import { messageNamed, type MessageKey } from '../i18n.js';
import { csrfField, notice, page, sendPage, timeElement } from '../layout.js';
import type { DashboardDeps, Form } from '../deps.js';
import { confirmationOf, ownerChangePage, type OwnerChange } from './owner-change.js';

type Members = Awaited<ReturnType<DashboardDeps['accounts']['members']>>;
type Invitations = Awaited<ReturnType<DashboardDeps['accounts']['invitations']>>;

const DONE: Record<string, MessageKey> = { role: 'roleChanged', removed: 'memberRemoved', revoked: 'invitationRevoked' };
const REFUSED: Record<string, MessageKey> = { last_owner: 'lastOwner', already_member: 'alreadyMember', not_found: 'notFoundExplained' };

const roleOptions = (dash: Dash, selected: Role) =>
  ROLES.map((role) => html`<option value="${role}"${role === selected ? html` selected` : ''}>${dash.t(`role_${role}`)}</option>`);

function memberRow(dash: Dash, signed: Signed, member: Members[number]): Html {
  const { t } = dash;
  const manage = MANAGES_TEAM.includes(signed.session.role);
  const controls = manage
    ? html`<form class="inline" method="post" action="/dashboard/team/members/${member.user_id}/role">${csrfField(dash)}
        <label class="visually-hidden" for="role-${member.user_id}">${t('roleOf', { email: member.email })}</label>
        <select id="role-${member.user_id}" name="role">${roleOptions(dash, member.role)}</select><button type="submit">${t('changeRole')}</button></form>
      <form class="inline" method="post" action="/dashboard/team/members/${member.user_id}/remove" data-confirm="${t('removeConfirm')}">${csrfField(dash)}
        <button type="submit" class="danger">${t('removeMember')}</button></form>`
    : '';
  return html`<tr><td data-label="${t('email')}">${member.email}</td><td data-label="${t('role')}">${t(`role_${member.role}`)}</td><td data-label="${t('joined')}">${timeElement(member.created_at)}</td><td class="actions">${controls}</td></tr>`;
}

function invitationsSection(dash: Dash, invitations: Invitations): Html {
  const { t } = dash;
  const rows = invitations.map(
    (i) => html`<tr><td data-label="${t('email')}">${i.email}</td><td data-label="${t('role')}">${t(`role_${i.role}`)}</td><td data-label="${t('expires')}">${timeElement(i.expires_at)}</td>
      <td class="actions"><form class="inline" method="post" action="/dashboard/team/invitations/${i.id}/revoke">${csrfField(dash)}<button type="submit" class="danger">${t('revokeInvitation')}</button></form></td></tr>`,
  );
  return html`<section class="card" aria-labelledby="invite-title"><h2 id="invite-title">${t('inviteMember')}</h2>
  <form class="stack" method="post" action="/dashboard/team/invite">${csrfField(dash)}
    <label for="invite-email">${t('email')}</label><input id="invite-email" name="email" type="email" required maxlength="254">
    <label for="invite-role">${t('role')}</label><select id="invite-role" name="role">${roleOptions(dash, 'developer')}</select>
    <button type="submit" class="primary">${t('createInvitation')}</button></form>
  ${invitations.length === 0 ? '' : html`<div class="table-wrap"><table><caption>${t('openInvitations')}</caption>
    <thead><tr><th scope="col">${t('email')}</th><th scope="col">${t('role')}</th><th scope="col">${t('expires')}</th><th scope="col">${t('actions')}</th></tr></thead>
    <tbody>${rows}</tbody></table></div>`}
</section>`;
}

function teamPage(dash: Dash, signed: Signed, data: { members: Members; invitations: Invitations; error?: string; done?: string }): Html {
  const { t } = dash;
  const owner = MANAGES_TEAM.includes(signed.session.role);
  const body = html`${notice('error', data.error)}${notice('ok', data.done)}
<p>${t('rolesExplained')}</p>
<div class="table-wrap"><table><caption>${t('membersCaption')}</caption>
<thead><tr><th scope="col">${t('email')}</th><th scope="col">${t('role')}</th><th scope="col">${t('joined')}</th><th scope="col">${t('actions')}</th></tr></thead>
<tbody>${data.members.map((m) => memberRow(dash, signed, m))}</tbody></table></div>
${owner ? invitationsSection(dash, data.invitations) : ''}
${owner ? html`<p><a href="/dashboard/team/audit">${t('auditLog')}</a></p>` : ''}`;
  return page(dash, { title: t('navTeam'), path: '/dashboard/team', section: 'team', body });
}

type Accounts = DashboardDeps['accounts'];
type Member = FastifyRequest<{ Params: { id: string }; Body: Form }>;

/** The team page for `request`'s session, with what happened. */
async function showTeam(accounts: Accounts, request: FastifyRequest, extra: { error?: string; done?: string } = {}): Promise<Html> {
  const signed = signedIn(request);
  const owner = MANAGES_TEAM.includes(signed.session.role);
  const [members, invitations] = await Promise.all([accounts.members(signed.session.account_id), owner ? accounts.invitations(signed.session.account_id) : []]);
  return teamPage(dashOf(request), signed, { members, invitations, ...extra });
}

function ownerOf(request: FastifyRequest): Signed {
  const signed = signedIn(request);
  requireRole(signed, MANAGES_TEAM);
  return signed;
}

const outcome = (result: { ok: true } | { ok: false; reason: string }, done: string) => (result.ok ? `/dashboard/team?done=${done}` : `/dashboard/team?refused=${result.reason}`);

/** Answers a change that needs the owner's code: the page asking for it, or why a session without the second factor cannot. */
async function askForCode(accounts: Accounts, request: FastifyRequest, reply: FastifyReply, change: OwnerChange, refused?: { status: number; error: string }) {
  const dash = dashOf(request);
  if (!signedIn(request).session.second_factor) return sendPage(reply, await showTeam(accounts, request, { error: dash.t('ownerChangeNeedsSecondFactor') }), 403);
  return sendPage(reply, ownerChangePage(dash, change, refused?.error), refused?.status ?? 200);
}

/**
 * Runs a change of a member (`action`, worded by `summary` from their e-mail) confirmed or not by the code the form
 * sent, and redirects to its outcome; a change that needs the code and lacks it, or a refused code, asks for it.
 */
async function memberChange(
  accounts: Accounts,
  { request, reply }: { request: Member; reply: FastifyReply },
  action: 'role' | 'remove',
  summary: (email: string) => string,
  change: (confirmed: boolean) => Promise<TeamChange>,
) {
  const asked = async () => {
    const members = await accounts.members(signedIn(request).session.account_id);
    const email = members.find((member) => member.user_id === request.params.id)?.email ?? request.params.id;
    const fields: Record<string, string> = action === 'role' ? { role: field(request.body, 'role') } : {};
    return { action: `/dashboard/team/members/${request.params.id}/${action}`, fields, summary: summary(email) };
  };
  const confirming = await confirmationOf(accounts, request, reply);
  if ('error' in confirming) return askForCode(accounts, request, reply, await asked(), confirming);
  const result = await change(confirming.confirmed);
  if (!result.ok && result.reason === 'second_factor_required') return askForCode(accounts, request, reply, await asked());
  return reply.redirect(outcome(result, action === 'role' ? 'role' : 'removed'), 303);
}

/** A member's role changed, or the member removed, by an owner. */
function memberPages(app: FastifyInstance, accounts: Accounts): void {
  app.post('/team/members/:id/role', ROUTE, async (request: Member, reply) => {
    const signed = ownerOf(request);
    const role = field(request.body, 'role') as Role;
    if (!ROLES.includes(role)) return reply.redirect('/dashboard/team?refused=not_found', 303);
    const { t } = dashOf(request);
    return memberChange(accounts, { request, reply }, 'role', (email) => t('ownerChangeRole', { email, role: t(`role_${role}`) }), (confirmed) =>
      accounts.changeRole(actorOf(signed), request.params.id, role, confirmed),
    );
  });

  app.post('/team/members/:id/remove', ROUTE, async (request: Member, reply) => {
    const signed = ownerOf(request);
    const { t } = dashOf(request);
    return memberChange(accounts, { request, reply }, 'remove', (email) => t('ownerChangeRemove', { email }), (confirmed) =>
      accounts.removeMember(actorOf(signed), request.params.id, confirmed),
    );
  });
}

/** An invitation mailed by an owner, then revoked if need be. */
function invitationPages(app: FastifyInstance, accounts: Accounts): void {
  app.post<{ Body: Form }>('/team/invite', ROUTE, async (request, reply) => {
    const signed = ownerOf(request);
    const dash = dashOf(request);
    const { t, lang } = dash;
    const email = emailOf(request.body);
    const role = field(request.body, 'role') as Role;
    if (email === null) return sendPage(reply, await showTeam(accounts, request, { error: t('emailInvalid') }), 400);
    if (!ROLES.includes(role)) return sendPage(reply, await showTeam(accounts, request, { error: t('badFormExplained') }), 400);
    const change = { action: '/dashboard/team/invite', fields: { email, role }, summary: t('ownerChangeInvite', { email }) };
    const confirming = await confirmationOf(accounts, request, reply);
    if ('error' in confirming) return askForCode(accounts, request, reply, change, confirming);
    const result = await accounts.invite(actorOf(signed), { email, role, lang }, confirming.confirmed);
    if (result.ok) return sendPage(reply, await showTeam(accounts, request, { done: t('inviteSent', { email }) }), 201);
    if (result.reason === 'second_factor_required') return askForCode(accounts, request, reply, change);
    const { status, error } = result.reason === 'throttled' ? throttled(reply, dash, result.retryAfterSeconds) : { status: 409, error: t('alreadyMember') };
    return sendPage(reply, await showTeam(accounts, request, { error }), status);
  });

  app.post('/team/invitations/:id/revoke', ROUTE, async (request: Member, reply) => {
    const signed = ownerOf(request);
    return reply.redirect(outcome(await accounts.revokeInvitation(actorOf(signed), request.params.id), 'revoked'), 303);
  });
}

export function teamPages(app: FastifyInstance, { accounts }: DashboardDeps): void {
  app.get<{ Querystring: { done?: string; refused?: string } }>('/team', ROUTE, async (request, reply) => {
    const { t } = dashOf(request);
    const done = messageNamed(DONE, request.query.done);
    const refused = messageNamed(REFUSED, request.query.refused);
    return sendPage(reply, await showTeam(accounts, request, { ...(done ? { done: t(done) } : {}), ...(refused ? { error: t(refused) } : {}) }));
  });
  invitationPages(app, accounts);
  memberPages(app, accounts);

  app.get<{ Querystring: { before?: string } }>('/team/audit', ROUTE, async (request, reply) => {
    const signed = ownerOf(request);
    const dash = dashOf(request);
    const before = /^\d{1,15}$/.test(String(request.query.before)) ? Number(request.query.before) : undefined;
    const { rows, hasMore } = await accounts.auditLog(signed.session.account_id, before);
    const items = rows.map(
      (r) => html`<tr><td data-label="${dash.t('when')}">${timeElement(r.created_at)}</td><td data-label="${dash.t('who')}">${r.email ?? '—'}</td><td data-label="${dash.t('what')}"><code>${r.action}</code></td><td data-label="${dash.t('target')}">${r.target ?? ''}</td>
        <td data-label="${dash.t('mode')}">${r.livemode === null ? '' : r.livemode ? dash.t('liveMode') : dash.t('testMode')}</td></tr>`,
    );
    const body = html`<div class="table-wrap"><table><caption>${dash.t('auditCaption')}</caption>
<thead><tr><th scope="col">${dash.t('when')}</th><th scope="col">${dash.t('who')}</th><th scope="col">${dash.t('what')}</th><th scope="col">${dash.t('target')}</th><th scope="col">${dash.t('mode')}</th></tr></thead>
<tbody>${items}</tbody></table></div>
${hasMore ? html`<p><a href="/dashboard/team/audit?before=${rows.at(-1)!.seq}">${dash.t('olderItems')}</a></p>` : ''}`;
    return sendPage(reply, page(dash, { title: dash.t('auditLog'), path: '/dashboard/team/audit', section: 'team', body }));
  });
}
