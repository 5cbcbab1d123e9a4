import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { merchantOf } from '../auth.js';
import type { IdempotentReplies } from '../idempotency.js';
import { listEnvelope } from '../../core/pagination.js';
import { Amount, Description, IdParams } from '../../core/schemas.js';
import { CaptureBody, CardId, ChargesQuery, CreateChargeBody, Metadata, PaymentIntent } from '../../modules/payments/schema.js';
import type { PaymentsService } from '../../modules/payments/service.js';
import type { HoldsService } from '../../modules/holds/service.js';
import { ReceiptRequest } from '../../modules/receipts/schema.js';

const CreateIntentBody = Type.Object(
  { amount: Amount, card: CardId, description: Type.Optional(Description), metadata: Type.Optional(Metadata), receipt: Type.Optional(ReceiptRequest) },
  { title: 'CreateIntentBody', additionalProperties: false },
);
type CreateIntentBody = Static<typeof CreateIntentBody> & { metadata?: Record<string, string> };

type Deps = { payments: PaymentsService; holds: HoldsService; idempotent: IdempotentReplies };

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
          'settles it (event `payment_intent.succeeded` or `payment_intent.failed`): do not charge again meanwhile; a retry with the same Idempotency-Key is safe. ' +
          'With `capture: "manual"` the bank holds the amount instead: the intent is `REQUIRES_CAPTURE` (event `payment_intent.requires_capture`) until you capture or cancel it, ' +
          'or until the hold is released after `TOLOV_HOLD_DAYS` (event `payment_intent.hold_released`).',
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

/** Two-step payments: a hold captured (all or part of it) or released. */
function holdRoutes(app: FastifyInstance, { holds, idempotent }: Deps): void {
  app.post<{ Params: IdParams; Body: CaptureBody }>(
    '/subscribe/v1/charges/:id/capture',
    {
      config: { ...config, idempotencyKey: 'required' },
      schema: {
        tags: ['charges'],
        operationId: 'captureCharge',
        summary: 'Capture a hold: take all of it, or less (the rest is released)',
        description:
          'Only a `REQUIRES_CAPTURE` intent can be captured (409 `INVALID_STATE` otherwise). It is then `SUCCEEDED` with `amount` the amount captured, ' +
          'its fee, ledger entries and sale receipt as for any payment (event `payment_intent.succeeded`). A capture of less than the held amount of a payment ' +
          'with fiscal lines needs `receipt` lines for the amount captured. When the bank refuses the capture but still holds the money the intent is ' +
          '`REQUIRES_CAPTURE` again; when its answer is unclear the intent stays `PROCESSING` until reconciliation settles it.',
        params: IdParams,
        body: CaptureBody,
        response: { 200: PaymentIntent },
      },
    },
    (request, reply) => idempotent.send(request, reply, (invocation) => holds.capture(invocation, request.params.id, request.body ?? {})),
  );

  app.post<{ Params: IdParams }>(
    '/subscribe/v1/charges/:id/cancel',
    {
      config: { ...config, idempotencyKey: 'optional' },
      schema: {
        tags: ['charges'],
        operationId: 'cancelCharge',
        summary: 'Cancel a hold: the bank returns the whole amount to the card',
        description:
          'Only a `REQUIRES_CAPTURE` intent can be canceled here (409 `INVALID_STATE` otherwise). It is `CANCELED` once the bank released the hold ' +
          '(event `payment_intent.hold_released`). A capture and a cancel racing for one hold: exactly one of them runs; the other answers 409.',
        params: IdParams,
        response: { 200: PaymentIntent },
      },
    },
    (request, reply) => idempotent.send(request, reply, (invocation) => holds.cancel(invocation, request.params.id)),
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
  holdRoutes(app, deps);
  legacyIntentRoutes(app, deps);
};
