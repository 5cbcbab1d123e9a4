import type { FastifyPluginAsync } from 'fastify';
import { CheckList } from '../../modules/checks/schema.js';
import type { ChecksService } from '../../modules/checks/service.js';

export const checkRoutes: FastifyPluginAsync<{ checks: ChecksService }> = async (app, { checks }) => {
  app.get(
    '/admin/v1/checks',
    {
      config: { auth: { kind: 'admin' } },
      schema: {
        tags: ['operator'],
        operationId: 'listMoneyChecks',
        summary: 'The money checks: what must hold for the books to be right, each ok or with what is wrong',
        description:
          'For monitoring: alert when any `ok` is false. Reads the whole ledger and compares the last two days with the bank, so poll it every few minutes, not every second.',
        response: { 200: CheckList },
      },
    },
    () => checks.all(),
  );
};
