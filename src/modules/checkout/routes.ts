import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RateLimiter } from '../../http/rate-limit.js';
import { CardSubmission, CodeSubmission, SessionState, TokenParams } from './schema.js';
import type { CheckoutService } from './service.js';

const CORS_MAX_AGE_SECONDS = 600;

export interface CheckoutLimits {
  sessionRequestsPerMinute: number;
  addressRequestsPerMinute: number;
}

/** The public card-capture calls: no API key, the session token in the path, callable from any origin without credentials. */
export function checkoutRoutes(app: FastifyInstance, checkout: CheckoutService, limits: CheckoutLimits): void {
  // A buyer needs a few dozen calls to finish; these bound a script guessing codes or testing cards.
  const perToken = new RateLimiter(limits.sessionRequestsPerMinute, 60_000);
  const perAddress = new RateLimiter(limits.addressRequestsPerMinute, 60_000);
  const config = { auth: { kind: 'public' } } as const;
  const tags = ['public card capture'];
  const security: [] = [];

  const guard = async (request: FastifyRequest<{ Params: TokenParams }>, reply: FastifyReply) => {
    reply.header('Access-Control-Allow-Origin', '*');
    reply.header('Cache-Control', 'no-store');
    perAddress.hit(request.ip);
    perToken.hit(request.params.token);
  };

  app.options('/checkout/v1/sessions/*', { config, schema: { hide: true } }, async (_request, reply) =>
    reply
      .code(204)
      .header('Access-Control-Allow-Origin', '*')
      .header('Access-Control-Allow-Methods', 'GET, POST')
      .header('Access-Control-Allow-Headers', 'Content-Type')
      .header('Access-Control-Max-Age', String(CORS_MAX_AGE_SECONDS))
      .send(),
  );

  app.get<{ Params: TokenParams }>(
    '/checkout/v1/sessions/:token',
    {
      config,
      onRequest: guard,
      schema: { tags, security, summary: 'The session state; nothing sensitive', params: TokenParams, response: { 200: SessionState } },
    },
    (request) => checkout.state(request.params.token),
  );

  app.post<{ Params: TokenParams; Body: CardSubmission }>(
    '/checkout/v1/sessions/:token/card',
    {
      config,
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: 'Submit the card; the bank sends a code by SMS (at most 3 cards per session)',
        params: TokenParams,
        body: CardSubmission,
        response: { 200: SessionState },
      },
    },
    (request) => checkout.submitCard(request.params.token, request.body),
  );

  app.post<{ Params: TokenParams; Body: CodeSubmission }>(
    '/checkout/v1/sessions/:token/code',
    {
      config,
      onRequest: guard,
      schema: {
        tags,
        security,
        summary: 'Confirm with the SMS code (at most 5 codes per session)',
        params: TokenParams,
        body: CodeSubmission,
        response: { 200: SessionState },
      },
    },
    (request) => checkout.submitCode(request.params.token, request.body.code),
  );

  app.post<{ Params: TokenParams }>(
    '/checkout/v1/sessions/:token/code/resend',
    {
      config,
      onRequest: guard,
      schema: { tags, security, summary: 'Send the code again', params: TokenParams, response: { 200: SessionState } },
    },
    (request) => checkout.resendCode(request.params.token),
  );
}
