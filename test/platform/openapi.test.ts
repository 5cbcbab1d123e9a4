// The OpenAPI description is fit for code generation, and the service's real answers are what it says, field for field.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS, type ErrorCode } from '../../src/core/errors.js';
import { FAILURE_CODES, OPERATION_NOTES } from '../../src/http/openapi-notes.js';
import { bindCard } from '../support/binding.js';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { charge, reconcileNow } from '../support/payments.js';

let service: TestService;
let merchant: Merchant;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let document: any;
/** The description the operator token reads: the merchants' operations and the operator's. */
let operatorDocument: Described;
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
  merchant = await service.createMerchant();
  document = (await service.call({ method: 'GET', url: '/openapi.json' })).body;
  operatorDocument = (await service.admin('GET', '/admin/v1/openapi.json')).body;
});
afterAll(async () => service.stop());

type Media = { schema: unknown; example?: unknown; examples?: Record<string, { value: unknown }> };
type Operation = {
  operationId?: string;
  description?: string;
  parameters?: Array<{ in: string; name: string; required?: boolean }>;
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
};
type Described = { paths: Record<string, Record<string, Operation>>; components: unknown };
const operations = (described: Described = document): Array<[string, string, Operation]> =>
  Object.entries(described.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => [method.toUpperCase(), path, operation] as [string, string, Operation]),
  );

