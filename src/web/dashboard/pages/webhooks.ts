// Webhook endpoints of the selected mode: add, reveal and roll the secret, disable/enable, delete, send a test event,
// and the delivery log with each attempt and "Retry now".
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../core/errors.js';
import { valueOf, type Answer, type Invocation } from '../../../core/commands.js';
import type { UrlRefusal } from '../../../modules/webhooks/addresses.js';
import { SENT_EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES } from '../../../modules/webhooks/events.js';
import type { CreateEndpointBody, WebhookDelivery, WebhookEndpoint } from '../../../modules/webhooks/schema.js';
import { TEST_EVENTS_PER_MINUTE } from '../../../modules/webhooks/service.js';
import { actorOf, CHANGES, dashOf, field, fields, formKeyOf, invocationOf, merchantOfSigned, requireRole, ROUTE, SEES_SECRETS, signedIn, type Dash, type Signed } from '../context.js';
import { html, type Html } from '../../html.js';
import { attemptReason, messageNamed, type MessageKey } from '../i18n.js';
import { csrfField, formKeyField, notice, page, sendPage, shownOnce, timeElement, when } from '../layout.js';
import type { DashboardDeps, Form } from '../deps.js';
import { passwordAgain } from './password-again.js';
import { badge } from './lists.js';

const DELIVERIES_SHOWN = 25;
/** An endpoint failing this long is flagged, well before its deliveries are given up (about three days). */
const FLAG_AFTER_MS = 24 * 3600 * 1000;

const DONE: Record<string, MessageKey> = {
  disabled: 'endpointDisabled',
  enabled: 'endpointEnabled',
  test: 'testEventQueued',
  retried: 'retryQueued',
  deleted: 'endpointDeleted',
};

type EndpointRequest = FastifyRequest<{ Params: { id: string }; Body: Form; Querystring: { done?: string } }>;

const events = (dash: Dash, endpoint: WebhookEndpoint) => (endpoint.enabledEvents.length === 0 ? dash.t('allEvents') : endpoint.enabledEvents.join(', '));

/** The types an endpoint may subscribe to that Tolov does not send yet: shown, but not offered. */
const NOT_SENT = SUBSCRIBABLE_EVENT_TYPES.filter((type) => !(SENT_EVENT_TYPES as readonly string[]).includes(type));

function addForm(dash: Dash, values: { url?: string; description?: string; events?: string[] } = {}): Html {
  const { t } = dash;
  const boxes = SENT_EVENT_TYPES.map(
    (type) => html`<label class="check"><input type="checkbox" name="events" value="${type}"${values.events?.includes(type) ? html` checked` : ''}> <code>${type}</code></label>`,
  );
  const unsent = html`<p class="hint">${t('eventsNotSent')}</p>${NOT_SENT.map((type) => html`<label class="check"><input type="checkbox" disabled> <code>${type}</code></label>`)}`;
  return html`<form class="card" method="post" action="/dashboard/webhooks">${csrfField(dash)}${formKeyField()}
  <h2>${t('addEndpointTitle')}</h2>
  <label for="url">${t('endpointUrl')}</label>
  <input id="url" name="url" type="url" required maxlength="2048" placeholder="https://shop.example.uz/tolov/webhooks" value="${values.url ?? ''}" aria-describedby="url-hint">
  <p class="hint" id="url-hint">${t('endpointUrlHint')}</p>
  <label for="description">${t('description')}</label>
  <input id="description" name="description" maxlength="500" value="${values.description ?? ''}">
  <fieldset><legend>${t('eventsToSend')}</legend><p class="hint">${t('noneMeansAll')}</p>${boxes}${unsent}</fieldset>
  <button type="submit" class="primary">${t('addEndpoint')}</button>
</form>`;
}

