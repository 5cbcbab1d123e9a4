import type { FastifyPluginAsync } from 'fastify';
import { merchantOf } from '../auth.js';
import type { IdempotentReplies } from '../idempotency.js';
import { IdParams } from '../../core/schemas.js';
import { CardBinding, CreateBindingBody } from '../../modules/card-bindings/schema.js';
import type { CardBindingsService } from '../../modules/card-bindings/service.js';

export const cardBindingRoutes: FastifyPluginAsync<{ bindings: CardBindingsService; idempotent: IdempotentReplies }> = async (app, { bindings, idempotent }) => {
  const config = { auth: { kind: 'merchant', scope: 'subscribe' } } as const;
  const tags = ['card bindings'];

  app.post<{ Body: CreateBindingBody }>(
    '/subscribe/v1/card_bindings',
    {
      config: { ...config, idempotencyKey: 'optional' },
      schema: {
        tags,
        operationId: 'createCardBinding',
        summary: 'Start binding a card: send the buyer to url, or build your own page on the public session calls',
        body: CreateBindingBody,
        response: { 201: CardBinding },
      },
    },
    (request, reply) =>
      idempotent.send(request, reply, (invocation) => bindings.create(invocation, request.body ?? {})),
  );

  app.get<{ Params: IdParams }>(
    '/subscribe/v1/card_bindings/:id',
    { config, schema: { tags, operationId: 'retrieveCardBinding', summary: 'Read a card binding', params: IdParams, response: { 200: CardBinding } } },
    (request) => bindings.get(merchantOf(request), request.params.id),
  );
};
