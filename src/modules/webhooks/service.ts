// Webhook endpoints and the delivery of events to them: signed, retried on the configured schedule, at least once.
import type { Db, Queryable, Transaction } from '../../db/types.js';
import type { Answer, Commands, Invocation } from '../../core/commands.js';
import type { Merchant } from '../../core/merchant.js';
import { ApiError, notFound } from '../../core/errors.js';
import { listPage, type List, type ListFilter, type ListQuery, type PageQuery } from '../../core/pagination.js';
import { RateLimiter } from '../../core/rate-limit.js';
import { newId } from '../../core/ids.js';
import { LOCAL_ONLY_REFUSALS, refuseByForm, type UrlRefusal } from './addresses.js';
import { Dispatch, SENDS_PER_ENDPOINT_MAX, SENDS_PER_PRODUCT_MAX } from './dispatch.js';
import type { CreateEndpointBody, Event, EventsQuery, UpdateEndpointBody, WebhookDelivery, WebhookEndpoint } from './schema.js';
import { newWebhookSecret, standardSignature, tolovSignature } from './signing.js';
import type { Attempt, Sender } from './sender.js';
import { NO_OUTCOMES, type Outcomes, type WebhookOutcome } from '../monitoring/outcomes.js';
import type { Sealer } from '../../lib/sealing.js';
import { EVENT_LIST, findEvent, recordEvent, TEST_EVENT_TYPE, type EventRow, type NewEvent } from './events.js';
import * as store from './store.js';
import type { DeliveryRow, DueDelivery, EndpointRow } from './store.js';

const DEFAULT_OVERLAP_SECONDS = 86_400;
/**
 * A lease outlives the attempt's own timeout by this much (time to record the outcome), so no other worker takes an
 * attempt still in flight. After a crash, the attempts it held are taken up again once their leases end.
 */
const LEASE_MARGIN_MS = 5_000;
export const EVENT_RETENTION_DAYS = 30;

/** Deliveries of one event to one endpoint, the first included: a resend loop cannot make an event a flood. */
export const DELIVERIES_PER_EVENT_MAX = 10;
/** Resends a product may ask for in a minute (per process). */
export const RESENDS_PER_MINUTE = 60;
/** Test events a product may send in a minute (per process): each is delivered, and retried while its endpoint fails. */
export const TEST_EVENTS_PER_MINUTE = 10;

export interface WebhookSettings {
  webhookRetryScheduleSeconds: number[];
  webhookTimeoutMs: number;
  webhookAllowPrivate: boolean;
  /** Endpoints a product may have in each mode. */
  webhookEndpointsMax: number;
}

function presentEndpoint(row: EndpointRow, secret?: string): WebhookEndpoint {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    enabledEvents: row.enabled_events,
    description: row.description,
    status: row.status === 'disabled' ? 'disabled' : 'enabled',
    ...(secret === undefined ? {} : { secret }),
    livemode: row.livemode,
    created: row.created_at.toISOString(),
  };
}

function presentDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    object: 'webhook_delivery',
    endpoint: row.endpoint_id,
    event: row.event_id,
    eventType: row.type,
    status: row.status,
    nextAttemptAt: row.next_attempt_at?.toISOString() ?? null,
    attempts: row.attempts.map((attempt) => ({
      number: attempt.number,
      attemptedAt: new Date(attempt.attempted_at).toISOString(),
      statusCode: attempt.status_code,
      durationMs: attempt.duration_ms,
      error: attempt.error,
      responseExcerpt: attempt.response_excerpt,
    })),
    created: row.created_at.toISOString(),
  };
}

export function presentEvent(row: EventRow): Event {
  return {
    id: row.id,
    object: 'event',
    type: row.type,
    livemode: row.livemode,
    created: row.created_at.toISOString(),
    data: row.data as Record<string, unknown>,
  };
}

/** What an attempt that was sent came to. */
function attemptOutcome(attempt: Attempt): WebhookOutcome {
  if (attempt.ok) return 'succeeded';
  if (attempt.statusCode !== null) return 'failed';
  return attempt.timedOut ? 'timeout' : 'unreachable';
}

/** What a capability that reports its changes needs of webhooks: the outbox's writer. */
export type EventRecorder = Pick<WebhooksService, 'record'>;

export class WebhooksService {
  private readonly resends = new RateLimiter(RESENDS_PER_MINUTE, 60_000);
  private readonly testEvents = new RateLimiter(TEST_EVENTS_PER_MINUTE, 60_000);
  private readonly dispatch = new Dispatch();