function listPage(dash: Dash, signed: Signed, endpoints: WebhookEndpoint[], extra: { error?: string; values?: Parameters<typeof addForm>[1]; done?: string } = {}): Html {
  const { t } = dash;
  const rows = endpoints.map(
    (e) => html`<tr><td data-label="${t('endpointUrl')}"><a href="/dashboard/webhooks/${e.id}">${e.url}</a>${e.description ? html`<br><span class="hint">${e.description}</span>` : ''}</td>
      <td data-label="${t('eventsToSend')}">${events(dash, e)}</td><td data-label="${t('status')}"><span class="status s-${e.status}">${t(e.status === 'enabled' ? 'enabled' : 'disabled')}</span></td><td data-label="${t('created')}">${timeElement(e.created)}</td></tr>`,
  );
  const body = html`${notice('error', extra.error)}${notice('ok', extra.done)}
<p>${t('webhooksIntro')}</p>
${endpoints.length === 0 ? html`<p class="empty">${t('noEndpoints')}</p>` : html`<div class="table-wrap"><table><caption>${t('endpointsCaption')}</caption>
<thead><tr><th scope="col">${t('endpointUrl')}</th><th scope="col">${t('eventsToSend')}</th><th scope="col">${t('status')}</th><th scope="col">${t('created')}</th></tr></thead>
<tbody>${rows}</tbody></table></div>`}
${CHANGES.includes(signed.session.role) ? addForm(dash, extra.values) : ''}`;
  return page(dash, { title: t('navWebhooks'), path: '/dashboard/webhooks', section: 'webhooks', body });
}

function attemptRows(dash: Dash, delivery: WebhookDelivery): Html[] {
  return delivery.attempts.map(
    (a) => html`<li><span>${when(a.attemptedAt)}</span> · <strong>${a.statusCode === null ? attemptReason(dash.t, a.error ?? '') : `HTTP ${a.statusCode}`}</strong> · ${dash.t('durationMs', { ms: a.durationMs })}
      ${a.responseExcerpt ? html`<pre class="excerpt" aria-label="${dash.t('responseBody')}">${a.responseExcerpt}</pre>` : ''}</li>`,
  );
}

function deliveryLog(dash: Dash, signed: Signed, endpoint: WebhookEndpoint, deliveries: WebhookDelivery[]): Html {
  const { t } = dash;
  if (deliveries.length === 0) return html`<p class="empty">${t('noDeliveries')}</p>`;
  const items = deliveries.map((d) => {
    const retry =
      d.status !== 'succeeded' && CHANGES.includes(signed.session.role)
        ? html`<form class="inline" method="post" action="/dashboard/webhooks/${endpoint.id}/deliveries/${d.id}/retry">${csrfField(dash)}<button type="submit">${t('retryNow')}</button></form>`
        : '';
    return html`<li class="delivery" data-delivery="${d.id}">
  <div class="delivery-head"><code>${d.eventType}</code> ${badge(dash, 'delivery', d.status)}
    <span class="hint">${d.id} · ${when(d.created)}${d.nextAttemptAt ? html` · ${t('nextAttempt')} ${when(d.nextAttemptAt)}` : ''}</span> ${retry}</div>
  <ol class="attempts">${attemptRows(dash, d)}</ol>
</li>`;
  });
  return html`<ul class="deliveries">${items}</ul>`;
}

function secretSection(dash: Dash, endpoint: WebhookEndpoint, revealed?: string, error?: string): Html {
  const { t } = dash;
  return html`<section class="card" aria-labelledby="secret-title"><h2 id="secret-title">${t('signingSecret')}</h2>
  ${revealed ? shownOnce(dash, t('signingSecret'), revealed, 'secret') : ''}${notice('error', error)}
  <form class="stack" method="post" action="/dashboard/webhooks/${endpoint.id}/reveal">${csrfField(dash)}
    <label for="reveal-password">${t('passwordToReveal')}</label>
    <input id="reveal-password" name="password" type="password" autocomplete="current-password" required maxlength="200">
    <button type="submit">${t('revealSecret')}</button></form>
  <form class="stack" method="post" action="/dashboard/webhooks/${endpoint.id}/roll">${csrfField(dash)}
    <label for="roll-overlap">${t('oldSecretSigns')}</label>
    <select id="roll-overlap" name="overlapSeconds"><option value="0">${t('overlapNow')}</option><option value="3600">${t('overlapHour')}</option><option value="86400" selected>${t('overlapDay')}</option></select>
    <label for="roll-password">${t('passwordToRoll')}</label>
    <input id="roll-password" name="password" type="password" autocomplete="current-password" required maxlength="200">
    <button type="submit">${t('rollSecret')}</button></form>
</section>`;
}

