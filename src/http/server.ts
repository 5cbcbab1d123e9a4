// The HTTP server every route runs in: limits, request ids and logs, JSON bodies, authentication, the one error
// format, and the OpenAPI description. The routes themselves are plugins that `app.ts` registers on it.
import net from 'node:net';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import type { Config } from '../config.js';
import { ApiError, isDatabaseUnavailable, serviceUnavailable } from '../core/errors.js';
import { actorName } from '../core/merchant.js';
import { newId } from '../core/ids.js';
import { RateLimiter } from '../core/rate-limit.js';
import type { ApiKeyCache, LookupGate } from '../modules/products/key-cache.js';
import { Lane } from '../lib/lane.js';
import { authenticateAdmin, authenticateMerchant, routeNotFound, type RouteAuth } from './auth.js';
import { clientError, frameworkError } from './client-errors.js';
import { sendError } from './error-reply.js';
import { strictJsonText } from './json-body.js';
import { loggerOptions } from './logging.js';
import { limitRequestsInFlight, type RequestsInFlight } from './in-flight.js';
import { describeDocument, describeRoute, withoutOperatorCalls } from './openapi.js';
import { checkRequestText, validatorCompiler } from './validation.js';

/** Room for a receipt's 100 lines with titles in Cyrillic escaped as \uXXXX (about 87 KB), as many JSON encoders write them. */
export const BODY_LIMIT_BYTES = 128 * 1024;
const CONNECTION_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_TIMEOUT_MS = 72_000;
const REQUEST_TIMEOUT_MS = 60_000;
/** Failed operator authentications a minute, from every address together, before further failures answer 429. */
const OPERATOR_AUTH_FAILURES_PER_MINUTE = 100;
/**
 * API-key lookups for addresses past their failures, all such addresses together: at most this many at once, and this
 * many waiting; past that, such a request answers 429 without a lookup.
 */
const GUESSING_LOOKUPS_MAX = 2;
const GUESSING_WAITING_MAX = 100;
/** On a graceful stop, how long a connection left idle by its client stays open (a request may be on its way). */
const IDLE_CONNECTION_GRACE_MS = 1_000;


function toApiError(error: FastifyError & { code?: string }): ApiError {
  if (error instanceof ApiError) return error;
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('BODY_TOO_LARGE', `The body must be at most ${BODY_LIMIT_BYTES} bytes`);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('VALIDATION_ERROR', 'Content-Length does not match the body');
  }
  if (isDatabaseUnavailable(error)) return serviceUnavailable();
  const status = error.statusCode ?? 500;
  if (status === 404) return new ApiError('NOT_FOUND', error.message);
  if (status >= 400 && status < 500) return new ApiError('VALIDATION_ERROR', error.message);
  return new ApiError('INTERNAL_ERROR', 'Internal error; nothing about it is your fault. Retry with the same Idempotency-Key.');
}

/** Every route states how it is authorized; one that does not is a programming error caught at start. */
function declareAuth(app: FastifyInstance, config: Config): void {
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (!auth) throw new Error(`route ${route.method} ${route.url} declares no auth`);
    // The description names each route's credential; the operator API is left out of it when it is off (it answers 404).
    const security = auth.kind === 'admin' ? [{ operatorToken: [] }] : auth.kind === 'public' ? [] : undefined;
    const hide = auth.kind === 'admin' && config.adminToken === null;
    if (security || hide) route.schema = { ...route.schema, ...(security ? { security } : {}), ...(hide ? { hide: true } : {}) };
  });

}

/** JSON bodies: an empty body is no body (POST …/cancel with a JSON content type); prototype poisoning is refused. */
function parseJsonBodies(app: FastifyInstance): void {
  // JSON is the only body type; Fastify's own text/plain parser goes too.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text: string, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      return done(new ApiError('UNSUPPORTED_MEDIA_TYPE', 'JSON bodies are UTF-8: send Content-Type: application/json (charset=utf-8 or none)'), undefined);
    }
    if (text.trim() === '') return done(null, undefined);
    let body: unknown;
    try {
      body = JSON.parse(strictJsonText(text));
    } catch (error) {
      if (error instanceof ApiError) return done(error, undefined);
      return done(new ApiError('VALIDATION_ERROR', 'The body is not valid JSON', { param: 'body' }), undefined);
    }
    try {
      if (body !== null && typeof body === 'object') secureJson.scan(body, { protoAction: 'error', constructorAction: 'error' });
    } catch {
      return done(new ApiError('VALIDATION_ERROR', 'The body must not use the keys __proto__ or constructor.prototype', { param: 'body' }), undefined);
    }
    done(null, body);
  });

}

