import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/db.js';
import type { Rails } from '../../rails/index.js';
import { ApiError } from '../../http/errors.js';
import { isReportDay, reconciliationReport, REPORT_DAY_RULE } from './service.js';

const ReportQuery = Type.Object(
  {
    date: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'a UTC day, YYYY-MM-DD' }),
    mode: Type.Union([Type.Literal('live'), Type.Literal('test')], { default: 'live' }),
  },
  { additionalProperties: false },
);
type ReportQuery = Static<typeof ReportQuery>;

export function reconciliationRoutes(app: FastifyInstance, db: Db, rails: Rails): void {
  app.get<{ Querystring: ReportQuery }>(
    '/admin/v1/reconciliation',
    {
      config: { auth: { kind: 'admin' } },
      schema: { tags: ['operator'], summary: "Compare a day's debits and refunds with the bank's record", querystring: ReportQuery },
    },
    (request) => {
      if (!isReportDay(request.query.date)) throw new ApiError('VALIDATION_ERROR', `date must be ${REPORT_DAY_RULE}`, { param: 'date' });
      return reconciliationReport(db, rails, request.query.date, request.query.mode === 'live');
    },
  );
}