  constructor(
    private readonly db: Db,
    private readonly settings: WebhookSettings,
    private readonly sender: Sender,
    private readonly sealer: Sealer,
    private readonly commands: Commands,
    private readonly outcomes: Outcomes = NO_OUTCOMES,
  ) {}

  /** Writes an event into the outbox, with its deliveries, in the transaction of the change it reports. */
  record(tx: Transaction, event: NewEvent): void {
    recordEvent(tx, event);
  }

  /**
   * Why `url` may not receive webhooks, judged by its form; `local` when the reason is that it aims at a developer's
   * own machine (which TOLOV_WEBHOOK_ALLOW_PRIVATE allows). Null when it may.
   */
  urlRefusal(url: string): { refusal: UrlRefusal; local: boolean } | null {
    const refusal = refuseByForm(url, this.settings.webhookAllowPrivate);
    if (refusal === null) return null;
    return { refusal, local: !this.settings.webhookAllowPrivate && LOCAL_ONLY_REFUSALS.has(refusal) };
  }

  private checkUrl(url: string): void {
    const refused = this.urlRefusal(url);
    if (!refused) return;
    // What a developer aiming webhooks at their own machine needs to read.
    const hint = refused.local
      ? '; to receive events on your own machine, forward them with tolov listen --forward-to <url>, or run Tolov with TOLOV_WEBHOOK_ALLOW_PRIVATE=true'
      : '';
    throw new ApiError('VALIDATION_ERROR', `url ${refused.refusal}${hint}`, { param: 'url' });
  }

  private async endpointOf(merchant: Merchant, id: string, db: Queryable = this.db): Promise<EndpointRow> {
    const row = await store.findEndpoint(db, merchant, id);
    if (!row) throw notFound('webhook endpoint');
    return row;
  }

  /** A new endpoint, with its signing secret shown in this answer only (201). */
  createEndpoint(invocation: Invocation, body: CreateEndpointBody): Promise<Answer<WebhookEndpoint>> {
    const audit = { action: 'webhook_endpoint.created', target: (created: WebhookEndpoint) => `${created.id} ${created.url}` };
    return this.commands.change(invocation, 201, (tx) => this.create(tx, invocation.scope, body), { secret: true, audit });
  }

  updateEndpoint(invocation: Invocation, id: string, body: UpdateEndpointBody): Promise<Answer<WebhookEndpoint>> {
    const action = body.status === undefined ? 'webhook_endpoint.updated' : `webhook_endpoint.${body.status}`;
    return this.commands.change(invocation, 200, (tx) => this.update(tx, invocation.scope, id, body), { audit: { action, target: id } });
  }

  deleteEndpoint(invocation: Invocation, id: string): Promise<Answer<{ id: string; object: 'webhook_endpoint'; deleted: true }>> {
    return this.commands.change(invocation, 200, (tx) => this.delete(tx, invocation.scope, id), { audit: { action: 'webhook_endpoint.deleted', target: id } });
  }

  /** A new signing secret, shown in this answer only; the old one keeps signing for `overlapSeconds` (200). */
  rollEndpointSecret(invocation: Invocation, id: string, overlapSeconds?: number): Promise<Answer<WebhookEndpoint>> {
    const audit = { action: 'webhook_endpoint.secret_rolled', target: id };
    return this.commands.change(invocation, 200, (tx) => this.rollSecret(tx, invocation.scope, id, overlapSeconds), { secret: true, audit });
  }

  /** Delivers an event again to one endpoint, as a new delivery due now (201). */
  resendEvent(invocation: Invocation, eventId: string, endpointId: string): Promise<Answer<WebhookDelivery>> {
    return this.commands.change(invocation, 201, (tx) => this.resend(tx, invocation.scope, eventId, endpointId));
  }

  sendTest(invocation: Invocation, endpointId: string): Promise<Answer<WebhookDelivery>> {
    return this.commands.change(invocation, 201, (tx) => this.sendTestEvent(tx, invocation.scope, endpointId), { audit: { action: 'webhook_endpoint.test_sent', target: endpointId } });
  }

  retryDelivery(invocation: Invocation, endpointId: string, deliveryId: string): Promise<Answer<WebhookDelivery>> {
    return this.commands.change(invocation, 200, (tx) => this.retryNow(tx, invocation.scope, endpointId, deliveryId), { audit: { action: 'webhook_delivery.retried', target: deliveryId } });
  }

