import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
});
afterAll(() => service.stop());

const ERROR_KEYS = ['code', 'error', 'message', 'requestId', 'statusCode'];

function expectErrorShape(reply: { status: number; headers: Record<string, unknown>; body: Record<string, unknown> }, status: number, code: string) {
  expect(reply.status).toBe(status);
  expect(reply.body.statusCode).toBe(status);
  expect(reply.body.code).toBe(code);
  expect(typeof reply.body.error).toBe('string');
  expect(typeof reply.body.message).toBe('string');
  expect(reply.body.requestId).toMatch(/^req_[0-9A-Za-z]{24}$/);
  expect(reply.headers['request-id']).toBe(reply.body.requestId);
  expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
  const extra = Object.keys(reply.body).filter((key) => !ERROR_KEYS.includes(key));
  expect(extra.filter((key) => key !== 'param' && key !== 'failureCode')).toEqual([]);
}

const createOrder = (payload: string, contentType = 'application/json') =>
  service.call({
    method: 'POST',
    url: '/merchant/v1/orders',
    key: merchant.test,
    idempotencyKey: idem(),
    payload,
    headers: { 'content-type': contentType },
  });

describe('one error shape for every failure', () => {
  it('answers an unknown route with 404 NOT_FOUND', async () => {
    const reply = await service.call({ method: 'GET', url: '/merchant/v1/nothing' });
    expectErrorShape(reply, 404, 'NOT_FOUND');
    expect(reply.body.error).toBe('Not Found');
  });

  it('answers an unknown method on a known path with 404 NOT_FOUND', async () => {
    expectErrorShape(await service.call({ method: 'DELETE', url: '/v1/balance', key: merchant.test }), 404, 'NOT_FOUND');
  });

  it('answers bad JSON with 400 VALIDATION_ERROR naming the body', async () => {
    const reply = await createOrder('{"amount": 100');
    expectErrorShape(reply, 400, 'VALIDATION_ERROR');
    expect(reply.body.param).toBe('body');
    expect(reply.body.message).toBe('The body is not valid JSON');
  });

  it.each(['[1,2]', '42', '"text"', 'null'])('answers a body that is not an object (%s) with 400', async (payload) => {
    const reply = await createOrder(payload);
    expectErrorShape(reply, 400, 'VALIDATION_ERROR');
    expect(reply.body.param).toBe('body');
  });

  it('refuses prototype-poisoning keys', async () => {
    const reply = await createOrder('{"amount": 100, "__proto__": {"admin": true}}');
    expectErrorShape(reply, 400, 'VALIDATION_ERROR');
    expect(reply.body.message).toMatch(/__proto__/);
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])(
    'answers the content type %s with 415 UNSUPPORTED_MEDIA_TYPE',
    async (contentType) => {
      expectErrorShape(await createOrder('amount=100', contentType), 415, 'UNSUPPORTED_MEDIA_TYPE');
    },
  );

  it('answers a body over 128 KiB with 413 BODY_TOO_LARGE', async () => {
    const reply = await createOrder(JSON.stringify({ amount: 100, description: 'x'.repeat(135_000) }));
    expectErrorShape(reply, 413, 'BODY_TOO_LARGE');
  });

  it('gives every response, successful or not, its own Request-Id', async () => {
    const first = await service.call({ method: 'GET', url: '/v1/balance', key: merchant.test });
    const second = await service.call({ method: 'GET', url: '/healthz' });
    expect(first.status).toBe(200);
    expect(first.headers['request-id']).toMatch(/^req_/);
    expect(second.headers['request-id']).toMatch(/^req_/);
    expect(first.headers['request-id']).not.toBe(second.headers['request-id']);
  });

  it('ignores a Request-Id sent by the client', async () => {
    const reply = await service.call({ method: 'GET', url: '/healthz', headers: { 'request-id': 'req_forged' } });
    expect(reply.headers['request-id']).not.toBe('req_forged');
  });

  it('answers /healthz with {"status":"ok"}', async () => {
    const reply = await service.call({ method: 'GET', url: '/healthz' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: 'ok' });
  });

  it('publishes an OpenAPI description of the merchant API', async () => {
    const reply = await service.call({ method: 'GET', url: '/openapi.json' });
    expect(reply.status).toBe(200);
    expect(reply.body.openapi).toBe('3.1.0');
    expect(Object.keys(reply.body.paths)).toEqual(expect.arrayContaining(['/merchant/v1/orders', '/merchant/v1/orders/{id}', '/v1/balance']));
    // Each route under its own credential: the operator token (described to the operator alone), a secret key, or none
    // (the session token in the path).
    const operators = await service.admin('GET', '/admin/v1/openapi.json');
    expect(operators.body.paths['/admin/v1/products'].post.security).toEqual([{ operatorToken: [] }]);
    expect(reply.body.paths['/v1/balance'].get.security).toBeUndefined();
    expect(reply.body.security).toEqual([{ secretKey: [] }]);
    expect(reply.body.paths['/checkout/v1/sessions/{token}'].get.security).toEqual([]);
  });

  it('leaves the operator API out of the description when it is off', async () => {
    const closed = await startService({ TOLOV_ADMIN_TOKEN: '' });
    try {
      const reply = await closed.call({ method: 'GET', url: '/openapi.json' });
      expect(Object.keys(reply.body.paths).filter((path) => path.startsWith('/admin/'))).toEqual([]);
      expect(Object.keys(reply.body.components.securitySchemes)).toEqual(['secretKey']);
      expect(Object.keys(reply.body.paths)).toContain('/v1/balance');
    } finally {
      await closed.stop();
    }
  });
});

describe('internal failures', () => {
  it('answer with a generic 5xx in the same shape and leak nothing of the cause', async () => {
    const broken = await startService();
    const brokenMerchant = await broken.createMerchant();
    await broken.db.close();
    const reply = await broken.call({ method: 'GET', url: '/v1/balance', key: brokenMerchant.test });
    expect(reply.status).toBeGreaterThanOrEqual(500);
    expect(['INTERNAL_ERROR', 'SERVICE_UNAVAILABLE']).toContain(reply.body.code);
    expect(reply.body.requestId).toMatch(/^req_/);
    expect(reply.text).not.toMatch(/select|pglite|pool|stack|at /i);
    await broken.app.close();
  });
});
