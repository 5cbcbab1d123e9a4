// How an error is answered: its status, its headers and its body in the one error format, with the request's id.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../core/errors.js';

export function sendError(error: ApiError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  for (const [name, value] of Object.entries(error.extra.headers ?? {})) reply.header(name, value);
  return reply.code(error.statusCode).type('application/json; charset=utf-8').send(JSON.stringify(error.body(request.id)));
}