  private async create(tx: Transaction, merchant: Merchant, body: CreateEndpointBody): Promise<WebhookEndpoint> {
    this.checkUrl(body.url);
    const max = this.settings.webhookEndpointsMax;
    if ((await store.lockAndCountEndpoints(tx, merchant)) >= max) {
      const mode = merchant.livemode ? 'live' : 'test';
      throw new ApiError('LIMIT_REACHED', `A product has at most ${max} webhook endpoints in ${mode} mode: delete one you no longer use first`);
    }
    const secret = newWebhookSecret();
    const row = await store.insertEndpoint(tx, merchant, {
      id: newId('we'),
      url: body.url,
      enabledEvents: body.enabledEvents ?? [],
      description: body.description ?? null,
      secretSealed: this.sealer.seal(secret),
    });
    return presentEndpoint(row, secret);
  }

  async get(merchant: Merchant, id: string): Promise<WebhookEndpoint> {
    return presentEndpoint(await this.endpointOf(merchant, id));
  }

  list(merchant: Merchant, query: ListQuery): Promise<List<WebhookEndpoint>> {
    return listPage(this.db, store.ENDPOINT_LIST, merchant, query, (row: EndpointRow) => presentEndpoint(row), [
      { column: 'status', op: '<>', value: 'deleted' },
    ]);
  }

  private async update(tx: Transaction, merchant: Merchant, id: string, body: UpdateEndpointBody): Promise<WebhookEndpoint> {
    if (body.url !== undefined) this.checkUrl(body.url);
    const row = await store.updateEndpoint(tx, merchant, id, body);
    if (!row) throw notFound('webhook endpoint');
    return presentEndpoint(row);
  }

  private async delete(tx: Transaction, merchant: Merchant, id: string): Promise<{ id: string; object: 'webhook_endpoint'; deleted: true }> {
    if (!(await store.deleteEndpoint(tx, merchant, id))) throw notFound('webhook endpoint');
    return { id, object: 'webhook_endpoint', deleted: true };
  }

  private async rollSecret(tx: Transaction, merchant: Merchant, id: string, overlapSeconds = DEFAULT_OVERLAP_SECONDS): Promise<WebhookEndpoint> {
    const secret = newWebhookSecret();
    const row = await store.rollSecret(tx, merchant, id, this.sealer.seal(secret), overlapSeconds);
    if (!row) throw notFound('webhook endpoint');
    return presentEndpoint(row, secret);
  }

  /** The secret an endpoint signs with now, opened: for the dashboard's reveal, after the user proved who they are. */
  async revealSecret(merchant: Merchant, id: string): Promise<string> {
    const sealed = await store.endpointSecret(this.db, merchant, id);
    if (sealed === undefined) throw notFound('webhook endpoint');
    return this.sealer.open(sealed);
  }

  /**
   * Seals secrets still stored in plain text, and those sealed under a previous key, under the current key: run at
   * start, a bounded batch at a time. Returns how many endpoints it sealed.
   */
  async sealStoredSecrets(batchMax = 500): Promise<number> {
    let sealed = 0;
    for (;;) {
      const rows = await store.secretsToSeal(this.db, this.sealer.currentKeyId, batchMax);
      for (const row of rows) {
        const plain = row.secret ?? this.sealer.open(row.secret_sealed!);
        const previous = row.previous_secret ?? (row.previous_secret_sealed === null ? null : this.sealer.open(row.previous_secret_sealed));
        await store.storeSealedSecrets(this.db, row.id, { secret: this.sealer.seal(plain), previous: previous === null ? null : this.sealer.seal(previous) });
      }
      sealed += rows.length;
      if (rows.length < batchMax) return sealed;
    }
  }

  async deliveries(merchant: Merchant, id: string, query: PageQuery): Promise<List<WebhookDelivery>> {
    await this.endpointOf(merchant, id);
    let before = Number.MAX_SAFE_INTEGER;
    if (query.starting_after !== undefined) {
      const seq = await store.deliverySeq(this.db, id, query.starting_after);
      if (seq === undefined) {
        throw new ApiError('VALIDATION_ERROR', 'starting_after must be the id of a delivery in this list', { param: 'starting_after' });
      }
      before = seq;
    }
    const rows = await store.listDeliveries(this.db, id, before, query.limit + 1);
    return { object: 'list', data: rows.slice(0, query.limit).map(presentDelivery), has_more: rows.length > query.limit };
  }

