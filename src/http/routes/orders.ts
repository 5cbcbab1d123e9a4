import type { FastifyPluginAsync } from 'fastify';
import { merchantOf } from '../auth.js';
import type { IdempotentReplies } from '../idempotency.js';
import { listEnvelope } from '../../core/pagination.js';
import { IdParams } from '../../core/schemas.js';
import { CreateOrderBody, Order, OrdersQuery } from '../../modules/orders/schema.js';
import type { OrdersService } from '../../modules/orders/service.js';

export const orderRoutes: FastifyPluginAsync<{ orders: OrdersService; idempotent: IdempotentReplies }> = async (app, { orders, idempotent }) => {
  const auth = { kind: 'merchant', scope: 'sale_of_goods' } as const;
  const tags = ['orders'];

  app.post<{ Body: CreateOrderBody }>(
    '/merchant/v1/orders',
    {
      config: { auth, idempotencyKey: 'required' },
      schema: {
        tags,
        operationId: 'createOrder',
        summary: 'Create an order and its payment link',
        description:
          'Send the buyer to `paymentUrl`, the hosted page where they pay. The outcome comes as the event `order.paid` or `order.failed`, ' +
          'or `order.expired` once `expiresAt` passes unpaid.',
        body: CreateOrderBody,
        response: { 201: Order },
      },
    },
    (request, reply) =>
      idempotent.send(request, reply, (invocation) => orders.create(invocation, request.body)),
  );

  app.get<{ Params: IdParams }>(
    '/merchant/v1/orders/:id',
    { config: { auth }, schema: { tags, operationId: 'retrieveOrder', summary: 'Read an order', params: IdParams, response: { 200: Order } } },
    (request) => orders.get(merchantOf(request), request.params.id),
  );

  app.post<{ Params: IdParams }>(
    '/merchant/v1/orders/:id/cancel',
    {
      config: { auth, idempotencyKey: 'optional' },
      schema: {
        tags,
        operationId: 'cancelOrder',
        summary: 'Cancel an unpaid order',
        description: 'Only a `PENDING` order can be canceled, and not while the buyer is paying it (its debit is in progress).',
        params: IdParams,
        response: { 200: Order },
      },
    },
    (request, reply) =>
      idempotent.send(request, reply, (invocation) => orders.cancel(invocation, request.params.id)),
  );

  app.get<{ Querystring: OrdersQuery }>(
    '/merchant/v1/orders',
    {
      config: { auth },
      schema: { tags, operationId: 'listOrders', summary: 'List orders, newest first', querystring: OrdersQuery, response: { 200: listEnvelope(Order) } },
    },
    (request) => orders.list(merchantOf(request), request.query),
  );
};
