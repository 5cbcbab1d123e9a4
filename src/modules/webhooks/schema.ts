import { Type, type Static } from '@sinclair/typebox';
import { Description, Timestamp } from '../../core/schemas.js';
import { listQuery, type ListQuery } from '../../core/pagination.js';
import { SUBSCRIBABLE_EVENT_TYPES, TEST_EVENT_TYPE } from './events.js';

const EventTypeName = Type.Union(SUBSCRIBABLE_EVENT_TYPES.map((type) => Type.Literal(type)));
const EnabledEvents = Type.Array(EventTypeName, {
  maxItems: SUBSCRIBABLE_EVENT_TYPES.length,
  uniqueItems: true,
  description: 'Event types to receive; empty or absent: all of them',
});
const WebhookUrl = Type.String({ minLength: 1, maxLength: 2048, description: 'https:// and reachable from the internet' });

export const CreateEndpointBody = Type.Object(
  { url: WebhookUrl, enabledEvents: Type.Optional(EnabledEvents), description: Type.Optional(Description) },
  { title: 'CreateEndpointBody', additionalProperties: false },
);
export type CreateEndpointBody = Static<typeof CreateEndpointBody>;

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(WebhookUrl),
    enabledEvents: Type.Optional(EnabledEvents),
    description: Type.Optional(Description),
    status: Type.Optional(Type.Union([Type.Literal('enabled'), Type.Literal('disabled')])),
  },
  { title: 'UpdateEndpointBody', additionalProperties: false },
);
export type UpdateEndpointBody = Static<typeof UpdateEndpointBody>;

export const RollSecretBody = Type.Object(
  {
    overlapSeconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 7 * 86_400, description: 'How long the old secret keeps signing too (default one day)' }),
    ),
  },
  { title: 'RollSecretBody', additionalProperties: false },
);
export type RollSecretBody = Static<typeof RollSecretBody>;

export const ResendBody = Type.Object(
  { endpoint: Type.String({ minLength: 1, maxLength: 64, description: 'The endpoint to deliver to (we_…)' }) },
  { title: 'ResendBody', additionalProperties: false },
);
export type ResendBody = Static<typeof ResendBody>;

export const WebhookEndpoint = Type.Object({
  id: Type.String(),
  object: Type.Literal('webhook_endpoint'),
  url: Type.String(),
  enabledEvents: Type.Array(Type.String()),
  description: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  secret: Type.Optional(Type.String({ description: 'whsec_…, shown only when created or rolled' })),
  livemode: Type.Boolean(),
  created: Timestamp,
}, { title: 'WebhookEndpoint' });
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

export const WebhookDelivery = Type.Object({
  id: Type.String(),
  object: Type.Literal('webhook_delivery'),
  endpoint: Type.String(),
  event: Type.String(),
  eventType: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()]),
  attempts: Type.Array(
    Type.Object({
      number: Type.Integer(),
      attemptedAt: Timestamp,
      statusCode: Type.Union([Type.Integer(), Type.Null()]),
      durationMs: Type.Integer(),
      error: Type.Union([Type.String(), Type.Null()]),
      responseExcerpt: Type.Union([Type.String(), Type.Null()], { description: 'The first 1,000 characters the endpoint answered' }),
    }),
  ),
  created: Timestamp,
}, { title: 'WebhookDelivery' });
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const Event = Type.Object({
  id: Type.String(),
  object: Type.Literal('event'),
  type: Type.String(),
  livemode: Type.Boolean(),
  created: Timestamp,
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'The object as the API returned it at the moment of the event' }),
}, { title: 'Event' });
export type Event = Static<typeof Event>;

export const EventsQuery = listQuery({
  type: Type.Optional(Type.Union([...SUBSCRIBABLE_EVENT_TYPES, TEST_EVENT_TYPE].map((type) => Type.Literal(type)), { description: 'Only events of this type' })),
  objectId: Type.Optional(Type.String({ maxLength: 64, description: 'Only events about this object (ord_…, pi_…)' })),
});
export type EventsQuery = ListQuery & Static<typeof EventsQuery>;
