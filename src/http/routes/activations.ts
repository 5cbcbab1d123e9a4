import type { FastifyPluginAsync } from 'fastify';
import { listEnvelope } from '../../core/pagination.js';
import { IdParams } from '../../core/schemas.js';
import { Activation, ActivationsQuery, RejectBody } from '../../modules/activations/schema.js';
import type { ActivationsService } from '../../modules/activations/service.js';
import type { OperatorActions } from '../../modules/operators/actions.js';
import { API_ACTOR } from '../../modules/operators/service.js';

/** The operator's side of going live: the queue of activation requests, and each one's decision. */
export const activationRoutes: FastifyPluginAsync<{ activations: ActivationsService; actions: OperatorActions }> = async (app, { activations, actions }) => {
  const config = { auth: { kind: 'admin' } } as const;
  const tags = ['operator'];

  app.get<{ Querystring: ActivationsQuery }>(
    '/admin/v1/activations',
    {
      config,
      schema: { tags, operationId: 'listActivations', summary: 'Activation requests, newest submission first', querystring: ActivationsQuery, response: { 200: listEnvelope(Activation) } },
    },
    (request) => activations.list(request.query),
  );

  app.get<{ Params: IdParams }>(
    '/admin/v1/products/:id/activation',
    { config, schema: { tags, operationId: 'retrieveActivation', summary: "A product's activation request", params: IdParams, response: { 200: Activation } } },
    (request) => activations.get(request.params.id),
  );

  app.post<{ Params: IdParams }>(
    '/admin/v1/products/:id/activation/approve',
    {
      config,
      schema: {
        tags,
        operationId: 'approveActivation',
        summary: "Approve a submitted request: live mode on, and the live payout account set to the request's",
        params: IdParams,
        response: { 200: Activation },
      },
    },
    (request) => actions.approve(API_ACTOR, request.params.id),
  );

  app.post<{ Params: IdParams; Body: RejectBody }>(
    '/admin/v1/products/:id/activation/reject',
    {
      config,
      schema: {
        tags,
        operationId: 'rejectActivation',
        summary: 'Reject a submitted request with what the merchant must correct; they may submit again',
        params: IdParams,
        body: RejectBody,
        response: { 200: Activation },
      },
    },
    (request) => actions.reject(API_ACTOR, request.params.id, request.body.reason),
  );
};