function actions(dash: Dash, endpoint: WebhookEndpoint): Html {
  const { t } = dash;
  const toggle = endpoint.status === 'enabled' ? 'disable' : 'enable';
  return html`<div class="actions-row">
  <form method="post" action="/dashboard/webhooks/${endpoint.id}/test">${csrfField(dash)}<button type="submit">${t('sendTestEvent')}</button></form>
  <form method="post" action="/dashboard/webhooks/${endpoint.id}/${toggle}">${csrfField(dash)}<button type="submit">${t(toggle)}</button></form>
  <form method="post" action="/dashboard/webhooks/${endpoint.id}/delete" data-confirm="${t('deleteEndpointConfirm')}">${csrfField(dash)}<button type="submit" class="danger">${t('deleteEndpoint')}</button></form>
</div>`;
}

interface Detail {
  endpoint: WebhookEndpoint;
  deliveries: WebhookDelivery[];
  failing: { since: Date; pending: number } | undefined;
  created?: string;
  revealed?: string;
  error?: string;
  /** What was refused, above everything. */
  refused?: string;
  done?: string;
}

function detailPage(dash: Dash, signed: Signed, d: Detail): Html {
  const { t } = dash;
  const { endpoint } = d;
  const flagged = d.failing && Date.now() - d.failing.since.getTime() >= FLAG_AFTER_MS;
  const body = html`${notice('error', d.refused)}${notice('ok', d.done)}${d.created ? shownOnce(dash, t('signingSecret'), d.created, 'secret') : ''}
${flagged ? html`<p class="notice error" role="alert">${t('endpointFailing', { since: when(d.failing!.since), pending: d.failing!.pending })}</p>` : ''}
<dl class="facts"><dt>${t('endpointUrl')}</dt><dd>${endpoint.url}</dd><dt>${t('description')}</dt><dd>${endpoint.description ?? '—'}</dd>
<dt>${t('eventsToSend')}</dt><dd>${events(dash, endpoint)}</dd><dt>${t('status')}</dt><dd>${t(endpoint.status === 'enabled' ? 'enabled' : 'disabled')}</dd>
<dt>${t('id')}</dt><dd><code>${endpoint.id}</code></dd><dt>${t('created')}</dt><dd>${when(endpoint.created)}</dd></dl>
${CHANGES.includes(signed.session.role) ? actions(dash, endpoint) : ''}
${SEES_SECRETS.includes(signed.session.role) ? secretSection(dash, endpoint, d.revealed, d.error) : ''}
<h2>${t('deliveryLog')}</h2>
${deliveryLog(dash, signed, endpoint, d.deliveries)}`;
  return page(dash, { title: t('endpointTitle'), path: `/dashboard/webhooks/${endpoint.id}`, section: 'webhooks', body });
}

