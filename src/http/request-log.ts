// Each merchant call, as the request log keeps it: method, path (tokens redacted, no query), status, duration, request
// id and Idempotency-Key, both with card numbers masked. Noted when the answer has been sent; written later by the
// request log's worker.
import type { FastifyInstance } from 'fastify';
import type { RequestLog } from '../modules/request-log/service.js';
import { IDEMPOTENCY_HEADER } from './idempotency.js';
import { maskCardNumbers, redactUrl } from './logging.js';

const IDEMPOTENCY_KEY_SHOWN_MAX = 255;

export function recordMerchantCalls(app: FastifyInstance, log: RequestLog): void {
  app.addHook('onResponse', async (request, reply) => {
    const merchant = request.merchant;
    if (!merchant || request.routeOptions.config.requestLog === false) return;
    const key = request.headers[IDEMPOTENCY_HEADER];
    log.record({
      id: request.id,
      productId: merchant.productId,
      livemode: merchant.livemode,
      method: request.method,
      path: redactUrl(request.url.split('?')[0]!),
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime),
      // Masked before it is cut, so that the cut cannot leave part of a card number too short to be recognised.
      idempotencyKey: typeof key === 'string' ? maskCardNumbers(key).slice(0, IDEMPOTENCY_KEY_SHOWN_MAX) : null,
      at: new Date(),
    });
  });
}
