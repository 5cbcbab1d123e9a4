import { Type, type Static } from '@sinclair/typebox';
import { CustomerRef, HttpUrl, Timestamp } from '../../core/schemas.js';
import { SESSION_STATUSES } from '../../core/session-statuses.js';

export const CreateBindingBody = Type.Object(
  { customerRef: Type.Optional(CustomerRef), returnUrl: Type.Optional(HttpUrl) },
  { title: 'CreateBindingBody', additionalProperties: false },
);
export type CreateBindingBody = Static<typeof CreateBindingBody>;

export const CardBinding = Type.Object({
  id: Type.String(),
  object: Type.Literal('card_binding'),
  status: Type.Union(SESSION_STATUSES.map((status) => Type.Literal(status))),
  failureCode: Type.Union([Type.String(), Type.Null()], {
    description: 'TOO_MANY_ATTEMPTS when the buyer used up the card or code attempts (status FAILED); null otherwise',
  }),
  clientToken: Type.String({ description: 'Authorizes the public /checkout/v1/sessions/{clientToken} calls; safe for the browser' }),
  url: Type.String({ description: 'The hosted page that captures the card' }),
  card: Type.Union([Type.String(), Type.Null()], { description: 'The saved card, once the binding is COMPLETED' }),
  customerRef: Type.Union([Type.String(), Type.Null()]),
  returnUrl: Type.Union([Type.String(), Type.Null()]),
  expiresAt: Timestamp,
  livemode: Type.Boolean(),
  created: Timestamp,
}, { title: 'CardBinding' });
export type CardBinding = Static<typeof CardBinding>;