/**
 * Authenticates each request as its route declares. A right credential passes whatever the failures; wrong ones are
 * counted per client address and, for the operator API, from every address together, and past the limit they answer
 * 429 instead of 401: someone else's guessing from the same address (everyone behind one proxy) never locks a real key
 * out, though its lookup waits for a turn in the guessing lane, and is refused 429 while that lane is full.
 */
function authenticateRequests(app: FastifyInstance, config: Config, keys: ApiKeyCache): void {
  // Per API key, in this process: a runaway integration slows itself down, not every merchant.
  const perKey = new RateLimiter(config.keyRequestsPerMinute, 60_000);
  const failuresPerAddress = new RateLimiter(config.authFailuresPerMinute, 60_000);
  const operatorFailures = new RateLimiter(OPERATOR_AUTH_FAILURES_PER_MINUTE, 60_000);
  const guessing = new Lane(GUESSING_LOOKUPS_MAX, GUESSING_WAITING_MAX);
  const authenticate = async (request: FastifyRequest, auth: RouteAuth): Promise<void> => {
    if (auth.kind === 'merchant') {
      // From an address past its failures, a key the cache does not know is looked up in the guessing lane: the right
      // key still passes, and the guesses cost the database a few lookups at a time.
      const refusal = failuresPerAddress.refusal(request.ip);
      const gate: LookupGate | undefined = refusal === null ? undefined : (lookup) => guessing.run(lookup, () => refusal);
      request.merchant = await authenticateMerchant(keys, request, auth.scope, gate);
      perKey.hit(actorName(request.merchant.actor));
    } else if (auth.kind === 'admin') {
      authenticateAdmin(config.adminToken, request);
    }
  };
  app.addHook('onRequest', async (request, reply) => {
    reply.header('Request-Id', request.id);
    const auth = request.routeOptions.config.auth;
    if (!auth) return;
    try {
      await authenticate(request, auth);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'UNAUTHENTICATED') {
        failuresPerAddress.hit(request.ip);
        if (auth.kind === 'admin') operatorFailures.hit('operator');
      }
      throw error;
    }
  });
}

/** The OpenAPI description of every route registered after it (the operator's calls for the operator only), and /healthz. */
async function describeApi(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tolov API',
        version: '1',
        description: 'Payments in UZS: orders paid on a hosted page, charges to saved cards, refunds, fiscal receipts, balance, payouts and webhooks.',
      },
      servers: [{ url: config.checkoutUrl }],
      // In the order a merchant's developer meets them; the operator's calls last.
      tags: [
        { name: 'orders', description: 'Orders the buyer pays on the hosted payment page' },
        {
          name: 'payment links',
          description:
            "Links to share or print that sell without code: each buyer who presses Pay on the link's page gets an order of their own (`GET /merchant/v1/orders?paymentLink=plink_…` lists them)",
        },
        { name: 'card bindings', description: "Saving a buyer's card, confirmed by SMS code on the hosted page" },
        { name: 'cards', description: 'Saved cards' },
        { name: 'charges', description: 'Charges to saved cards (payment intents)' },
        { name: 'payment intents (legacy)', description: 'The older two-step form of a charge: create, then confirm' },
        { name: 'refunds', description: 'Refunds of succeeded payments, in full' },
        { name: 'receipts', description: "Fiscal receipts of payments and their refunds, registered with the tax authority's fiscal module after the money moved" },
        { name: 'balance', description: 'What the product holds, from the ledger' },
        {
          name: 'payouts',
          description:
            "The available balance paid out to the product's bank account: automatically every day (the whole balance, from a minimum), or when asked for. " +
            'Only an owner sets the account, in the dashboard; a change holds payouts for 24 hours. An automatic payout names the statement rows it paid out (`GET /v1/balance_transactions?payout=po_…`), which sum to its amount',
        },
        { name: 'events', description: 'What happened, as sent to webhook endpoints; also as a live stream' },
        { name: 'webhooks', description: 'Webhook endpoints and their deliveries' },
        { name: 'request log', description: "The product's latest API calls in the key's mode, as the dashboard shows them" },
        { name: 'test helpers', description: 'Test mode only: cause at once what a buyer, the bank or time would' },
        { name: 'public card capture', description: "The hosted pages' own calls, authorized by the session token in the path" },
        { name: 'operator', description: "The operator's calls (TOLOV_ADMIN_TOKEN): products, keys, branding, reconciliation, timings" },
      ],
      components: {
        securitySchemes: {
          secretKey: { type: 'http', scheme: 'bearer', description: 'sk_test_… or sk_live_…' },
          ...(config.adminToken === null ? {} : { operatorToken: { type: 'http', scheme: 'bearer', description: 'TOLOV_ADMIN_TOKEN' } }),
        },
      },
      security: [{ secretKey: [] }],
    },
    transform: describeRoute,
    transformObject: (document) => describeDocument(document as unknown as { openapiObject: Record<string, unknown> }),
  });

  app.get('/healthz', { config: { auth: { kind: 'public' }, inFlightLimit: false }, schema: { hide: true } }, async () => ({ status: 'ok' }));
  let forEveryone: Record<string, unknown> | undefined;
  app.get('/openapi.json', { config: { auth: { kind: 'public' } }, schema: { hide: true } }, async () => {
    forEveryone ??= withoutOperatorCalls(app.swagger() as unknown as Record<string, unknown>);
    return forEveryone;
  });
  app.get('/admin/v1/openapi.json', { config: { auth: { kind: 'admin' } }, schema: { hide: true } }, async () => app.swagger());
}

