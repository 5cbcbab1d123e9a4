// The API's OpenAPI 3.1 description, fit for code generation: every named schema (a `title`) is a component referred
// to by name, every operation has an operationId, declares its Idempotency-Key and answers errors with `Error`, and
// the events Tolov sends are described under `webhooks`.
import { Type } from '@sinclair/typebox';
import type { FastifySchema, RouteOptions } from 'fastify';
import { ERROR_STATUS } from '../core/errors.js';
import { SENT_EVENT_TYPES } from '../modules/webhooks/events.js';

/** The one error body every refusal answers with, whatever its status (docs/errors.md). */
export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String({ description: 'The HTTP status text' }),
    code: Type.Union(Object.keys(ERROR_STATUS).map((code) => Type.Literal(code))),
    message: Type.String(),
    param: Type.Optional(Type.String({ description: 'The field, parameter or header at fault' })),
    failureCode: Type.Optional(Type.String({ description: "With PAYMENT_FAILED: the bank's reason" })),
    requestId: Type.String(),
  },
  { title: 'Error', description: 'The request was refused; `code` says why' },
);

const IDEMPOTENCY_KEY_DESCRIPTION =
  'Makes the call safe to retry: the same key with the same request answers the first answer again (24 hours). 1 to 255 printable ASCII characters.';

/** A route as the description shows it: its Idempotency-Key header, and its error answers. */
export function describeRoute({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }): { schema: FastifySchema; url: string } {
  const idempotencyKey = route.config?.idempotencyKey;
  const key = Type.String({ minLength: 1, maxLength: 255, description: IDEMPOTENCY_KEY_DESCRIPTION });
  return {
    url,
    schema: {
      ...schema,
      ...(idempotencyKey ? { headers: Type.Object({ 'Idempotency-Key': idempotencyKey === 'required' ? key : Type.Optional(key) }) } : {}),
      response: { ...((schema?.response as object | undefined) ?? {}), '4XX': ErrorBody, '5XX': ErrorBody },
    },
  };
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Moves every schema with a title into `components.schemas`, leaving a `$ref` in its place; names must be unique. */
function hoistNamed(value: unknown, components: Record<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((item) => hoistNamed(item, components));
  if (!isObject(value)) return value;
  const walked = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, hoistNamed(child, components)]));
  const title = walked.title;
  if (typeof title !== 'string' || !('type' in walked)) return walked;
  const { title: _title, ...schema } = walked;
  const existing = components[title];
  if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(schema)) throw new Error(`two different schemas are named ${title}`);
  components[title] = schema;
  return { $ref: `#/components/schemas/${title}` };
}

/** The payload of each event type Tolov sends, as a `webhooks` entry and a named schema. */
function describeWebhooks(components: Record<string, unknown>): Json {
  const intent = components.PaymentIntent as { properties: Json } | undefined;
  if (intent) {
    // In an event's snapshot, a payment intent's status is written in lower case.
    components.PaymentIntentSnapshot = { ...intent, properties: { ...intent.properties, status: { type: 'string', enum: ['succeeded', 'failed'] } } };
  }
  return Object.fromEntries(
    SENT_EVENT_TYPES.map((type) => {
      const name = `${type.split(/[._]/).map((part) => part[0]!.toUpperCase() + part.slice(1)).join('')}Event`;
      const data = type.startsWith('order.') ? 'Order' : 'PaymentIntentSnapshot';
      components[name] = {
        allOf: [{ $ref: '#/components/schemas/Event' }, { type: 'object', properties: { type: { const: type }, data: { $ref: `#/components/schemas/${data}` } } }],
      };
      const post = {
        operationId: `on${name}`,
        summary: `Sent when ${type} happens; signed with Tolov-Signature`,
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } },
        responses: { '200': { description: 'Any 2xx acknowledges the delivery; anything else is retried' } },
      };
      return [type, { post }];
    }),
  );
}

/** The finished description: named components and the webhooks section. */
export function describeDocument({ openapiObject }: { openapiObject: Json }): Json {
  const existing = isObject(openapiObject.components) ? openapiObject.components : {};
  const schemas: Record<string, unknown> = { ...(isObject(existing.schemas) ? existing.schemas : {}) };
  const paths = hoistNamed(openapiObject.paths, schemas);
  const webhooks = describeWebhooks(schemas);
  return { ...openapiObject, paths, webhooks, components: { ...existing, schemas } };
}

/**
 * The description as everyone may read it: without the operator's calls, which only the operator token reads (at
 * `/admin/v1/openapi.json`), nor the schemas only they use, so that the operator API's shape is no map for a stranger.
 */
export function withoutOperatorCalls(document: Json): Json {
  const operator = (operation: unknown) =>
    isObject(operation) && Array.isArray(operation.security) && operation.security.some((entry) => isObject(entry) && 'operatorToken' in entry);
  const paths = Object.entries(isObject(document.paths) ? document.paths : {}).flatMap(([path, methods]) => {
    const kept = Object.entries(isObject(methods) ? methods : {}).filter(([, operation]) => !operator(operation));
    return kept.length === 0 ? [] : [[path, Object.fromEntries(kept)] as const];
  });
  const components = isObject(document.components) ? document.components : {};
  const { operatorToken: _operator, ...schemes } = isObject(components.securitySchemes) ? components.securitySchemes : {};
  const tags = Array.isArray(document.tags) ? document.tags.filter((tag) => !(isObject(tag) && tag.name === 'operator')) : document.tags;
  const kept = { ...document, tags, paths: Object.fromEntries(paths) };
  const schemas = isObject(components.schemas) ? components.schemas : {};
  return { ...kept, components: { ...components, securitySchemes: schemes, schemas: referenced(kept, schemas) } };
}

/** The named schemas `document` refers to, directly or through one another. */
function referenced(document: Json, schemas: Json): Json {
  const names = new Set<string>();
  const pending: unknown[] = [{ ...document, components: undefined }];
  while (pending.length > 0) {
    const text = JSON.stringify(pending.pop());
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (names.has(name!) || !(name! in schemas)) continue;
      names.add(name!);
      pending.push(schemas[name!]);
    }
  }
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => names.has(name)));
}