export function webhookPages(app: FastifyInstance, deps: DashboardDeps): void {
  const { webhooks } = deps;
  const detail = async (request: EndpointRequest, extra: Partial<Detail> = {}) => {
    const signed = signedIn(request);
    const merchant = merchantOfSigned(signed);
    const endpoint = await webhooks.get(merchant, request.params.id);
    const [deliveries, failing] = await Promise.all([webhooks.deliveries(merchant, endpoint.id, { limit: DELIVERIES_SHOWN }), webhooks.failing(merchant, endpoint.id)]);
    return detailPage(dashOf(request), signed, { endpoint, deliveries: deliveries.data, failing, ...extra });
  };
  const list = async (request: FastifyRequest, extra: Parameters<typeof listPage>[3] = {}) => {
    const signed = signedIn(request);
    const endpoints = await webhooks.list(merchantOfSigned(signed), { limit: 100 });
    return listPage(dashOf(request), signed, endpoints.data, extra);
  };

  app.get<{ Querystring: { done?: string } }>('/webhooks', ROUTE, async (request, reply) => {
    const done = messageNamed(DONE, request.query.done);
    return sendPage(reply, await list(request, done ? { done: dashOf(request).t(done) } : {}));
  });

  app.post<{ Body: Form }>('/webhooks', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    requireRole(signed, CHANGES);
    const values = { url: field(request.body, 'url'), description: field(request.body, 'description'), events: fields(request.body, 'events') };
    const known = values.events.filter((e) => (SUBSCRIBABLE_EVENT_TYPES as readonly string[]).includes(e)) as CreateEndpointBody['enabledEvents'];
    const refused = webhooks.urlRefusal(values.url);
    if (refused) return sendPage(reply, await list(request, { error: urlRefusalText(dashOf(request), refused), values }), 400);
    try {
      const input: CreateEndpointBody = { url: values.url, enabledEvents: known, ...(values.description === '' ? {} : { description: values.description.slice(0, 500) }) };
      const endpoint = valueOf(await webhooks.createEndpoint(invocationOf(request, signed, input, formKeyOf(request.body)), input));
      const page = await detail(Object.assign(request, { params: { id: endpoint.id } }) as EndpointRequest, { created: endpoint.secret! });
      return sendPage(reply, page, 201);
    } catch (error) {
      if (!(error instanceof ApiError) || error.statusCode >= 500) throw error;
      return sendPage(reply, await list(request, { error: error.message, values }), error.statusCode);
    }
  });

  app.get('/webhooks/:id', ROUTE, async (request: EndpointRequest, reply) => {
    const done = messageNamed(DONE, request.query.done);
    return sendPage(reply, await detail(request, done ? { done: dashOf(request).t(done) } : {}));
  });

  endpointActions(app, deps, detail);
}

const URL_REFUSALS: Record<UrlRefusal, MessageKey> = {
  'must be an absolute URL': 'urlNotAbsolute',
  'must not carry credentials': 'urlCredentials',
  'must be an https:// URL': 'urlNotHttps',
  'must point to a public address': 'urlNotPublicAddress',
  'must point to a public host name': 'urlNotPublicName',
};

/** Why an address cannot receive webhooks, in the page's language, with the way to receive them locally when it helps. */
function urlRefusalText(dash: Dash, refused: { refusal: UrlRefusal; local: boolean }): string {
  const reason = dash.t('endpointUrlRefused', { reason: dash.t(URL_REFUSALS[refused.refusal]) });
  return refused.local ? `${reason} ${dash.t('endpointUrlLocal')}` : reason;
}

type DetailOf = (request: EndpointRequest, extra?: Partial<Detail>) => Promise<Html>;

