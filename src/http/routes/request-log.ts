import type { FastifyPluginAsync } from 'fastify';
import { listEnvelope } from '../../core/pagination.js';
import { RequestLogEntry, RequestLogQuery } from '../../modules/request-log/schema.js';
import type { RequestLog } from '../../modules/request-log/service.js';
import { merchantOf } from '../auth.js';

export const requestLogRoutes: FastifyPluginAsync<{ requestLog: RequestLog }> = async (app, { requestLog }) => {
  app.get<{ Querystring: RequestLogQuery }>(
    '/v1/request_logs',
    {
      // Reading the log is left out of it: `tolov logs tail` reads it every second.
      config: { auth: { kind: 'merchant' }, requestLog: false },
      schema: {
        tags: ['request log'],
        operationId: 'listRequestLogs',
        summary: "The key's product's latest 1,000 API calls in its mode, newest first: no bodies, no secrets",
        querystring: RequestLogQuery,
        response: { 200: listEnvelope(RequestLogEntry) },
      },
    },
    (request) => requestLog.list(merchantOf(request), request.query),
  );
};
