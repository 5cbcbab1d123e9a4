// API keys of the selected mode: list, create (the secret shown once), roll with an overlap, revoke.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { valueOf } from '../../../core/commands.js';
import type { KeyRow } from '../../../modules/products/store.js';
import { CHANGES, dashOf, field, formKeyOf, invocationOf, requireRole, ROUTE, SEES_SECRETS, signedIn, type Dash, type Signed } from '../context.js';
import { html, type Html, type Value } from '../../html.js';
import { messageNamed, type MessageKey } from '../i18n.js';
import { csrfField, formKeyField, notice, page, sendPage, shownOnce, timeElement, when } from '../layout.js';
import type { DashboardDeps, Form } from '../deps.js';
import { passwordAgain } from './password-again.js';

/** How long a rolled key keeps working, as offered. */
const ROLL_OVERLAPS: Array<{ seconds: number; label: MessageKey }> = [
  { seconds: 0, label: 'overlapNow' },
  { seconds: 3600, label: 'overlapHour' },
  { seconds: 86_400, label: 'overlapDay' },
  { seconds: 7 * 86_400, label: 'overlapWeek' },
];

const DONE: Record<string, MessageKey> = { revoked: 'keyRevoked' };

function keyState(dash: Dash, key: KeyRow): string {
  if (key.revoked_at !== null) return dash.t('keyRevokedAt', { at: when(key.revoked_at) });
  if (key.expires_at !== null) return dash.t(key.expires_at.getTime() <= Date.now() ? 'keyExpiredAt' : 'keyExpiresAt', { at: when(key.expires_at) });
  return dash.t('keyActive');
}

/** In live mode, the password asked before a key is made or rolled: a live key moves real money. */
function livePassword(dash: Dash, id: string): Value {
  if (!dash.signed?.session.livemode) return '';
  return html`<label for="${id}">${dash.t('passwordForLiveKey')}</label>
    <input id="${id}" name="password" type="password" autocomplete="current-password" required maxlength="200">`;
}

function keyActions(dash: Dash, key: KeyRow): Value {
  const { t } = dash;
  const usable = key.revoked_at === null && (key.expires_at === null || key.expires_at.getTime() > Date.now());
  if (!usable) return '';
  const options = ROLL_OVERLAPS.map((o) => html`<option value="${o.seconds}"${o.seconds === 86_400 ? html` selected` : ''}>${t(o.label)}</option>`);
  return html`<form class="inline" method="post" action="/dashboard/api-keys/${key.id}/roll">${csrfField(dash)}${formKeyField()}
    <label for="overlap-${key.id}">${t('oldKeyWorks')}</label>
    <select id="overlap-${key.id}" name="overlapSeconds">${options}</select>
    ${livePassword(dash, `roll-password-${key.id}`)}
    <button type="submit">${t('rollKey')}</button></form>
  <form class="inline" method="post" action="/dashboard/api-keys/${key.id}/revoke" data-confirm="${t('revokeConfirm')}">${csrfField(dash)}
    <button type="submit" class="danger" aria-label="${t('revoke')} ${key.id}">${t('revoke')}</button></form>`;
}

function keysPage(dash: Dash, signed: Signed, keys: KeyRow[], extra: { created?: string; done?: string; error?: string } = {}): Html {
  const { t } = dash;
  const mode = signed.session.livemode ? 'live' : 'test';
  const rows = keys.map(
    (key) => html`<tr><td data-label="${t('key')}"><code>sk_${mode}_…${key.secret_last4 ?? ''}</code></td><td data-label="${t('status')}">${keyState(dash, key)}</td>
      <td data-label="${t('created')}">${timeElement(key.created_at)}</td><td data-label="${t('lastUsed')}">${key.last_used_at ? timeElement(key.last_used_at) : t('never')}</td><td class="actions">${keyActions(dash, key)}</td></tr>`,
  );
  const canCreate = !signed.session.livemode || signed.product.live_enabled;
  const body = html`${notice('ok', extra.done)}${notice('error', extra.error)}
${extra.created ? shownOnce(dash, t('newKey'), extra.created, 'new-key') : ''}
<p>${t('keysIntro')}</p>
${canCreate ? html`<form class="stack" method="post" action="/dashboard/api-keys">${csrfField(dash)}${formKeyField()}${livePassword(dash, 'key-password')}<button type="submit" class="primary">${t('createKey')}</button></form>` : html`<p class="hint">${t('liveOffExplained')}</p>`}
${keys.length === 0 ? html`<p class="empty">${t('noKeys')}</p>` : html`<div class="table-wrap"><table><caption>${t('keysCaption')}</caption>
<thead><tr><th scope="col">${t('key')}</th><th scope="col">${t('status')}</th><th scope="col">${t('created')}</th><th scope="col">${t('lastUsed')}</th><th scope="col">${t('actions')}</th></tr></thead>
<tbody>${rows}</tbody></table></div>`}`;
  return page(dash, { title: t('navApiKeys'), path: '/dashboard/api-keys', section: 'keys', body });
}

export function keyPages(app: FastifyInstance, { products, accounts }: DashboardDeps): void {
  type KeyAction = FastifyRequest<{ Params: { id: string }; Body: Form }>;
  const show = async (request: FastifyRequest, extra: { created?: string; done?: string; error?: string } = {}) => {
    const dash = dashOf(request);
    const signed = signedIn(request);
    requireRole(signed, SEES_SECRETS);
    return keysPage(dash, signed, await products.keysOf(signed.product.id, signed.session.livemode), extra);
  };

  app.get<{ Querystring: { done?: string } }>('/api-keys', ROUTE, async (request, reply) => {
    const done = messageNamed(DONE, request.query.done);
    return sendPage(reply, await show(request, done ? { done: dashOf(request).t(done) } : {}));
  });

  /** In live mode, the password again before a key is made or rolled; true in test mode, whose keys move no money. */
  const livePasswordAgain = async (request: FastifyRequest, reply: FastifyReply, action: string): Promise<boolean> =>
    !signedIn(request).session.livemode ||
    passwordAgain(accounts, { request, reply }, { action, target: null, message: 'wrongPasswordKey' }, (error) => show(request, { error }));

  app.post('/api-keys', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    requireRole(signed, CHANGES);
    if (!(await livePasswordAgain(request, reply, 'api_key.create_refused'))) return reply;
    const { secret } = valueOf(await products.createKey(invocationOf(request, signed, {}, formKeyOf(request.body as Form))));
    return sendPage(reply, await show(request, { created: secret }), 201);
  });

  app.post('/api-keys/:id/roll', ROUTE, async (request: KeyAction, reply) => {
    const signed = signedIn(request);
    requireRole(signed, CHANGES);
    if (!(await livePasswordAgain(request, reply, 'api_key.roll_refused'))) return reply;
    const overlap = Number(field(request.body, 'overlapSeconds'));
    const seconds = ROLL_OVERLAPS.find((o) => o.seconds === overlap)?.seconds ?? 86_400;
    const invocation = invocationOf(request, signed, { key: request.params.id, seconds }, formKeyOf(request.body));
    const { secret } = valueOf(await products.rollKey(invocation, request.params.id, seconds));
    return sendPage(reply, await show(request, { created: secret }), 201);
  });

  app.post('/api-keys/:id/revoke', ROUTE, async (request: KeyAction, reply) => {
    const signed = signedIn(request);
    requireRole(signed, CHANGES);
    valueOf(await products.revokeKeyOf(invocationOf(request, signed, { key: request.params.id }), request.params.id));
    return reply.redirect('/dashboard/api-keys?done=revoked', 303);
  });
}
