import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { listEnvelope } from '../../core/pagination.js';
import { AMOUNT_MAX, Timestamp } from '../../core/schemas.js';
import { API_ACTOR } from '../../modules/operators/service.js';
import { cardSearchOf, hitOf, OBJECT_ID_PATTERN, type SearchHit, type SupportService } from '../../modules/support/service.js';

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ pattern: OBJECT_ID_PATTERN, description: 'an object id: pi_…, ord_…, re_…, po_…, rcpt_…, evt_…, ltx_…, we_… or card_…' })),
    last4: Type.Optional(Type.String({ pattern: '^[0-9]{4}$', description: "the card's last four digits" })),
    amount: Type.Optional(Type.Integer({ minimum: 1, maximum: AMOUNT_MAX, description: 'In tiyin' })),
    day: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'a Tashkent calendar day (UTC+5), YYYY-MM-DD' })),
  },
  { additionalProperties: false },
);
type SearchQuery = Static<typeof SearchQuery>;

const SearchResult = Type.Object(
  {
    object: Type.String({ description: '`payment_intent`, `order`, `refund`, `payout`, `receipt`, `event`, `ledger_transaction`, `webhook_endpoint` or `card`' }),
    id: Type.String(),
    product: Type.String(),
    livemode: Type.Boolean(),
    status: Type.Union([Type.String(), Type.Null()], { description: 'null for an object without one (an event)' }),
    amount: Type.Union([Type.Integer(), Type.Null()], { description: 'In tiyin; null for an object without one' }),
    created: Timestamp,
  },
  { title: 'SearchResult' },
);

const present = (hit: SearchHit) => ({
  object: hit.object,
  id: hit.id,
  product: hit.productId,
  livemode: hit.livemode,
  status: hit.status,
  amount: hit.amount,
  created: hit.created.toISOString(),
});

/** Support's search for the operator token: the console's, recorded in the audit log as the token's. */
export const supportRoutes: FastifyPluginAsync<{ support: SupportService }> = async (app, { support }) => {
  app.get<{ Querystring: SearchQuery }>(
    '/admin/v1/search',
    {
      config: { auth: { kind: 'admin' } },
      schema: {
        tags: ['operator'],
        operationId: 'searchPayments',
        summary: 'Find any object by its id, or payments by card, amount and day, across every product and both modes',
        description:
          'Give `q` (an id: at most one result), or `last4`, `amount` and `day` together (payments made that Tashkent day, newest first, at most 50; `has_more` says there were more). Each search is written to the audit log.',
        querystring: SearchQuery,
        response: { 200: listEnvelope(SearchResult) },
      },
    },
    async (request) => {
      const { q, last4, amount, day } = request.query;
      const byCard = last4 !== undefined || amount !== undefined || day !== undefined;
      if (q !== undefined && byCard) throw new ApiError('VALIDATION_ERROR', 'Give q, or last4, amount and day: not both', { param: 'q' });
      if (q !== undefined) {
        const found = await support.find(API_ACTOR, q);
        return { object: 'list' as const, data: found ? [present(hitOf(found))] : [], has_more: false };
      }
      const checked = cardSearchOf({ last4: last4 ?? '', amount: amount ?? null, day: day ?? '' });
      if (!checked.ok) throw new ApiError('VALIDATION_ERROR', `Give q, or last4, amount and day together (${checked.wrong.join(', ')} missing or not valid)`, { param: checked.wrong[0]! });
      const { hits, hasMore } = await support.payments(API_ACTOR, checked.search);
      return { object: 'list' as const, data: hits.map(present), has_more: hasMore };
    },
  );
};
