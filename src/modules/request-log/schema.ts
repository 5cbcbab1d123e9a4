import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from '../../core/schemas.js';
import { PageQuery } from '../../core/pagination.js';

export const RequestLogEntry = Type.Object(
  {
    id: Type.String({ description: 'The request id (req_…), as the Request-Id header of its answer' }),
    object: Type.Literal('request_log'),
    method: Type.String(),
    path: Type.String({ description: 'Without the query string' }),
    status: Type.Integer(),
    durationMs: Type.Integer(),
    idempotencyKey: Type.Union([Type.String(), Type.Null()]),
    livemode: Type.Boolean(),
    created: Timestamp,
  },
  { title: 'RequestLogEntry' },
);
export type RequestLogEntry = Static<typeof RequestLogEntry>;

export const RequestLogQuery = Type.Object(
  {
    ...PageQuery.properties,
    ending_before: Type.Optional(Type.String({ maxLength: 64, description: 'Newer than this request (req_…): the ones right after it, newest first' })),
  },
  { additionalProperties: false },
);
export type RequestLogQuery = Static<typeof RequestLogQuery> & { limit: number };
