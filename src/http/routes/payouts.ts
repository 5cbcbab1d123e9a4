import type { FastifyPluginAsync } from 'fastify';
import { merchantOf } from '../auth.js';
import type { IdempotentReplies } from '../idempotency.js';
import { listEnvelope } from '../../core/pagination.js';
import { IdParams } from '../../core/schemas.js';
import { CreatePayoutBody, Payout, PayoutsQuery } from '../../modules/payouts/schema.js';
import type { PayoutsService } from '../../modules/payouts/service.js';

export const payoutRoutes: FastifyPluginAsync<{ payouts: PayoutsService; idempotent: IdempotentReplies }> = async (app, { payouts, idempotent }) => {
  const config = { auth: { kind: 'merchant' } } as const;
  const tags = ['payouts'];

  app.post<{ Body: CreatePayoutBody }>(
    '/v1/payouts',
    {
      config: { ...config, idempotencyKey: 'required' },
      schema: {
        tags,
        operationId: 'createPayout',
        summary: 'Pay out the available balance to the payout account now',
        description:
          'Takes `amount` (the whole available balance when absent) from the available balance at once; the payout is `PENDING` until it is sent to the bank moments later. ' +
          '409 `INSUFFICIENT_BALANCE` beyond the available balance, `PAYOUTS_HELD` within 24 hours of a change of the payout account, `PAYOUT_ACCOUNT_REQUIRED` without one.',
        body: CreatePayoutBody,
        response: { 201: Payout },
      },
    },
    (request, reply) => idempotent.send(request, reply, (invocation) => payouts.create(invocation, request.body ?? {})),
  );

  app.get<{ Params: IdParams }>(
    '/v1/payouts/:id',
    { config, schema: { tags, operationId: 'retrievePayout', summary: 'Read a payout', params: IdParams, response: { 200: Payout } } },
    (request) => payouts.get(merchantOf(request), request.params.id),
  );

  app.get<{ Querystring: PayoutsQuery }>(
    '/v1/payouts',
    { config, schema: { tags, operationId: 'listPayouts', summary: 'List payouts, newest first', querystring: PayoutsQuery, response: { 200: listEnvelope(Payout) } } },
    (request) => payouts.list(merchantOf(request), request.query),
  );

  app.post<{ Params: IdParams }>(
    '/v1/payouts/:id/cancel',
    {
      config: { ...config, idempotencyKey: 'optional' },
      schema: {
        tags,
        operationId: 'cancelPayout',
        summary: 'Cancel a payout not sent yet',
        description: 'Only a `PENDING` payout can be canceled (409 `PAYOUT_NOT_CANCELABLE` after); its amount returns to the available balance.',
        params: IdParams,
        response: { 200: Payout },
      },
    },
    (request, reply) => idempotent.send(request, reply, (invocation) => payouts.cancel(invocation, request.params.id)),
  );
};
