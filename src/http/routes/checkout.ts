import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { RateLimiter } from '../../core/rate-limit.js';
import { CardSubmission, CodeSubmission, SessionState, TokenParams } from '../../modules/checkout/schema.js';
import type { CheckoutService } from '../../modules/checkout/service.js';

const CORS_MAX_AGE_SECONDS = 600;

export interface CheckoutLimits {
  sessionRequestsPerMinute: number;
  addressRequestsPerMinute: number;
}

const config = { auth: { kind: 'public' } } as const;
const tags = ['public card capture'];
const security: [] = [];

/** Any origin may call without credentials; a browser's preflight is answered without touching a session. */
function allowAnyOrigin(app: FastifyInstance): void {
  app.options('/checkout/v1/sessions/*', { config, schema: { hide: true } }, async (_request, reply) =>
    reply
      .code(204)
      .header('Access-Control-Allow-Origin', '*')
      .header('Access-Control-Allow-Methods', 'GET, POST')
      .header('Access-Control-Allow-Headers', 'Content-Type')
      .header('Access-Control-Max-Age', String(CORS_MAX_AGE_SECONDS))
      .send(),
  );
}

/** What every session call passes first: its headers, and the rates per address and per session. */
function sessionGuard(limits: CheckoutLimits) {
  // A buyer needs a few dozen calls to finish; these bound a script guessing codes or testing cards.
  const perToken = new RateLimiter(limits.sessionRequestsPerMinute, 60_000);
  const perAddress = new RateLimiter(limits.addressRequestsPerMinute, 60_000);
  return async (request: FastifyRequest<{ Params: TokenParams }>, reply: FastifyReply) => {
    reply.header('Access-Control-Allow-Origin', '*');
    reply.header('Cache-Control', 'no-store');
    perAddress.hit(request.ip);
    perToken.hit(request.params.token);
  };
}

/** The public card-capture calls: no API key, the session token in the path, callable from any origin without credentials. */
export const checkoutRoutes: FastifyPluginAsync<{ checkout: CheckoutService; limits: CheckoutLimits }> = async (app, { checkout, limits }) => {
  allowAnyOrigin(app);
  const guard = sessionGuard(limits);

  app.get<{ Params: TokenParams }>(
    '/checkout/v1/sessions/:token',
    {
      config,
      onRequest: guard,
      schema: { tags, security, operationId: 'retrieveCheckoutSession', summary: 'The session state; nothing sensitive', params: TokenParams, response: { 200: SessionState } },
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
        operationId: 'submitCheckoutCard',
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
        operationId: 'submitCheckoutCode',
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
      schema: { tags, security, operationId: 'resendCheckoutCode', summary: 'Send the code again', params: TokenParams, response: { 200: SessionState } },
    },
    (request) => checkout.resendCode(request.params.token),
  );
};
