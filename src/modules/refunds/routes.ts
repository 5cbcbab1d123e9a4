import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/db.js';
import { merchantOf } from '../../http/auth.js';
import { sendIdempotent, type PhaseHooks } from '../../http/idempotency.js';
import { listEnvelope, ListQuery } from '../../http/pagination.js';
import { IdParams } from '../../http/schemas.js';
import { CreateRefundBody, Refund } from './schema.js';
import type { RefundsService } from './service.js';

export function refundRoutes(app: FastifyInstance, db: Db, refunds: RefundsService, hooks: PhaseHooks): void {
  const config = { auth: { kind: 'merchant' } } as const;
  const tags = ['refunds'];

  app.post<{ Body: CreateRefundBody }>(
    '/v1/refunds',
    {
      config,
      schema: {
        tags,
        summary: "Refund a payment's full amount",
        description: 'PENDING when the bank answer was unclear; reconciliation settles it.',
        body: CreateRefundBody,
        response: { 201: Refund },
      },
    },
    (request, reply) =>
      sendIdempotent(db, merchantOf(request), request, reply, {
        keyRequired: true,
        phases: refunds.createPhases(merchantOf(request), request.body),
        hooks,
      }),
  );

  app.get<{ Params: IdParams }>(
    '/v1/refunds/:id',
    { config, schema: { tags, summary: 'Read a refund', params: IdParams, response: { 200: Refund } } },
    (request) => refunds.get(merchantOf(request), request.params.id),
  );

  app.get<{ Querystring: ListQuery }>(
    '/v1/refunds',
    { config, schema: { tags, summary: 'List refunds, newest first', querystring: ListQuery, response: { 200: listEnvelope(Refund) } } },
    (request) => refunds.list(merchantOf(request), request.query),
  );
}
