import type { FastifyPluginAsync } from 'fastify';
import { merchantOf } from '../auth.js';
import { listEnvelope } from '../../core/pagination.js';
import { IdParams } from '../../core/schemas.js';
import { Balance, BalanceTransaction, BalanceTransactionsQuery } from '../../modules/ledger/schema.js';
import type { LedgerService } from '../../modules/ledger/service.js';
import { PayoutAccount } from '../../modules/payouts/schema.js';
import type { PayoutsService } from '../../modules/payouts/service.js';

export const ledgerRoutes: FastifyPluginAsync<{ ledger: LedgerService; payouts: PayoutsService }> = async (app, { ledger, payouts }) => {
  app.get(
    '/v1/balance',
    {
      config: { auth: { kind: 'merchant' } },
      schema: { tags: ['balance'], operationId: 'retrieveBalance', summary: 'The balance, summed from the ledger', response: { 200: Balance } },
    },
    (request) => ledger.balance(merchantOf(request)),
  );

  app.get<{ Querystring: BalanceTransactionsQuery }>(
    '/v1/balance_transactions',
    {
      config: { auth: { kind: 'merchant' } },
      schema: {
        tags: ['balance'],
        operationId: 'listBalanceTransactions',
        summary: 'The statement: every movement of the balance, newest first',
        description:
          'The available rows\' `net` sums to the balance\'s `available`, the pending rows\' to its `pending`, at every instant.',
        querystring: BalanceTransactionsQuery,
        response: { 200: listEnvelope(BalanceTransaction) },
      },
    },
    (request) => ledger.statement(merchantOf(request), request.query),
  );

  app.get<{ Params: IdParams }>(
    '/v1/balance_transactions/:id',
    {
      config: { auth: { kind: 'merchant' } },
      schema: { tags: ['balance'], operationId: 'retrieveBalanceTransaction', summary: 'Read one movement of the balance', params: IdParams, response: { 200: BalanceTransaction } },
    },
    (request) => ledger.statementRow(merchantOf(request), request.params.id),
  );

  app.get(
    '/v1/payout_account',
    {
      config: { auth: { kind: 'merchant' } },
      schema: {
        tags: ['balance'],
        operationId: 'retrievePayoutAccount',
        summary: 'Where payouts go, masked to its last four digits',
        description: 'Set and changed only in the dashboard, by an owner with the second factor: no API key can change it.',
        response: { 200: PayoutAccount },
      },
    },
    (request) => payouts.account(merchantOf(request)),
  );
};
