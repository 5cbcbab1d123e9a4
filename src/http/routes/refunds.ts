import type { FastifyPluginAsync } from 'fastify';
import { merchantOf } from '../auth.js';
import type { IdempotentReplies } from '../idempotency.js';
import { listEnvelope } from '../../core/pagination.js';
import { IdParams } from '../../core/schemas.js';
import { CreateRefundBody, Refund, RefundsQuery } from '../../modules/refunds/schema.js';
import type { RefundsService } from '../../modules/refunds/service.js';

export const refundRoutes: FastifyPluginAsync<{ refunds: RefundsService; idempotent: IdempotentReplies }> = async (app, { refunds, idempotent }) => {
  const config = { auth: { kind: 'merchant' } } as const;
  const tags = ['refunds'];

  app.post<{ Body: CreateRefundBody }>(
    '/v1/refunds',
    {
      config: { ...config, idempotencyKey: 'required' },
      schema: {
        tags,
        operationId: 'createRefund',
        summary: "Refund a payment's full amount",
        description: "Returns the whole amount of a `SUCCEEDED` payment to the card it was paid with; `amount`, if given, must equal the payment's.",
        body: CreateRefundBody,
        response: { 201: Refund },
      },
    },
    (request, reply) =>
      idempotent.send(request, reply, (invocation) => refunds.create(invocation, request.body)),
  );

  app.get<{ Params: IdParams }>(
    '/v1/refunds/:id',
    { config, schema: { tags, operationId: 'retrieveRefund', summary: 'Read a refund', params: IdParams, response: { 200: Refund } } },
    (request) => refunds.get(merchantOf(request), request.params.id),
  );

  app.get<{ Querystring: RefundsQuery }>(
    '/v1/refunds',
    { config, schema: { tags, operationId: 'listRefunds', summary: 'List refunds, newest first', querystring: RefundsQuery, response: { 200: listEnvelope(Refund) } } },
    (request) => refunds.list(merchantOf(request), request.query),
  );
};
