// Where this process's time goes, for the operator: each phase of the merchant POSTs by route, each group write of the
// test rail's record (the wait for the group before, the write), and the event loop's delay.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Timings } from '../../lib/timings.js';

const Millis = Type.Number({ description: 'milliseconds' });

const TimingsReport = Type.Object(
  {
    object: Type.Literal('timings'),
    since: Type.String({ format: 'date-time', description: 'When this process started counting: its start, or the last reset' }),
    eventLoopDelay: Type.Object({ p50Ms: Millis, p99Ms: Millis, maxMs: Millis }, { description: 'How late the event loop ran its timers' }),
    series: Type.Array(
      Type.Object({
        name: Type.String({ description: '`POST /subscribe/v1/charges · debit: call`, `test rail operations: group write (execute and commit)`, …' }),
        count: Type.Integer(),
        meanMs: Millis,
        p50Ms: Millis,
        p99Ms: Millis,
      }),
      { maxItems: 256 },
    ),
  },
  { title: 'Timings' },
);

export const timingRoutes: FastifyPluginAsync<{ timings: Timings }> = async (app, { timings }) => {
  const config = { auth: { kind: 'admin' } } as const;
  const tags = ['operator'];
  const description = "This process's figures only: with several processes, read each one's.";
  app.get(
    '/admin/v1/timings',
    { config, schema: { tags, operationId: 'retrieveTimings', summary: 'Where the time of requests goes, in this process', description, response: { 200: TimingsReport } } },
    async () => ({ object: 'timings' as const, ...timings.snapshot() }),
  );
  app.post(
    '/admin/v1/timings/reset',
    { config, schema: { tags, operationId: 'resetTimings', summary: 'Start counting afresh, in this process', description, response: { 200: TimingsReport } } },
    async () => {
      timings.reset();
      return { object: 'timings' as const, ...timings.snapshot() };
    },
  );
};
