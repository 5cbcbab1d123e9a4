// Requests refused before they reach a route (an unreadable URL, a parameter past its length, HTTP the parser refuses)
// get the same error body and Request-Id as every other answer, and never echo what was sent.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { newId } from '../core/ids.js';
import { ApiError } from '../core/errors.js';

/** Fastify's `frameworkErrors`: its refusals of a URL, in Tolov's shape. */
export function frameworkError(error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
  const refusal =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ApiError('URI_TOO_LONG', 'A path parameter is longer than any id Tolov issues')
      : new ApiError('VALIDATION_ERROR', 'The URL is not valid: it has a malformed percent-escape', { param: 'path' });
  void reply
    .code(refusal.statusCode)
    .header('Request-Id', request.id)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(refusal.body(request.id)));
}

/** Node's `clientError`: HTTP the parser refused, answered on the socket in Tolov's shape, then closed. */
export function clientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('HEADERS_TOO_LARGE', 'The request headers are larger than the server accepts')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('REQUEST_TIMEOUT', 'The request took too long to arrive')
        : new ApiError('VALIDATION_ERROR', 'The request is not valid HTTP');
  const requestId = newId('req');
  const body = JSON.stringify(refusal.body(requestId));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${refusal.statusCode} ${STATUS_CODES[refusal.statusCode]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
