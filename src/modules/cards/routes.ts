import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/db.js';
import { merchantOf } from '../../http/auth.js';
import { listEnvelope, ListQuery } from '../../http/pagination.js';
import { IdParams } from '../../http/schemas.js';
import { Card } from './schema.js';
import { deleteCard, getCard, listCards } from './service.js';

export function cardRoutes(app: FastifyInstance, db: Db): void {
  const config = { auth: { kind: 'merchant', scope: 'subscribe' } } as const;
  const tags = ['cards'];

  app.get<{ Params: IdParams }>(
    '/subscribe/v1/cards/:id',
    { config, schema: { tags, summary: 'Read a saved card', params: IdParams, response: { 200: Card } } },
    (request) => getCard(db, merchantOf(request), request.params.id),
  );

  app.get<{ Querystring: ListQuery }>(
    '/subscribe/v1/cards',
    { config, schema: { tags, summary: 'List saved cards, newest first', querystring: ListQuery, response: { 200: listEnvelope(Card) } } },
    (request) => listCards(db, merchantOf(request), request.query),
  );

  app.delete<{ Params: IdParams }>(
    '/subscribe/v1/cards/:id',
    {
      config,
      schema: { tags, summary: 'Delete a saved card; charges to it then answer CARD_INACTIVE', params: IdParams, response: { 200: Card } },
    },
    (request) => deleteCard(db, merchantOf(request), request.params.id),
  );
}