function endpointActions(app: FastifyInstance, deps: DashboardDeps, detail: DetailOf): void {
  const { webhooks, accounts } = deps;
  /** A change by an owner or developer (the webhooks capability's command, audited with it), then back to the page. */
  const change = (done: string, run: (invocation: Invocation, id: string) => Promise<Answer<unknown>>) =>
    async (request: EndpointRequest, reply: FastifyReply) => {
      const signed = signedIn(request);
      requireRole(signed, CHANGES);
      valueOf(await run(invocationOf(request, signed, { endpoint: request.params.id }), request.params.id));
      return reply.redirect(done === 'deleted' ? '/dashboard/webhooks?done=deleted' : `/dashboard/webhooks/${request.params.id}?done=${done}`, 303);
    };
  app.post('/webhooks/:id/disable', ROUTE, change('disabled', (invocation, id) => webhooks.updateEndpoint(invocation, id, { status: 'disabled' })));
  app.post('/webhooks/:id/enable', ROUTE, change('enabled', (invocation, id) => webhooks.updateEndpoint(invocation, id, { status: 'enabled' })));
  app.post('/webhooks/:id/delete', ROUTE, change('deleted', (invocation, id) => webhooks.deleteEndpoint(invocation, id)));
  testEventAction(app, deps, detail);
  app.post<{ Params: { id: string; delivery: string }; Body: Form }>('/webhooks/:id/deliveries/:delivery/retry', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    requireRole(signed, CHANGES);
    const { id, delivery } = request.params;
    valueOf(await webhooks.retryDelivery(invocationOf(request, signed, { endpoint: id, delivery }), id, delivery));
    return reply.redirect(`/dashboard/webhooks/${id}?done=retried`, 303);
  });

  /** The password again before the endpoint's secret is revealed or rolled; an endpoint the merchant lacks is a 404 first. */
  const secretPasswordAgain = async (request: EndpointRequest, reply: FastifyReply, action: string, message: MessageKey): Promise<boolean> => {
    await webhooks.get(merchantOfSigned(signedIn(request)), request.params.id);
    return passwordAgain(accounts, { request, reply }, { action, target: request.params.id, message }, (error) => detail(request, { error }));
  };

  app.post('/webhooks/:id/reveal', ROUTE, async (request: EndpointRequest, reply) => {
    const signed = signedIn(request);
    requireRole(signed, SEES_SECRETS);
    if (!(await secretPasswordAgain(request, reply, 'webhook_endpoint.secret_reveal_refused', 'wrongPasswordReveal'))) return reply;
    const revealed = await webhooks.revealSecret(merchantOfSigned(signed), request.params.id);
    await accounts.audit(actorOf(signed), 'webhook_endpoint.secret_revealed', request.params.id);
    return sendPage(reply, await detail(request, { revealed }));
  });

  app.post('/webhooks/:id/roll', ROUTE, async (request: EndpointRequest, reply) => {
    const signed = signedIn(request);
    requireRole(signed, SEES_SECRETS);
    if (!(await secretPasswordAgain(request, reply, 'webhook_endpoint.secret_roll_refused', 'wrongPasswordRoll'))) return reply;
    const overlap = [0, 3600, 86_400].find((s) => s === Number(field(request.body, 'overlapSeconds'))) ?? 86_400;
    const rolled = valueOf(await webhooks.rollEndpointSecret(invocationOf(request, signed, { endpoint: request.params.id, overlap }), request.params.id, overlap));
    return sendPage(reply, await detail(request, { created: rolled.secret! }));
  });
}

/** "Send test event": at most TEST_EVENTS_PER_MINUTE a minute; past it, the endpoint's page with a 429 that says when. */
function testEventAction(app: FastifyInstance, deps: DashboardDeps, detail: DetailOf): void {
  const { webhooks } = deps;
  app.post('/webhooks/:id/test', ROUTE, async (request: EndpointRequest, reply) => {
    const signed = signedIn(request);
    requireRole(signed, CHANGES);
    try {
      valueOf(await webhooks.sendTest(invocationOf(request, signed, { endpoint: request.params.id }), request.params.id));
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'RATE_LIMITED') throw error;
      // The endpoint's page again, saying why nothing was sent and when the next one may be.
      const seconds = error.extra.headers?.['Retry-After'] ?? '60';
      const refused = dashOf(request).t('testEventsLimited', { max: TEST_EVENTS_PER_MINUTE, seconds });
      return sendPage(reply.header('Retry-After', seconds), await detail(request, { refused }), 429);
    }
    return reply.redirect(`/dashboard/webhooks/${request.params.id}?done=test`, 303);
  });
}
