import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { merchantOf } from '../auth.js';
import type { IdempotentReplies } from '../idempotency.js';
import { listEnvelope } from '../../core/pagination.js';
import { Amount, Description, IdParams } from '../../core/schemas.js';
import { CardId, ChargesQuery, CreateChargeBody, Metadata, PaymentIntent } from '../../modules/payments/schema.js';
import type { PaymentsService } from '../../modules/payments/service.js';
import { ReceiptRequest } from '../../modules/receipts/schema.js';

const CreateIntentBody = Type.Object(
  { amount: Amount, card: CardId, description: Type.Optional(Description), metadata: Type.Optional(Metadata), receipt: Type.Optional(ReceiptRequest) },
  { title: 'CreateIntentBody', additionalProperties: false },
);
type CreateIntentBody = Static<typeof CreateIntentBody> & { metadata?: Record<string, string> };

type Deps = { payments: PaymentsService; idempotent: IdempotentReplies };

const config = { auth: { kind: 'merchant', scope: 'subscribe' } } as const;
const legacy = ['payment intents (legacy)'];

/** Charges to saved cards: created and debited in one call. */
function chargeRoutes(app: FastifyInstance, { payments, idempotent }: Deps): void {
  app.post<{ Body: CreateChargeBody }>(
    '/subscribe/v1/charges',
    {
      config: { ...config, idempotencyKey: 'required' },
      schema: {
        tags: ['charges'],
        operationId: 'createCharge',
        summary: 'Charge a saved card: create and debit in one call',
        description:
          'Creates the payment intent and debits the card in one call. A refusal by the bank is an answer, not an error: the intent ' +
          "`FAILED` with its `failureCode`. When the bank's answer is unclear the intent stays `PROCESSING` until reconciliation " +
          'settles it (event `payment_intent.succeeded` or `payment_intent.failed`): do not charge again meanwhile; a retry with the same Idempotency-Key is safe.',
        body: CreateChargeBody,
        response: { 201: PaymentIntent },
      },
    },
    (request, reply) =>
      idempotent.send(request, reply, (invocation) => payments.charge(invocation, request.body)),
  );

  app.get<{ Params: IdParams }>(
    '/subscribe/v1/charges/:id',
    { config, schema: { tags: ['charges'], operationId: 'retrieveCharge', summary: 'Read a payment intent', params: IdParams, response: { 200: PaymentIntent } } },
    (request) => payments.get(merchantOf(request), request.params.id),
  );

  app.get<{ Querystring: ChargesQuery }>(
    '/subscribe/v1/charges',
    {
      config,
      schema: { tags: ['charges'], operationId: 'listCharges', summary: 'List payment intents, newest first', querystring: ChargesQuery, response: { 200: listEnvelope(PaymentIntent) } },
    },
    (request) => payments.list(merchantOf(request), request.query),
  );
}

/** The legacy pair: an intent created first, then confirmed (or canceled). */
function legacyIntentRoutes(app: FastifyInstance, { payments, idempotent }: Deps): void {
  app.post<{ Body: CreateIntentBody }>(
    '/v1/payment_intents',
    {
      config: { ...config, idempotencyKey: 'optional' },
      schema: { tags: legacy, operationId: 'createPaymentIntent', summary: 'Create a payment intent to confirm later (REQUIRES_PAYMENT)', body: CreateIntentBody, response: { 201: PaymentIntent } },
    },
    (request, reply) =>
      idempotent.send(request, reply, (invocation) => payments.create(invocation, request.body)),
  );

  app.post<{ Params: IdParams }>(
    '/v1/payment_intents/:id/confirm',
    {
      config: { ...config, idempotencyKey: 'required' },
      schema: { tags: legacy, operationId: 'confirmPaymentIntent', summary: 'Confirm: debit the card, as the charge call does', params: IdParams, response: { 200: PaymentIntent } },
    },
    (request, reply) =>
      idempotent.send(request, reply, (invocation) => payments.confirm(invocation, request.params.id)),
  );

  app.post<{ Params: IdParams }>(
    '/v1/payment_intents/:id/cancel',
    { config: { ...config, idempotencyKey: 'optional' }, schema: { tags: legacy, operationId: 'cancelPaymentIntent', summary: 'Cancel an intent not yet confirmed', params: IdParams, response: { 200: PaymentIntent } } },
    (request, reply) =>
      idempotent.send(request, reply, (invocation) => payments.cancel(invocation, request.params.id)),
  );

  app.get<{ Params: IdParams }>(
    '/v1/payment_intents/:id',
    { config, schema: { tags: legacy, operationId: 'retrievePaymentIntent', summary: 'Read a payment intent', params: IdParams, response: { 200: PaymentIntent } } },
    (request) => payments.get(merchantOf(request), request.params.id),
  );
}

export const paymentRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  chargeRoutes(app, deps);
  legacyIntentRoutes(app, deps);
};
