import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { ReconciliationReport } from '../../modules/reconciliation/schema.js';
import { isReportDay, REPORT_DAY_RULE, type ReconciliationService } from '../../modules/reconciliation/service.js';

const ReportQuery = Type.Object(
  {
    date: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'a UTC day, YYYY-MM-DD' }),
    mode: Type.Union([Type.Literal('live'), Type.Literal('test')], { default: 'live' }),
  },
  { additionalProperties: false },
);
type ReportQuery = Static<typeof ReportQuery>;

export const reconciliationRoutes: FastifyPluginAsync<{ reconciliation: ReconciliationService }> = async (app, { reconciliation }) => {
  app.get<{ Querystring: ReportQuery }>(
    '/admin/v1/reconciliation',
    {
      config: { auth: { kind: 'admin' } },
      schema: { tags: ['operator'], operationId: 'retrieveReconciliationReport', summary: "Compare a day's debits and refunds with the bank's record, and its fiscalized receipts with the fiscal module's", querystring: ReportQuery, response: { 200: ReconciliationReport } },
    },
    (request) => {
      if (!isReportDay(request.query.date)) throw new ApiError('VALIDATION_ERROR', `date must be ${REPORT_DAY_RULE}`, { param: 'date' });
      return reconciliation.report(request.query.date, request.query.mode === 'live');
    },
  );
};