/**
 * A connection's idle timeout (CONNECTION_TIMEOUT_MS) closes a connection that sends nothing or reads nothing, never
 * one whose request has been read and is being worked on: a slow answer (a live charge while the bank's call is
 * retried) would otherwise be lost with its connection. It is set again once the answer starts to be sent, for a
 * client that does not read it; Node sets the keep-alive timeout once it is sent. An event stream sets its own.
 */
function keepAnswering(app: FastifyInstance): void {
  app.addHook('preHandler', async (request) => {
    request.raw.socket.setTimeout?.(0);
  });
  app.addHook('onSend', async (request) => {
    request.raw.socket.setTimeout?.(CONNECTION_TIMEOUT_MS);
  });
}

/** Once `app.close()` begins (after stopListening's grace), a request still arriving answers 503: another process serves it. */
function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    if (!closing) return;
    reply.header('Request-Id', request.id);
    throw serviceUnavailable();
  });
}

/**
 * Closes the listener without cutting an open connection, since a request may be on its way on any of them: every
 * answer from now on closes its connection, so the client's next request is refused, never reset. Resolves once no
 * connection is left, or after IDLE_CONNECTION_GRACE_MS; `app.close()` then ends the rest.
 */
export async function stopListening(app: FastifyInstance): Promise<void> {
  const idleMs = IDLE_CONNECTION_GRACE_MS;
  app.server.keepAliveTimeout = idleMs;
  app.server.prependListener('request', (_request, response) => response.setHeader('Connection', 'close'));
  await new Promise<void>((resolve) => {
    const grace = setTimeout(resolve, idleMs);
    // http.Server's close() also closes the idle connections, where a request may be on its way; net.Server's does not.
    net.Server.prototype.close.call(app.server, () => {
      clearTimeout(grace);
      resolve();
    });
  });
}

/** A server with everything but the capabilities' routes; nothing listens until the caller says so. */
export async function createServer(config: Config, keys: ApiKeyCache): Promise<{ app: FastifyInstance; inFlight: RequestsInFlight }> {
  const app = Fastify({
    logger: loggerOptions(config.logLevel),
    genReqId: () => newId('req'),
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT_BYTES,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Requests arriving while it closes are refused by refuseWhileClosing, in the API's error format.
    return503OnClosing: false,
    // Behind the proxies named, the client address every throttle counts is the one they report.
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    routerOptions: { maxParamLength: 128 },
    frameworkErrors: frameworkError,
    clientErrorHandler: clientError,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.decorateRequest('merchant', null);
  refuseWhileClosing(app);
  keepAnswering(app);
  const inFlight = limitRequestsInFlight(app, config.requestsInFlightMax, config.requestsInFlightPerClientMax);
  declareAuth(app, config);
  parseJsonBodies(app);
  authenticateRequests(app, config, keys);
  app.addHook('preValidation', async (request) => checkRequestText(request));
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error);
    // A 503 is a moment without the database or a process stopping, which the client retries; not a defect.
    if (apiError.statusCode === 503) request.log.warn({ err: error }, 'request refused: service unavailable');
    else if (apiError.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    return sendError(apiError, request, reply);
  });
  app.setNotFoundHandler((request, reply) => sendError(routeNotFound(request), request, reply));

  await describeApi(app, config);
  return { app, inFlight };
}