  /**
   * A `webhook_endpoint.test` event, sent to this endpoint alone: receivers skip types they do not know. At most
   * TEST_EVENTS_PER_MINUTE per product, then 429 RATE_LIMITED with Retry-After.
   */
  private async sendTestEvent(tx: Transaction, merchant: Merchant, endpointId: string): Promise<WebhookDelivery> {
    const endpoint = await this.endpointOf(merchant, endpointId, tx);
    if (endpoint.status !== 'enabled') throw new ApiError('INVALID_STATE', 'The endpoint is disabled: enable it first');
    this.testEvents.hitWithin(tx, merchant.productId);
    const data = { ...presentEndpoint(endpoint), note: 'A test event sent from the dashboard; nothing happened to any payment.' };
    const deliveryId = await store.insertEventFor(tx, merchant, endpoint.id, { id: newId('evt'), type: TEST_EVENT_TYPE, data });
    return presentDelivery(await store.findDelivery(tx, deliveryId));
  }

  /**
   * "Retry now": a pending delivery is made due at once; a failed one is delivered again as a new delivery (counted
   * against DELIVERIES_PER_EVENT_MAX, like a resend).
   */
  private async retryNow(tx: Transaction, merchant: Merchant, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
    const delivery = await store.findDeliveryOf(tx, merchant, endpointId, deliveryId);
    if (!delivery) throw notFound('delivery');
    if (delivery.status === 'succeeded') throw new ApiError('INVALID_STATE', 'This delivery succeeded already');
    if (delivery.status === 'pending') {
      if (!(await store.dueNow(tx, delivery.id))) throw new ApiError('INVALID_STATE', 'This delivery is being attempted right now');
      return presentDelivery(await store.findDelivery(tx, delivery.id));
    }
    return this.resend(tx, merchant, delivery.event_id, endpointId);
  }

  /** Since when the endpoint has been failing, and how many deliveries wait; undefined if it is not failing. */
  async failing(merchant: Merchant, endpointId: string): Promise<{ since: Date; pending: number } | undefined> {
    await this.endpointOf(merchant, endpointId);
    return store.failingSince(this.db, endpointId);
  }

  /** Delivers an event again to one endpoint of the same product and mode, as a new delivery due now. */
  private async resend(tx: Transaction, merchant: Merchant, eventId: string, endpointId: string): Promise<WebhookDelivery> {
    const event = await findEvent(tx, merchant, eventId);
    if (!event) throw notFound('event');
    const endpoint = await this.endpointOf(merchant, endpointId, tx);
    if (endpoint.status !== 'enabled') throw new ApiError('INVALID_STATE', 'The endpoint is disabled: enable it first');
    if (endpoint.enabled_events.length > 0 && !endpoint.enabled_events.includes(event.type)) {
      throw new ApiError('INVALID_STATE', `The endpoint does not subscribe to ${event.type}: add it to its enabledEvents first`);
    }
    if ((await store.deliveriesOfEvent(tx, event.id, endpoint.id)) >= DELIVERIES_PER_EVENT_MAX) {
      throw new ApiError('LIMIT_REACHED', `This event was sent to this endpoint ${DELIVERIES_PER_EVENT_MAX} times already`);
    }
    this.resends.hitWithin(tx, merchant.productId);
    const deliveryId = await store.insertDelivery(tx, endpoint.id, event.id);
    return presentDelivery(await store.findDelivery(tx, deliveryId));
  }

  /**
   * Leases due attempts that have room to be sent (per endpoint, per product and in all) and starts each, without waiting for any:
   * resolves with how many it leased, and `done` once they are all recorded. A slow attempt holds back no other.
   */
  async startDue(batchMax: number): Promise<{ leased: number; done: Promise<void> }> {
    const schedule = this.settings.webhookRetryScheduleSeconds;
    const room = this.dispatch.room();
    if (room.total <= 0) return { leased: 0, done: Promise.resolve() };
    const due = await store.leaseDueDeliveries(this.db, {
      batchMax: Math.min(batchMax, room.total),
      leaseMs: this.settings.webhookTimeoutMs + LEASE_MARGIN_MS,
      firstDelaySeconds: schedule[0] ?? 0,
      attemptsMax: schedule.length,
      perEndpointMax: SENDS_PER_ENDPOINT_MAX,
      room: room.endpoints,
      perProductMax: SENDS_PER_PRODUCT_MAX,
      productRoom: room.products,
    });
    const runs = due.map((delivery) => this.dispatch.start({ endpointId: delivery.endpoint_id, productId: delivery.product_id }, () => this.attempt(delivery)));
    return { leased: due.length, done: Promise.all(runs).then(() => {}) };
  }

