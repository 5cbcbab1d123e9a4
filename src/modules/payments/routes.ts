import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/db.js';
import { merchantOf } from '../../http/auth.js';
import { sendIdempotent, type PhaseHooks } from '../../http/idempotency.js';
import { listEnvelope, ListQuery } from '../../http/pagination.js';
import { Amount, Description, IdParams } from '../../http/schemas.js';
import { CardId, CreateChargeBody, Metadata, PaymentIntent } from './schema.js';
import type { PaymentsService } from './service.js';

const CreateIntentBody = Type.Object(
  { amount: Amount, card: CardId, description: Type.Optional(Description), metadata: Type.Optional(Metadata) },
  { additionalProperties: false },
);
type CreateIntentBody = Static<typeof CreateIntentBody> & { metadata?: Record<string, string> };

export function paymentRoutes(app: FastifyInstance, db: Db, payments: PaymentsService, hooks: PhaseHooks): void {
  const config = { auth: { kind: 'merchant', scope: 'subscribe' } } as const;

  app.post<{ Body: CreateChargeBody }>(
    '/subscribe/v1/charges',
    {
      config,
      schema: {
        tags: ['charges'],
        summary: 'Charge a saved card: create and debit in one call',
        description:
          'Needs an Idempotency-Key. Answers the payment intent: SUCCEEDED, FAILED with failureCode, or PROCESSING when the bank ' +
          'answer was unclear (reconciliation settles it; do not charge again meanwhile).',
        body: CreateChargeBody,
        response: { 201: PaymentIntent },
      },
    },
    (request, reply) =>
      sendIdempotent(db, merchantOf(request), request, reply, {
        keyRequired: true,
        phases: payments.chargePhases(merchantOf(request), request.body),
        hooks,
      }),
  );

  app.get<{ Params: IdParams }>(
    '/subscribe/v1/charges/:id',
    { config, schema: { tags: ['charges'], summary: 'Read a payment intent', params: IdParams, response: { 200: PaymentIntent } } },
    (request) => payments.get(merchantOf(request), request.params.id),
  );

  app.get<{ Querystring: ListQuery }>(
    '/subscribe/v1/charges',
    {
      config,
      schema: { tags: ['charges'], summary: 'List payment intents, newest first', querystring: ListQuery, response: { 200: listEnvelope(PaymentIntent) } },
    },
    (request) => payments.list(merchantOf(request), request.query),
  );

  const legacy = ['payment intents (legacy)'];
  app.post<{ Body: CreateIntentBody }>(
    '/v1/payment_intents',
    {
      config,
      schema: { tags: legacy, summary: 'Create a payment intent to confirm later (REQUIRES_PAYMENT)', body: CreateIntentBody, response: { 201: PaymentIntent } },
    },
    (request, reply) =>
      sendIdempotent(db, merchantOf(request), request, reply, {
        keyRequired: false,
        phases: payments.createPhases(merchantOf(request), request.body),
        hooks,
      }),
  );

  app.post<{ Params: IdParams }>(
    '/v1/payment_intents/:id/confirm',
    {
      config,
      schema: { tags: legacy, summary: 'Confirm: debit the card, as the charge call does', params: IdParams, response: { 200: PaymentIntent } },
    },
    (request, reply) =>
      sendIdempotent(db, merchantOf(request), request, reply, {
        keyRequired: true,
        phases: payments.confirmPhases(merchantOf(request), request.params.id),
        hooks,
      }),
  );

  app.post<{ Params: IdParams }>(
    '/v1/payment_intents/:id/cancel',
    { config, schema: { tags: legacy, summary: 'Cancel an intent not yet confirmed', params: IdParams, response: { 200: PaymentIntent } } },
    (request, reply) =>
      sendIdempotent(db, merchantOf(request), request, reply, {
        keyRequired: false,
        phases: payments.cancelPhases(merchantOf(request), request.params.id),
        hooks,
      }),
  );

  app.get<{ Params: IdParams }>(
    '/v1/payment_intents/:id',
    { config, schema: { tags: legacy, summary: 'Read a payment intent', params: IdParams, response: { 200: PaymentIntent } } },
    (request) => payments.get(merchantOf(request), request.params.id),
  );
}
