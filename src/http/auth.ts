import type { FastifyRequest } from 'fastify';
import { SECRET_KEY_PATTERN } from '../modules/products/service.js';
import type { Merchant, Scope } from '../core/merchant.js';
import type { ApiKeyCache, LookupGate } from '../modules/products/key-cache.js';
import { secretsEqual, sha256 } from '../lib/secrets.js';
import { ApiError } from '../core/errors.js';

/** Who a merchant request acts for. Every merchant query filters by `productId` and `livemode`. */
/** How a route is authorized, declared in its `config`. */
export type RouteAuth = { kind: 'merchant'; scope?: Scope } | { kind: 'admin' } | { kind: 'public' };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
    /**
     * Whether the route takes an Idempotency-Key: required, or optional; `none` for a command that takes none (a DELETE,
     * repeatable as it is); absent, the route runs no command.
     */
    idempotencyKey?: 'required' | 'optional' | 'none';
    /** False: the route's calls are left out of the request log (reading the log itself). */
    requestLog?: false;
  }
  interface FastifyRequest {
    merchant: Merchant | null;
  }
}

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
  return match ? match[1]! : null;
}

/**
 * A merchant's secret key: `Authorization: Bearer sk_…`, or HTTP Basic with the key as user name and no password, as
 * `curl -u sk_test_…:` sends it (the habit Stripe users bring). Null without either.
 */
function secretKeyOf(request: FastifyRequest): string | null {
  const bearer = bearerToken(request);
  if (bearer !== null) return bearer;
  const basic = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(String(request.headers.authorization ?? '').trim());
  if (!basic) return null;
  const [user, ...password] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
  return user && password.join(':') === '' ? user : null;
}

const unauthenticated = (message: string) =>
  new ApiError('UNAUTHENTICATED', message, { headers: { 'WWW-Authenticate': 'Bearer realm="tolov"' } });

/**
 * The merchant of a request's key. Every key the cache does not know is looked up, so that a valid one is never taken
 * for a guess; the lookup waits for `gate`'s turn when given.
 */
export async function authenticateMerchant(keys: ApiKeyCache, request: FastifyRequest, scope: Scope | undefined, gate?: LookupGate): Promise<Merchant> {
  const secret = secretKeyOf(request);
  if (secret === null) {
    throw unauthenticated('Missing API key: send Authorization: Bearer sk_test_… (or sk_live_…), or the key as the Basic user name: curl -u sk_test_…:');
  }
  if (!SECRET_KEY_PATTERN.test(secret)) throw unauthenticated('Malformed API key: secret keys look like sk_test_… or sk_live_…');
  const row = await keys.find(sha256(secret), gate);
  if (!row || row.revoked_at !== null) throw unauthenticated('Invalid API key: unknown or revoked');
  if (row.expires_at !== null && row.expires_at.getTime() <= Date.now()) throw unauthenticated('Expired API key: it was rolled; use its replacement');
  if (scope !== undefined && !row.scopes.includes(scope)) {
    throw new ApiError('SCOPE_REQUIRED', `This API key lacks the scope ${scope}`);
  }
  keys.used(row.id);
  return {
    actor: { kind: 'api_key', keyId: row.id },
    productId: row.product_id,
    productName: row.product_name,
    livemode: row.livemode,
    scopes: row.scopes,
    feeBps: row.fee_bps,
    receiptRequired: row.receipt_required,
    suspended: row.suspended,
  };
}

/** The operator API exists only when a token is configured; otherwise it is indistinguishable from no route. */
export function authenticateAdmin(adminToken: string | null, request: FastifyRequest): void {
  if (adminToken === null) throw routeNotFound(request);
  const given = bearerToken(request);
  if (given === null || !secretsEqual(given, adminToken)) {
    throw new ApiError('UNAUTHENTICATED', 'Missing or invalid operator token', {
      headers: { 'WWW-Authenticate': 'Bearer realm="tolov-admin"' },
    });
  }
}

export function routeNotFound(request: FastifyRequest): ApiError {
  return new ApiError('NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`);
}

/** The merchant of a route declared `auth: merchant`; a route without it asking for one is a programming error. */
export function merchantOf(request: FastifyRequest): Merchant {
  if (request.merchant === null) throw new Error(`route ${request.routeOptions.url} is not declared auth: merchant`);
  return request.merchant;
}
