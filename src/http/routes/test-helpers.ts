import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { IdParams } from '../../core/schemas.js';
import { CardBinding } from '../../modules/card-bindings/schema.js';
import { Order } from '../../modules/orders/schema.js';
import { PaymentIntent } from '../../modules/payments/schema.js';
import { Payout, PayoutAccount } from '../../modules/payouts/schema.js';
import { Balance } from '../../modules/ledger/schema.js';
import type { TestHelpersService } from '../../modules/test-helpers/service.js';
import { merchantOf, routeNotFound } from '../auth.js';

const TestCardBody = Type.Object(
  { card: Type.Optional(Type.String({ pattern: '^[0-9]{16}$', description: 'A test card number (docs/testing.md); default 8600000000000007' })) },
  { title: 'TestCardBody', additionalProperties: false },
);
type TestCardBody = Static<typeof TestCardBody>;

const config = { auth: { kind: 'merchant' } } as const;
const tags = ['test helpers'];

/** The merchant of a test key; a live key finds no such route. */
function testMerchant(request: FastifyRequest) {
  const merchant = merchantOf(request);
  if (merchant.livemode) throw routeNotFound(request);
  return merchant;
}

/** Test mode's helpers; with a live key they do not exist. */
export const testHelperRoutes: FastifyPluginAsync<{ helpers: TestHelpersService }> = async (app, { helpers }) => {
  buyerHelpers(app, helpers);
  moneyHelpers(app, helpers);
};

/** What a buyer or time does to orders and card bindings, at once. */
function buyerHelpers(app: FastifyInstance, helpers: TestHelpersService): void {

  app.post<{ Params: IdParams }>(
    '/v1/test_helpers/orders/:id/expire',
    {
      config,
      schema: {
        tags,
        operationId: 'expireTestOrder',
        summary: 'Test mode: expire a PENDING order now, as its time passing would (order.expired)',
        params: IdParams,
        response: { 200: Order },
      },
    },
    (request) => helpers.expireOrder(testMerchant(request), request.params.id),
  );

  app.post<{ Params: IdParams }>(
    '/v1/test_helpers/charges/:id/expire_hold',
    {
      config,
      schema: {
        tags,
        operationId: 'expireTestHold',
        summary: 'Test mode: release a REQUIRES_CAPTURE hold now, as TOLOV_HOLD_DAYS passing would (payment_intent.hold_released)',
        params: IdParams,
        response: { 200: PaymentIntent },
      },
    },
    (request) => helpers.expireHold(testMerchant(request), request.params.id),
  );

  app.post<{ Params: IdParams; Body: TestCardBody }>(
    '/v1/test_helpers/orders/:id/pay',
    {
      config,
      schema: {
        tags,
        operationId: 'payTestOrder',
        summary: 'Test mode: pay a PENDING order as a buyer would, with a test card whose behaviour decides the outcome',
        params: IdParams,
        body: TestCardBody,
        response: { 200: Order },
      },
    },
    (request) => helpers.payOrder(testMerchant(request), request.params.id, request.body?.card),
  );

  app.post<{ Params: IdParams; Body: TestCardBody }>(
    '/v1/test_helpers/card_bindings/:id/complete',
    {
      config,
      schema: {
        tags,
        operationId: 'completeTestCardBinding',
        summary: 'Test mode: complete a PENDING card binding as a buyer would, saving a test card',
        params: IdParams,
        body: TestCardBody,
        response: { 200: CardBinding },
      },
    },
    (request) => helpers.completeBinding(testMerchant(request), request.params.id, request.body?.card),
  );

}

/** What time and the bank do to the balance and payouts, at once. */
function moneyHelpers(app: FastifyInstance, helpers: TestHelpersService): void {
  app.post(
    '/v1/test_helpers/payout_account/release_hold',
    {
      config,
      schema: {
        tags,
        operationId: 'releaseTestPayoutHold',
        summary: 'Test mode: end now the hold that a change of the payout account put on payouts',
        response: { 200: PayoutAccount },
      },
    },
    (request) => helpers.releasePayoutHold(testMerchant(request)),
  );

  app.post(
    '/v1/test_helpers/payouts/run',
    {
      config,
      schema: {
        tags,
        operationId: 'runTestPayouts',
        summary: "Test mode: run the day's automatic payout now, and send every PENDING payout",
        description:
          'Makes the automatic payout of every available transaction not yet paid out, as the daily run does, and sends it (with any PENDING manual payout) to the test bank at once: ' +
          'an account ending 0002 fails `ACCOUNT_CLOSED`, one ending 0003 stays `IN_TRANSIT` until reconciliation, others are `PAID`. 409 when below `TOLOV_PAYOUT_MIN`, held, or without an account.',
        response: { 201: Payout },
      },
    },
    async (request, reply) => reply.code(201).send(await helpers.runPayouts(testMerchant(request))),
  );

  app.post(
    '/v1/test_helpers/balance/settle',
    {
      config,
      schema: {
        tags,
        operationId: 'settleTestBalance',
        summary: "Test mode: make the product's succeeded payments available now, as the settlement delay would",
        description: 'Up to 10,000 payments a call. Answers the balance.',
        response: { 200: Balance },
      },
    },
    (request) => helpers.settleBalance(testMerchant(request)),
  );
}
