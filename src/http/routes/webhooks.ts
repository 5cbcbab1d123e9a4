import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { merchantOf } from '../auth.js';
import type { IdempotentReplies } from '../idempotency.js';
import { listEnvelope, ListQuery, PageQuery } from '../../core/pagination.js';
import { IdParams } from '../../core/schemas.js';
import {
  CreateEndpointBody,
  Event,
  EventsQuery,
  ResendBody,
  RollSecretBody,
  UpdateEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
} from '../../modules/webhooks/schema.js';
import type { WebhooksService } from '../../modules/webhooks/service.js';

type Deps = { webhooks: WebhooksService; idempotent: IdempotentReplies };
type Send = IdempotentReplies['send'];

const config = { auth: { kind: 'merchant' } } as const;
/** The writes: an optional Idempotency-Key replays them. */
const writeConfig = { ...config, idempotencyKey: 'optional' } as const;
const Deleted = Type.Object({ id: Type.String(), object: Type.Literal('webhook_endpoint'), deleted: Type.Literal(true) }, { title: 'DeletedWebhookEndpoint' });

/** Adding, reading and changing endpoints. */
function endpointRoutes(app: FastifyInstance, webhooks: WebhooksService, send: Send): void {
  const tags = ['webhooks'];
  app.post<{ Body: CreateEndpointBody }>(
    '/v1/webhook_endpoints',
    {
      config: writeConfig,
      schema: {
        tags,
        operationId: 'createWebhookEndpoint',
        summary: 'Add an endpoint; its signing secret is in this answer only',
        body: CreateEndpointBody,
        response: { 201: WebhookEndpoint },
      },
    },
    (request, reply) => send(request, reply, (invocation) => webhooks.createEndpoint(invocation, request.body)),
  );

  app.get<{ Querystring: ListQuery }>(
    '/v1/webhook_endpoints',
    { config, schema: { tags, operationId: 'listWebhookEndpoints', summary: 'List endpoints, newest first', querystring: ListQuery, response: { 200: listEnvelope(WebhookEndpoint) } } },
    (request) => webhooks.list(merchantOf(request), request.query),
  );

  app.get<{ Params: IdParams }>(
    '/v1/webhook_endpoints/:id',
    { config, schema: { tags, operationId: 'retrieveWebhookEndpoint', summary: 'Read an endpoint', params: IdParams, response: { 200: WebhookEndpoint } } },
    (request) => webhooks.get(merchantOf(request), request.params.id),
  );

  app.post<{ Params: IdParams; Body: UpdateEndpointBody }>(
    '/v1/webhook_endpoints/:id',
    {
      config: writeConfig,
      schema: { tags, operationId: 'updateWebhookEndpoint', summary: 'Change the URL, the events, the description, or enable/disable', params: IdParams, body: UpdateEndpointBody, response: { 200: WebhookEndpoint } },
    },
    (request, reply) => send(request, reply, (invocation) => webhooks.updateEndpoint(invocation, request.params.id, request.body)),
  );
}

/** Deleting an endpoint, rolling its secret, and its delivery log. */
function endpointActionRoutes(app: FastifyInstance, webhooks: WebhooksService, send: Send): void {
  const tags = ['webhooks'];
  app.delete<{ Params: IdParams }>(
    '/v1/webhook_endpoints/:id',
    { config: { ...config, idempotencyKey: 'none' }, schema: { tags, operationId: 'deleteWebhookEndpoint', summary: 'Delete an endpoint', params: IdParams, response: { 200: Deleted } } },
    (request, reply) => send(request, reply, (invocation) => webhooks.deleteEndpoint(invocation, request.params.id)),
  );

  app.post<{ Params: IdParams; Body: RollSecretBody }>(
    '/v1/webhook_endpoints/:id/roll_secret',
    {
      config: writeConfig,
      schema: {
        tags,
        operationId: 'rollWebhookEndpointSecret',
        summary: 'Make a new secret; deliveries carry signatures of both until the overlap ends',
        params: IdParams,
        body: RollSecretBody,
        response: { 200: WebhookEndpoint },
      },
    },
    (request, reply) => send(request, reply, (invocation) => webhooks.rollEndpointSecret(invocation, request.params.id, request.body?.overlapSeconds)),
  );

  app.get<{ Params: IdParams; Querystring: PageQuery }>(
    '/v1/webhook_endpoints/:id/deliveries',
    {
      config,
      schema: {
        tags,
        operationId: 'listWebhookDeliveries',
        summary: "An endpoint's deliveries, newest first, with every attempt",
        params: IdParams,
        querystring: PageQuery,
        response: { 200: listEnvelope(WebhookDelivery) },
      },
    },
    (request) => webhooks.deliveries(merchantOf(request), request.params.id, request.query),
  );
}

/** The events of the last 30 days, and sending one again. */
function eventRoutes(app: FastifyInstance, webhooks: WebhooksService, send: Send): void {
  const tags = ['events'];
  app.get<{ Querystring: EventsQuery }>(
    '/v1/events',
    {
      config,
      schema: { tags: tags, operationId: 'listEvents', summary: 'Events of the last 30 days, newest first', querystring: EventsQuery, response: { 200: listEnvelope(Event) } },
    },
    (request) => webhooks.events(merchantOf(request), request.query),
  );

  app.get<{ Params: IdParams }>(
    '/v1/events/:id',
    { config, schema: { tags: tags, operationId: 'retrieveEvent', summary: 'Read an event', params: IdParams, response: { 200: Event } } },
    (request) => webhooks.event(merchantOf(request), request.params.id),
  );

  app.post<{ Params: IdParams; Body: ResendBody }>(
    '/v1/events/:id/resend',
    {
      config: writeConfig,
      schema: { tags: tags, operationId: 'resendEvent', summary: 'Deliver an event again to an endpoint', params: IdParams, body: ResendBody, response: { 201: WebhookDelivery } },
    },
    (request, reply) => send(request, reply, (invocation) => webhooks.resendEvent(invocation, request.params.id, request.body.endpoint)),
  );
}

export const webhookRoutes: FastifyPluginAsync<Deps> = async (app, { webhooks, idempotent }) => {
  // Each write is a command of the webhooks capability: an optional Idempotency-Key replays it instead of repeating it.
  const send: Send = idempotent.send.bind(idempotent);
  endpointRoutes(app, webhooks, send);
  endpointActionRoutes(app, webhooks, send);
  eventRoutes(app, webhooks, send);
};
