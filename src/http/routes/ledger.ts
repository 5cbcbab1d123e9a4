import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { merchantOf } from '../auth.js';
import type { LedgerService } from '../../modules/ledger/service.js';

const Balance = Type.Object(
  {
    object: Type.Literal('balance'),
    available: Type.Integer({ description: 'Settled, in tiyin; may be negative after refunds' }),
    pending: Type.Integer({ description: 'Succeeded payments net of fees, not yet settled, in tiyin' }),
    currency: Type.Literal('UZS'),
    livemode: Type.Boolean(),
  }, { title: 'Balance' },
);

export const ledgerRoutes: FastifyPluginAsync<{ ledger: LedgerService }> = async (app, { ledger }) => {
  app.get(
    '/v1/balance',
    {
      config: { auth: { kind: 'merchant' } },
      schema: { tags: ['balance'], operationId: 'retrieveBalance', summary: 'The balance, summed from the ledger', response: { 200: Balance } },
    },
    (request) => ledger.balance(merchantOf(request)),
  );
};
