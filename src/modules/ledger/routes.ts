import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/db.js';
import { merchantOf } from '../../http/auth.js';
import { balanceOf } from './service.js';

const Balance = Type.Object(
  {
    object: Type.Literal('balance'),
    available: Type.Integer({ description: 'Settled, in tiyin; may be negative after refunds' }),
    pending: Type.Integer({ description: 'Succeeded payments net of fees, not yet settled, in tiyin' }),
    currency: Type.Literal('UZS'),
    livemode: Type.Boolean(),
  },
);

export function ledgerRoutes(app: FastifyInstance, db: Db): void {
  app.get(
    '/v1/balance',
    {
      config: { auth: { kind: 'merchant' } },
      schema: { tags: ['balance'], summary: 'The balance, summed from the ledger', response: { 200: Balance } },
    },
    (request) => balanceOf(db, merchantOf(request)),
  );
}
