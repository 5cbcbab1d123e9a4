import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db, Queryable } from '../../db/db.js';
import { merchantOf } from '../../http/auth.js';
import { sendIdempotent } from '../../http/idempotency.js';
import { listEnvelope, ListQuery } from '../../http/pagination.js';
import { IdParams } from '../../http/schemas.js';
import {
  CreateEndpointBody,
  Event,
  EventsQuery,
  ResendBody,
  RollSecretBody,
  UpdateEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
} from './schema.js';
import type { WebhooksService } from './service.js';

export function webhookRoutes(app: FastifyInstance, db: Db, webhooks: WebhooksService): void {
  const config = { auth: { kind: 'merchant' } } as const;
  /** A write as one atomic phase, so that an optional Idempotency-Key replays it instead of repeating it. */
  const idempotent = (request: FastifyRequest, reply: FastifyReply, status: number, write: (tx: Queryable) => Promise<unknown>) =>
    sendIdempotent(db, merchantOf(request), request, reply, {
      keyRequired: false,
      phases: { started: { atomic: async (tx) => ({ response: { status, body: await write(tx) } }) } },
    });
  const tags = ['webhooks'];
  const Deleted = Type.Object({ id: Type.String(), object: Type.Literal('webhook_endpoint'), deleted: Type.Literal(true) });

  app.post<{ Body: CreateEndpointBody }>(
    '/v1/webhook_endpoints',
    {
      config,
      schema: {
        tags,
        summary: 'Add an endpoint; its signing secret is in this answer only',
        body: CreateEndpointBody,
        response: { 201: WebhookEndpoint },
      },
    },
    (request, reply) => idempotent(request, reply, 201, (tx) => webhooks.create(tx, merchantOf(request), request.body)),
  );

  app.get<{ Querystring: ListQuery }>(
    '/v1/webhook_endpoints',
    { config, schema: { tags, summary: 'List endpoints, newest first', querystring: ListQuery, response: { 200: listEnvelope(WebhookEndpoint) } } },
    (request) => webhooks.list(merchantOf(request), request.query),
  );

  app.get<{ Params: IdParams }>(
    '/v1/webhook_endpoints/:id',
    { config, schema: { tags, summary: 'Read an endpoint', params: IdParams, response: { 200: WebhookEndpoint } } },
    (request) => webhooks.get(merchantOf(request), request.params.id),
  );

  app.post<{ Params: IdParams; Body: UpdateEndpointBody }>(
    '/v1/webhook_endpoints/:id',
    {
      config,
      schema: { tags, summary: 'Change the URL, the events, the description, or enable/disable', params: IdParams, body: UpdateEndpointBody, response: { 200: WebhookEndpoint } },
    },
    (request, reply) => idempotent(request, reply, 200, (tx) => webhooks.update(tx, merchantOf(request), request.params.id, request.body)),
  );

  app.delete<{ Params: IdParams }>(
    '/v1/webhook_endpoints/:id',
    { config, schema: { tags, summary: 'Delete an endpoint', params: IdParams, response: { 200: Deleted } } },
    (request) => webhooks.delete(merchantOf(request), request.params.id),
  );

  app.post<{ Params: IdParams; Body: RollSecretBody }>(
    '/v1/webhook_endpoints/:id/roll_secret',
    {
      config,
      schema: {
        tags,
        summary: 'Make a new secret; deliveries carry signatures of both until the overlap ends',
        params: IdParams,
        body: RollSecretBody,
        response: { 200: WebhookEndpoint },
      },
    },
    (request, reply) =>
      idempotent(request, reply, 200, (tx) => webhooks.rollSecret(tx, merchantOf(request), request.params.id, request.body?.overlapSeconds)),
  );

  app.get<{ Params: IdParams; Querystring: ListQuery }>(
    '/v1/webhook_endpoints/:id/deliveries',
    {
      config,
      schema: {
        tags,
        summary: "An endpoint's deliveries, newest first, with every attempt",
        params: IdParams,
        querystring: ListQuery,
        response: { 200: listEnvelope(WebhookDelivery) },
      },
    },
    (request) => webhooks.deliveries(merchantOf(request), request.params.id, request.query),
  );

  const eventTags = ['events'];
  app.get<{ Querystring: EventsQuery }>(
    '/v1/events',
    {
      config,
      schema: { tags: eventTags, summary: 'Events of the last 30 days, newest first', querystring: EventsQuery, response: { 200: listEnvelope(Event) } },
    },
    (request) => webhooks.events(merchantOf(request), request.query),
  );

  app.get<{ Params: IdParams }>(
    '/v1/events/:id',
    { config, schema: { tags: eventTags, summary: 'Read an event', params: IdParams, response: { 200: Event } } },
    (request) => webhooks.event(merchantOf(request), request.params.id),
  );

  app.post<{ Params: IdParams; Body: ResendBody }>(
    '/v1/events/:id/resend',
    {
      config,
      schema: { tags: eventTags, summary: 'Deliver an event again to an endpoint', params: IdParams, body: ResendBody, response: { 201: WebhookDelivery } },
    },
    (request, reply) => idempotent(request, reply, 201, (tx) => webhooks.resend(tx, merchantOf(request), request.params.id, request.body.endpoint)),
  );
}
