import type { FastifyPluginAsync } from 'fastify';
import { merchantOf } from '../auth.js';
import type { IdempotentReplies } from '../idempotency.js';
import { listEnvelope } from '../../core/pagination.js';
import { IdParams } from '../../core/schemas.js';
import { CreatePaymentLinkBody, PaymentLink, PaymentLinksQuery, UpdatePaymentLinkBody } from '../../modules/payment-links/schema.js';
import type { PaymentLinksService } from '../../modules/payment-links/service.js';

export const paymentLinkRoutes: FastifyPluginAsync<{ paymentLinks: PaymentLinksService; idempotent: IdempotentReplies }> = async (
  app,
  { paymentLinks, idempotent },
) => {
  // A link makes orders: it takes the orders' scope.
  const config = { auth: { kind: 'merchant', scope: 'sale_of_goods' } } as const;
  const tags = ['payment links'];

  app.post<{ Body: CreatePaymentLinkBody }>(
    '/v1/payment_links',
    {
      config: { ...config, idempotencyKey: 'optional' },
      schema: {
        tags,
        operationId: 'createPaymentLink',
        summary: 'Create a payment link',
        description:
          'Share `url` (or print the QR code at `qrSvgUrl`): each buyer who presses Pay on its page gets an order of their own, with `paymentLink` set, and goes on to its hosted payment page. ' +
          'With `amount` the price is fixed, and `receipt` may give the fiscal lines of each order (they must add up to it); without it the buyer enters an amount between `amountMin` and `amountMax`. ' +
          '`quantityMax` caps how many of its orders are `PENDING` or `PAID` at once.',
        body: CreatePaymentLinkBody,
        response: { 201: PaymentLink },
      },
    },
    (request, reply) => idempotent.send(request, reply, (invocation) => paymentLinks.create(invocation, request.body)),
  );

  app.get<{ Params: IdParams }>(
    '/v1/payment_links/:id',
    { config, schema: { tags, operationId: 'retrievePaymentLink', summary: 'Read a payment link', params: IdParams, response: { 200: PaymentLink } } },
    (request) => paymentLinks.get(merchantOf(request), request.params.id),
  );

  app.post<{ Params: IdParams; Body: UpdatePaymentLinkBody }>(
    '/v1/payment_links/:id',
    {
      config: { ...config, idempotencyKey: 'optional' },
      schema: {
        tags,
        operationId: 'updatePaymentLink',
        summary: 'Deactivate or reactivate a payment link, or change its description',
        description: 'A deactivated link opens no more orders (its page says so); orders already opened through it stay as they are.',
        params: IdParams,
        body: UpdatePaymentLinkBody,
        response: { 200: PaymentLink },
      },
    },
    (request, reply) => idempotent.send(request, reply, (invocation) => paymentLinks.update(invocation, request.params.id, request.body ?? {})),
  );

  app.get<{ Querystring: PaymentLinksQuery }>(
    '/v1/payment_links',
    {
      config,
      schema: { tags, operationId: 'listPaymentLinks', summary: 'List payment links, newest first', querystring: PaymentLinksQuery, response: { 200: listEnvelope(PaymentLink) } },
    },
    (request) => paymentLinks.list(merchantOf(request), request.query),
  );
};
