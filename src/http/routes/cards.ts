import type { FastifyPluginAsync } from 'fastify';
import { merchantOf } from '../auth.js';
import { listEnvelope } from '../../core/pagination.js';
import { IdParams } from '../../core/schemas.js';
import { Card, CardsQuery } from '../../modules/cards/schema.js';
import type { CardsService } from '../../modules/cards/service.js';

export const cardRoutes: FastifyPluginAsync<{ cards: CardsService }> = async (app, { cards }) => {
  const config = { auth: { kind: 'merchant', scope: 'subscribe' } } as const;
  const tags = ['cards'];

  app.get<{ Params: IdParams }>(
    '/subscribe/v1/cards/:id',
    { config, schema: { tags, operationId: 'retrieveCard', summary: 'Read a saved card', params: IdParams, response: { 200: Card } } },
    (request) => cards.get(merchantOf(request), request.params.id),
  );

  app.get<{ Querystring: CardsQuery }>(
    '/subscribe/v1/cards',
    { config, schema: { tags, operationId: 'listCards', summary: 'List saved cards, newest first', querystring: CardsQuery, response: { 200: listEnvelope(Card) } } },
    (request) => cards.list(merchantOf(request), request.query),
  );

  app.delete<{ Params: IdParams }>(
    '/subscribe/v1/cards/:id',
    {
      config,
      schema: { tags, operationId: 'deleteCard', summary: 'Delete a saved card; charges to it then answer CARD_INACTIVE', params: IdParams, response: { 200: Card } },
    },
    (request) => cards.delete(merchantOf(request), request.params.id),
  );
};
