// The OpenAPI description is fit for code generation, and the service's real answers are what it says, field for field.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';

let service: TestService;
let merchant: Merchant;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let document: any;
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
  merchant = await service.createMerchant();
  document = (await service.call({ method: 'GET', url: '/openapi.json' })).body;
});
afterAll(async () => service.stop());

type Operation = { operationId?: string; parameters?: Array<{ in: string; name: string; required?: boolean }>; responses: Record<string, { content?: Record<string, { schema: unknown }> }> };
const operations = (): Array<[string, string, Operation]> =>
  Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => [method.toUpperCase(), path, operation] as [string, string, Operation]),
  );

/** A copy of a schema in which no object may carry a property it does not declare. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (typeof schema !== 'object' || schema === null) return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([name, child]) => [name, closed(child)])) : closed(value)]));
  return copy.type === 'object' && copy.properties && copy.additionalProperties === undefined ? { ...copy, additionalProperties: false } : copy;
}

function validatorOf(name: string): ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addFormat('date-time', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  ajv.addSchema({ $id: 'api', components: closed(document.components) });
  return ajv.compile({ $ref: `api#/components/schemas/${name}` });
}

function expectValid(name: string, body: unknown): void {
  const validate = validatorOf(name);
  expect(validate(body), `${name}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(body)}`).toBe(true);
}

describe('the OpenAPI description', () => {
  it('names every object as a component', () => {
    for (const name of ['Order', 'OrderList', 'PaymentIntent', 'PaymentIntentList', 'Refund', 'RefundList', 'Card', 'CardList', 'CardBinding', 'Event', 'EventList', 'WebhookEndpoint', 'WebhookEndpointList', 'WebhookDelivery', 'Balance', 'Error', 'SessionState', 'CreateOrderBody', 'CreateChargeBody']) {
      expect(document.components.schemas[name], name).toBeDefined();
    }
    const listed = operations().find(([method, path]) => method === 'GET' && path === '/merchant/v1/orders')![2];
    expect(listed.responses['200']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/OrderList' });
  });

  it('gives every operation a unique operationId and the Error schema for its 4xx and 5xx answers', () => {
    const ids = operations().map(([, , operation]) => operation.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id)), JSON.stringify(ids)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [method, path, operation] of operations()) {
      if (path === '/openapi.json' || path === '/healthz') continue;
      for (const status of ['4XX', '5XX']) {
        expect(operation.responses[status]?.content?.['application/json']?.schema, `${method} ${path} ${status}`).toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
  });

  it('declares the Idempotency-Key where it is taken, required where money moves or an order is made', () => {
    const header = (operationId: string) =>
      operations()
        .find(([, , operation]) => operation.operationId === operationId)![2]
        .parameters?.find((parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key');
    for (const id of ['createOrder', 'createCharge', 'createRefund', 'confirmPaymentIntent']) expect(header(id)?.required, id).toBe(true);
    for (const id of ['cancelOrder', 'createCardBinding', 'createPaymentIntent', 'cancelPaymentIntent', 'createWebhookEndpoint', 'resendEvent']) {
      expect(header(id), id).toBeDefined();
      expect(header(id)?.required ?? false, id).toBe(false);
    }
    expect(header('retrieveOrder')).toBeUndefined();
  });

  it('passes `redocly lint` (its recommended rules) with no error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tolov-openapi-'));
    try {
      await writeFile(join(dir, 'openapi.json'), JSON.stringify(document));
      const redocly = resolve(import.meta.dirname, '../../node_modules/.bin/redocly');
      const linted = await promisify(execFile)(redocly, ['lint', join(dir, 'openapi.json'), '--format', 'stylish'], { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } }).catch(
        (error: { stdout: string; stderr: string; code: number }) => error,
      );
      expect('code' in linted ? linted.code : 0, `${linted.stdout}${linted.stderr}`).toBe(0);
      expect(`${linted.stdout}${linted.stderr}`).not.toMatch(/\berror\b/i);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('shows the operator API to the operator token only', async () => {
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/admin/'))).toEqual([]);
    expect(document.components.securitySchemes).not.toHaveProperty('operatorToken');
    expect(document.tags.map((tag: { name: string }) => tag.name)).not.toContain('operator');
    for (const name of ['CreateProductBody', 'ApiKeyList', 'Timings']) expect(document.components.schemas).not.toHaveProperty(name);
    expect((await service.call({ method: 'GET', url: '/admin/v1/openapi.json' })).status).toBe(401);
    expect((await service.call({ method: 'GET', url: '/admin/v1/openapi.json', key: merchant.test })).status).toBe(401);
    const full = await service.admin('GET', '/admin/v1/openapi.json');
    expect(full.status).toBe(200);
    expect(Object.keys(full.body.paths)).toContain('/admin/v1/products');
    expect(full.body.components.securitySchemes).toHaveProperty('operatorToken');
    expect(full.body.components.schemas).toHaveProperty('CreateProductBody');
    // Everything else is the same description.
    const merchantsPaths = Object.keys(full.body.paths).filter((path) => !path.startsWith('/admin/'));
    expect(merchantsPaths).toEqual(Object.keys(document.paths));
  });

  it('describes each event Tolov sends under webhooks', () => {
    expect(Object.keys(document.webhooks).sort()).toEqual(['order.expired', 'order.failed', 'order.paid', 'payment_intent.failed', 'payment_intent.succeeded']);
    expect(document.webhooks['order.paid'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/OrderPaidEvent' });
  });
});

describe('real answers', () => {
  it('carry exactly the fields their schemas declare, first answers and replays alike', async () => {
    const card = await bindCard(service, merchant.test, '8600000000000007');
    const key = idem();
    const first = await charge(service, merchant.test, { amount: 5_000, card, metadata: { order: '17' } }, key);
    const replay = await charge(service, merchant.test, { amount: 5_000, card, metadata: { order: '17' } }, key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    for (const answer of [first, replay]) expectValid('PaymentIntent', answer.body);
    const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: idem(), body: { amount: 1_000, returnUrl: 'https://shop.example.uz' } });
    expectValid('Order', order.body);
    expectValid('Order', (await service.call({ method: 'GET', url: `/merchant/v1/orders/${order.body.id}`, key: merchant.test })).body);
    expectValid('OrderList', (await service.call({ method: 'GET', url: '/merchant/v1/orders', key: merchant.test })).body);
    expectValid('PaymentIntentList', (await service.call({ method: 'GET', url: '/subscribe/v1/charges', key: merchant.test })).body);
    expectValid('CardList', (await service.call({ method: 'GET', url: '/subscribe/v1/cards', key: merchant.test })).body);
    const refund = await service.call({ method: 'POST', url: '/v1/refunds', key: merchant.test, idempotencyKey: idem(), body: { paymentIntent: first.body.id } });
    expectValid('Refund', refund.body);
    expectValid('Balance', (await service.call({ method: 'GET', url: '/v1/balance', key: merchant.test })).body);
    expectValid('EventList', (await service.call({ method: 'GET', url: '/v1/events', key: merchant.test })).body);
    const endpoint = await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: merchant.test, body: { url: 'http://127.0.0.1:9/x' } });
    expectValid('WebhookEndpoint', endpoint.body);
    expectValid('Error', (await service.call({ method: 'GET', url: '/merchant/v1/orders/ord_missing', key: merchant.test })).body);
    expectValid('Error', (await charge(service, merchant.test, { amount: 0, card })).body);
  });

  it('never carry a field their schema does not declare, even one a stored answer holds', async () => {
    const card = await bindCard(service, merchant.test, '8600000000000007');
    const key = idem();
    const first = await charge(service, merchant.test, { amount: 7_000, card }, key);
    expect(first.status).toBe(201);
    const stored = JSON.parse(first.text);
    const tampered = JSON.stringify({ ...stored, pan: '8600000000000007', internalNote: 'not for merchants' });
    const updated = await service.db.query('UPDATE idempotency_keys SET response_body = $1 WHERE key = $2 RETURNING key', [tampered, key]);
    expect(updated).toHaveLength(1);
    const replay = await charge(service, merchant.test, { amount: 7_000, card }, key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(replay.text).not.toContain('8600000000000007');
  });

  it('each operation declares the schema of its success answer, which the server serializes through', () => {
    for (const [method, path, operation] of operations()) {
      const success = Object.entries(operation.responses).filter(([status]) => /^2/.test(status));
      expect(success.length, `${method} ${path}`).toBeGreaterThan(0);
      for (const [status, response] of success) expect(Object.values(response.content ?? {})[0]?.schema, `${method} ${path} ${status}`).toBeDefined();
    }
  });
});
