import type { FastifyPluginAsync } from 'fastify';
import { merchantOf } from '../auth.js';
import { listEnvelope } from '../../core/pagination.js';
import { IdParams } from '../../core/schemas.js';
import { Receipt, ReceiptsQuery } from '../../modules/receipts/schema.js';
import type { ReceiptsService } from '../../modules/receipts/service.js';

export const receiptRoutes: FastifyPluginAsync<{ receipts: ReceiptsService }> = async (app, { receipts }) => {
  const config = { auth: { kind: 'merchant' } } as const;
  const tags = ['receipts'];

  app.get<{ Params: IdParams }>(
    '/v1/receipts/:id',
    { config, schema: { tags, operationId: 'retrieveReceipt', summary: 'Read a fiscal receipt', params: IdParams, response: { 200: Receipt } } },
    (request) => receipts.get(merchantOf(request), request.params.id),
  );

  app.get<{ Querystring: ReceiptsQuery }>(
    '/v1/receipts',
    {
      config,
      schema: { tags, operationId: 'listReceipts', summary: 'List fiscal receipts, newest first', querystring: ReceiptsQuery, response: { 200: listEnvelope(Receipt) } },
    },
    (request) => receipts.list(merchantOf(request), request.query),
  );
};