/** A copy of a schema in which no object may carry a property it does not declare. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (typeof schema !== 'object' || schema === null) return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([name, child]) => [name, closed(child)])) : closed(value)]));
  return copy.type === 'object' && copy.properties && copy.additionalProperties === undefined ? { ...copy, additionalProperties: false } : copy;
}

const validators = new WeakMap<Described, { ajv: Ajv; compiled: Map<string, ValidateFunction> }>();

/** A validator of `schema`, a schema of the description `described` (a `$ref` to a component, usually), closed. */
function validatorOf(schema: unknown, described: Described = document): ValidateFunction {
  let cached = validators.get(described);
  if (!cached) {
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addFormat('date-time', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    ajv.addFormat('uri', (value: string) => URL.canParse(value));
    ajv.addSchema({ $id: 'api', components: closed(described.components) });
    cached = { ajv, compiled: new Map() };
    validators.set(described, cached);
  }
  const text = JSON.stringify(closed(schema)).replaceAll('"#/components/', '"api#/components/');
  const validate = cached.compiled.get(text) ?? cached.ajv.compile(JSON.parse(text));
  cached.compiled.set(text, validate);
  return validate;
}

/** `example` fits `schema` of `described`, with no field the schema does not declare. */
function expectFits(schema: unknown, example: unknown, what: string, described: Described = document): void {
  const validate = validatorOf(schema, described);
  expect(validate(example), `${what}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(example)}`).toBe(true);
}

const expectValid = (name: string, body: unknown) => expectFits({ $ref: `#/components/schemas/${name}` }, body, name);

const json = (content: Record<string, Media> | undefined) => content?.['application/json'];

describe('the OpenAPI description', () => {
  it('names every object as a component', () => {
    for (const name of ['Order', 'OrderList', 'PaymentIntent', 'PaymentIntentList', 'Refund', 'RefundList', 'Card', 'CardList', 'CardBinding', 'Event', 'EventList', 'WebhookEndpoint', 'WebhookEndpointList', 'WebhookDelivery', 'Balance', 'Payout', 'PayoutList', 'PayoutAccount', 'BalanceTransaction', 'Error', 'SessionState', 'CreateOrderBody', 'CreateChargeBody']) {
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
    for (const id of ['createOrder', 'createCharge', 'createRefund', 'confirmPaymentIntent', 'createPayout']) expect(header(id)?.required, id).toBe(true);
    for (const id of ['cancelOrder', 'cancelPayout', 'createCardBinding', 'createPaymentIntent', 'cancelPaymentIntent', 'createWebhookEndpoint', 'resendEvent']) {
      expect(header(id), id).toBeDefined();
      expect(header(id)?.required ?? false, id).toBe(false);
    }
    expect(header('retrieveOrder')).toBeUndefined();
  });

  it('describes each tag its operations are grouped by', () => {
    const described = new Map<string, string>(document.tags.map((tag: { name: string; description: string }) => [tag.name, tag.description]));
    const used = new Set(operations().flatMap(([, , operation]) => (operation as { tags?: string[] }).tags ?? []));
    for (const tag of used) expect(described.get(tag), tag).toMatch(/\w/);
    expect(described.get('payouts')).toContain('?payout=po_');
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
    // Nor do its examples show an operator's answer.
    expect(JSON.stringify(document)).not.toMatch(/\/admin\/|operator token/i);
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
    expect(Object.keys(document.webhooks).sort()).toEqual([
      'order.expired',
      'order.failed',
      'order.paid',
      'payment_intent.failed',
      'payment_intent.hold_released',
      'payment_intent.requires_capture',
      'payment_intent.succeeded',
      'payout.failed',
      'payout.paid',
      'payout_account.updated',
      'receipt.failed',
      'receipt.fiscalized',
    ]);
    expect(document.webhooks['order.paid'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/OrderPaidEvent' });
  });
});

describe('the reference of each operation', () => {
  it('describes its success answer and shows a recorded answer that fits its schema, the operator\'s too', () => {
    for (const described of [document, operatorDocument]) {
      for (const [method, path, operation] of operations(described)) {
        for (const [status, response] of Object.entries(operation.responses).filter(([status]) => /^2/.test(status))) {
          expect(response.description, `${method} ${path} ${status}`).not.toBe('Default Response');
          const media = json(response.content);
          if (!media) continue; // the event stream, which is text
          expect(media.example, `${method} ${path} ${status} has no example`).toBeDefined();
          expectFits(media.schema, media.example, `${method} ${path} ${status}`, described);
        }
        const body = json(operation.requestBody?.content);
        if (body) {
          expect(body.example, `${method} ${path}: its body has no example`).toBeDefined();
          expectFits(body.schema, body.example, `${method} ${path} body`, described);
        }
      }
    }
  });

  it('lists its refusals by status, each code under its own status with an example in the Error shape', () => {
    for (const [method, path, operation] of operations(operatorDocument)) {
      const refusals = Object.entries(operation.responses).filter(([status]) => /^[45]/.test(status));
      const examples = refusals.flatMap(([status, response]) => {
        const media = json(response.content)!;
        expect(media.schema, `${method} ${path} ${status}`).toEqual({ $ref: '#/components/schemas/Error' });
        // A recorded refusal, never the placeholders a schema alone renders ("statusCode": 0, "string").
        expect(Object.keys(media.examples ?? {}).length, `${method} ${path} ${status} shows no example`).toBeGreaterThan(0);
        return Object.entries(media.examples ?? {}).map(([code, { value }]) => ({ status, code, value: value as { code: string; statusCode: number } }));
      });
      for (const { status, code, value } of examples) {
        expect(value.code, `${method} ${path} ${status}`).toBe(code);
        expect(String(value.statusCode)).toMatch(status.endsWith('XX') ? new RegExp(`^${status[0]}`) : new RegExp(`^${status}$`));
        expect(operation.responses[status]!.description, `${method} ${path} ${status}`).toContain(`\`${code}\``);
        expectFits({ $ref: '#/components/schemas/Error' }, value, `${method} ${path} ${code}`, operatorDocument);
      }
    }
    const cancel = operations().find(([, , operation]) => operation.operationId === 'cancelOrder')![2];
    expect(Object.keys(json(cancel.responses['409']!.content)!.examples!)).toEqual(['IDEMPOTENCY_KEY_IN_USE', 'ORDER_DEBIT_IN_PROGRESS', 'ORDER_NOT_CANCELABLE']);
    const charge = operations().find(([, , operation]) => operation.operationId === 'createCharge')![2];
    expect(charge.responses['400']!.description).toMatch(/`IDEMPOTENCY_KEY_REQUIRED`[\s\S]*`CARD_INACTIVE`/);
    expect(charge.responses['503']!.description).toContain('`RAIL_UNAVAILABLE`');
  });

  it('has notes for each operation, and none for an operation that is gone', () => {
    const ids = operations(operatorDocument).map(([, , operation]) => operation.operationId);
    expect(Object.keys(OPERATION_NOTES).sort()).toEqual([...ids].sort());
  });

  it('states what a retry of each write does: its Idempotency-Key rules, or what repeating it does', () => {
    for (const [method, path, operation] of operations(operatorDocument).filter(([method]) => method !== 'GET')) {
      const key = operation.parameters?.find((parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key');
      const rule = key === undefined ? '**Repeating it:**' : key.required ? '**Idempotency-Key: required**' : '**Idempotency-Key: optional.**';
      expect(operation.description, `${method} ${path}`).toContain(rule);
      if (key) expect(operation.description).toMatch(/Idempotent-Replayed: true[\s\S]*422 `IDEMPOTENCY_KEY_REUSED`[\s\S]*409 `IDEMPOTENCY_KEY_IN_USE`[\s\S]*24 hours/);
    }
  });

  it('shows an example of each event Tolov sends, a snapshot of its object', () => {
    for (const [type, { post }] of Object.entries<{ post: { requestBody: { content: Record<string, Media> } } }>(document.webhooks)) {
      const event = json(post.requestBody.content)!.example as { type: string; data: unknown };
      expect(event?.type, type).toBe(type);
      expectValid('Event', event);
      const object = ({ order: 'Order', payment_intent: 'PaymentIntentSnapshot', receipt: 'Receipt', payout_account: 'PayoutAccount', payout: 'Payout' } as Record<string, string>)[
        type.split('.')[0]!
      ];
      expectFits({ $ref: `#/components/schemas/${object}` }, event.data, type);
    }
  });

  it('introduces every error code and every failureCode, as docs/errors.md does', async () => {
    const guide = await readFile(resolve(import.meta.dirname, '../../docs/errors.md'), 'utf8');
    for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) {
      expect(document.info.description, code).toContain(`| ${ERROR_STATUS[code]} | \`${code}\` |`);
      expect(guide, `docs/errors.md lacks ${code}`).toContain(`\`${code}\``);
    }
    for (const failureCode of Object.keys(FAILURE_CODES)) {
      expect(document.info.description, failureCode).toContain(`| \`${failureCode}\` |`);
      expect(guide, `docs/errors.md lacks ${failureCode}`).toContain(`\`${failureCode}\``);
    }
    expect(document.info.description).toContain('`docs/errors.md`');
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

  it('end a refused payment with a failureCode the description lists', async () => {
    const outcomes: unknown[] = [];
    for (const pan of ['8600000000000015', '8600000000000056', '8600000000000049']) {
      const card = await bindCard(service, merchant.test, pan);
      outcomes.push((await charge(service, merchant.test, { amount: 3_000, card })).body.id);
    }
    await reconcileNow(service);
    for (const id of outcomes) {
      const intent = (await service.call({ method: 'GET', url: `/subscribe/v1/charges/${id}`, key: merchant.test })).body;
      expect(intent.status).toBe('FAILED');
      expect(Object.keys(FAILURE_CODES)).toContain(intent.failureCode);
    }
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