  /** One delivery batch, waited for: leases due attempts, sends each once, records each outcome and next attempt. */
  async deliverDue(batchMax: number): Promise<number> {
    const { leased, done } = await this.startDue(batchMax);
    await done;
    return leased;
  }

  /** Resolves once every attempt started has been recorded. */
  idle(): Promise<void> {
    return this.dispatch.idle();
  }

  private async attempt(delivery: DueDelivery): Promise<{ answered: boolean }> {
    const attemptedAt = new Date();
    const body = JSON.stringify(
      presentEvent({ id: delivery.event_id, type: delivery.type, livemode: delivery.livemode, created_at: delivery.created_at, data: delivery.data }),
    );
    const result =
      delivery.endpoint_status === 'enabled'
        ? await this.sender.send(delivery.endpoint_id, delivery.url, this.headers(delivery, attemptedAt, body), body)
        : { ok: false, statusCode: null, durationMs: 0, error: `the endpoint is ${delivery.endpoint_status}`, responseExcerpt: null, timedOut: false };
    this.outcomes.webhookAttempt(delivery.endpoint_status === 'enabled' ? attemptOutcome(result) : 'disabled', delivery.livemode);
    const schedule = this.settings.webhookRetryScheduleSeconds;
    const exhausted = delivery.attempts >= schedule.length || delivery.endpoint_status !== 'enabled';
    await store.recordAttempt(this.db, {
      deliveryId: delivery.id,
      number: delivery.attempts,
      attemptedAt,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      error: result.error,
      responseExcerpt: result.responseExcerpt,
      // The schedule gives the delay before each attempt; attempt n + 1 waits schedule[n] after attempt n.
      next: result.ok ? { status: 'succeeded' } : exhausted ? { status: 'failed' } : { status: 'pending', delaySeconds: schedule[delivery.attempts]! },
    });
    return { answered: result.statusCode !== null || delivery.endpoint_status !== 'enabled' };
  }

  /** The headers of one attempt, signing exactly `body`, the bytes sent. */
  private headers(delivery: DueDelivery, at: Date, body: string): Record<string, string> {
    const timestamp = Math.floor(at.getTime() / 1000);
    const secrets = delivery.secrets.map((sealed) => this.sealer.open(sealed));
    return {
      'content-type': 'application/json',
      'user-agent': 'Tolov-Webhooks/1',
      'tolov-signature': tolovSignature(secrets, timestamp, body),
      'tolov-event-id': delivery.event_id,
      'tolov-event-type': delivery.type,
      'tolov-delivery-id': delivery.id,
      'webhook-id': delivery.event_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': standardSignature(secrets, delivery.event_id, timestamp, body),
    };
  }

  /**
   * The events about one of the merchant's objects, oldest first, each with its deliveries: the object's timeline. At
   * most 100 events, and DELIVERIES_PER_EVENT_MAX deliveries per endpoint of each.
   */
  async timeline(merchant: Merchant, objectId: string): Promise<Array<{ event: Event; deliveries: WebhookDelivery[] }>> {
    const events = (await listPage(this.db, EVENT_LIST, merchant, { limit: 100 }, presentEvent, [{ column: 'object_id', value: objectId }])).data.reverse();
    const deliveryMax = DELIVERIES_PER_EVENT_MAX * this.settings.webhookEndpointsMax * events.length;
    const deliveries = await store.listDeliveriesOfEvents(this.db, events.map((event) => event.id), deliveryMax);
    return events.map((event) => ({ event, deliveries: deliveries.filter((row) => row.event_id === event.id).map(presentDelivery) }));
  }

  async event(merchant: Merchant, id: string): Promise<Event> {
    const row = await findEvent(this.db, merchant, id);
    if (!row) throw notFound('event');
    return presentEvent(row);
  }

  events(merchant: Merchant, query: EventsQuery): Promise<List<Event>> {
    const filters: ListFilter[] = [];
    if (query.type !== undefined) filters.push({ column: 'type', value: query.type });
    if (query.objectId !== undefined) filters.push({ column: 'object_id', value: query.objectId });
    return listPage(this.db, EVENT_LIST, merchant, query, presentEvent, filters);
  }

  deleteOldEvents(batchMax: number): Promise<number> {
    return store.deleteOldEvents(this.db, EVENT_RETENTION_DAYS, batchMax);
  }
}
