import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/db.js';
import { merchantOf } from '../../http/auth.js';
import { sendIdempotent } from '../../http/idempotency.js';
import { IdParams } from '../../http/schemas.js';
import type { Rails } from '../../rails/index.js';
import { CardBinding, CreateBindingBody } from './schema.js';
import { createBindingPhases, getBinding, type BindingSettings } from './service.js';

export function cardBindingRoutes(app: FastifyInstance, db: Db, rails: Rails, settings: BindingSettings): void {
  const config = { auth: { kind: 'merchant', scope: 'subscribe' } } as const;
  const tags = ['card bindings'];

  app.post<{ Body: CreateBindingBody }>(
    '/subscribe/v1/card_bindings',
    {
      config,
      schema: {
        tags,
        summary: 'Start binding a card: send the buyer to url, or build your own page on the public session calls',
        body: CreateBindingBody,
        response: { 201: CardBinding },
      },
    },
    (request, reply) =>
      sendIdempotent(db, merchantOf(request), request, reply, {
        keyRequired: false,
        phases: createBindingPhases(settings, rails, merchantOf(request), request.body ?? {}),
      }),
  );

  app.get<{ Params: IdParams }>(
    '/subscribe/v1/card_bindings/:id',
    { config, schema: { tags, summary: 'Read a card binding', params: IdParams, response: { 200: CardBinding } } },
    (request) => getBinding(db, settings, merchantOf(request), request.params.id),
  );
}
