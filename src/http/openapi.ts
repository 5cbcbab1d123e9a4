// The API's OpenAPI 3.1 description, fit for code generation and for reading: every named schema (a `title`) is a
// component referred to by name; every operation has an operationId, a described success answer with an example
// recorded from a run of the API (openapi-examples.json), its error answers by status with their codes and examples,
// and its Idempotency-Key rules; the events Tolov sends are described under `webhooks`.
import { readFileSync } from 'node:fs';
import { Type } from '@sinclair/typebox';
import type { FastifySchema, RouteOptions } from 'fastify';
import { ERROR_STATUS, type ErrorBody as ErrorAnswer, type ErrorCode } from '../core/errors.js';
import { SENT_EVENT_TYPES } from '../modules/webhooks/events.js';
import { ERROR_MEANINGS, FAILURE_CODES, MERCHANT_OPERATIONS, OPERATION_NOTES, type OperationNotes } from './openapi-notes.js';

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

/** What a run of the API answered (scripts/record-api-examples.ts), by operationId; test/platform/api-examples.test.ts keeps it true. */
export interface RecordedExamples {
  operations: Record<string, { request?: unknown; status: number; response: unknown }>;
  errors: Record<string, Partial<Record<ErrorCode, ErrorAnswer>>>;
  /** One event of each type Tolov sends, as delivered. */
  events: Record<string, unknown>;
}

export const EXAMPLES_FILE = new URL('./openapi-examples.json', import.meta.url);
let recorded: RecordedExamples | undefined;
const examples = (): RecordedExamples => (recorded ??= JSON.parse(readFileSync(EXAMPLES_FILE, 'utf8')) as RecordedExamples);

/** Refusals any call may meet before its route runs; each operation lists the rest by status. */
const TRANSPORT_ERRORS: readonly ErrorCode[] = ['REQUEST_TIMEOUT', 'BODY_TOO_LARGE', 'URI_TOO_LONG', 'UNSUPPORTED_MEDIA_TYPE', 'HEADERS_TOO_LARGE'];
const SERVER_ERRORS: readonly ErrorCode[] = ['INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'];

const IDEMPOTENCY_KEY_DESCRIPTION = '1 to 255 printable ASCII characters, kept 24 hours: a retry with the same key answers the first answer again.';

/** The rules of a route's Idempotency-Key, as docs/idempotency.md gives them. */
function idempotencyRules(mode: 'required' | 'optional'): string {
  const header =
    mode === 'required'
      ? '**Idempotency-Key: required** (400 `IDEMPOTENCY_KEY_REQUIRED` without it). Use a new key for each new request, and the same key for its retries:'
      : '**Idempotency-Key: optional.** Without one, a retry does the call again. With one, retries are safe:';
  return [
    header,
    '- the same method, path and body answers the first answer again, status and body byte for byte, with the header `Idempotent-Replayed: true`; the work is done once, and a card is never debited twice for one key;',
    '- a refusal after the request was understood (a 404, a 409, a 400 such as `CARD_INACTIVE`) is stored and replayed too: use a new key for a new attempt; a 400 `VALIDATION_ERROR` and a 5xx are not stored, and the key stays free;',
    '- the same key with another method, path or body, or from another API key: 422 `IDEMPOTENCY_KEY_REUSED`, nothing done;',
    '- while the first request still runs: 409 `IDEMPOTENCY_KEY_IN_USE`; retry a moment later;',
    "- a key belongs to the product and mode, and is kept 24 hours from its first request.",
  ].join('\n');
}

/** The Idempotency-Key a route takes, if any (a command declared `none` takes none). */
function keyTaken(route: RouteOptions): 'required' | 'optional' | undefined {
  const declared = route.config?.idempotencyKey;
  return declared === 'none' ? undefined : declared;
}

/** The error codes a route answers because of how it is declared: its credential, its inputs, its Idempotency-Key. */
function declaredErrors(schema: FastifySchema, route: RouteOptions): ErrorCode[] {
  const { auth } = route.config ?? {};
  const idempotencyKey = keyTaken(route);
  const codes: ErrorCode[] = [];
  if (auth?.kind === 'merchant' || auth?.kind === 'admin') codes.push('UNAUTHENTICATED', 'RATE_LIMITED');
  if (auth?.kind === 'merchant' && auth.scope) codes.push('SCOPE_REQUIRED');
  if (schema.body || schema.querystring || schema.params || schema.headers || idempotencyKey) codes.push('VALIDATION_ERROR');
  if (idempotencyKey === 'required') codes.push('IDEMPOTENCY_KEY_REQUIRED');
  if (idempotencyKey) codes.push('IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED');
  return codes;
}

/** The operation's description: what the route says, the scope its key needs, and what a retry does. */
function operationDescription(schema: FastifySchema, route: RouteOptions, notes: OperationNotes | undefined): string | undefined {
  const { auth } = route.config ?? {};
  const idempotencyKey = keyTaken(route);
  const parts = [
    schema.description,
    auth?.kind === 'merchant' && auth.scope ? `Needs a secret key with the \`${auth.scope}\` scope (else 403 \`SCOPE_REQUIRED\`).` : undefined,
    idempotencyKey ? idempotencyRules(idempotencyKey) : notes?.repeat ? `**Repeating it:** ${notes.repeat}.` : undefined,
  ].filter((part) => part !== undefined);
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

/**
 * An error example for `code`: as this operation answered it in the recorded run, else as a merchant's operation did
 * (never an operator's, whose answers the description everyone reads must not show).
 */
function errorExample(operationId: string, code: ErrorCode): ErrorAnswer | undefined {
  const { errors } = examples();
  return errors[operationId]?.[code] ?? Object.keys(MERCHANT_OPERATIONS).map((other) => errors[other]?.[code]).find((answer) => answer !== undefined);
}

/** The Error schema as one status answers it: what each of its codes means, and an example of each. */
function errorAnswer(operationId: string, codes: readonly ErrorCode[], lead?: string): Record<string, unknown> {
  const found = codes.flatMap((code) => {
    const example = errorExample(operationId, code);
    return example ? [[code, { summary: code, value: example }] as const] : [];
  });
  return {
    ...ErrorBody,
    'x-response-description': [...(lead ? [lead] : []), ...codes.map((code) => `- \`${code}\`: ${ERROR_MEANINGS[code]}`)].join('\n'),
    ...(found.length > 0 ? { 'x-examples': Object.fromEntries(found) } : {}),
  };
}

/** The error answers of an operation by status, then any other refusal (4XX) and the server's failures (5XX). */
function errorAnswers(operationId: string, codes: readonly ErrorCode[]): Record<string, unknown> {
  const statuses = new Set(codes.map((code) => ERROR_STATUS[code]));
  // A status listed explicitly takes every code of that status, those any call may meet included.
  const general = [...TRANSPORT_ERRORS, ...SERVER_ERRORS];
  const all = [...codes, ...general.filter((code) => statuses.has(ERROR_STATUS[code]) && !codes.includes(code))];
  const listed = [...statuses]
    .sort((a, b) => a - b)
    .map((status) => [String(status), errorAnswer(operationId, all.filter((code) => ERROR_STATUS[code] === status))] as const);
  const unlisted = (group: readonly ErrorCode[]) => group.filter((code) => !all.includes(code));
  return {
    ...Object.fromEntries(listed),
    '4XX': errorAnswer(operationId, unlisted(TRANSPORT_ERRORS), 'Any other refusal, before the route runs, in the same shape:'),
    '5XX': errorAnswer(operationId, unlisted(SERVER_ERRORS), 'Our failure, in the same shape; a retry with the same Idempotency-Key is safe:'),
  };
}

/** The route's success answers, described, with the recorded example of the one it answered. */
function successAnswers(operationId: string, response: Record<string, unknown>, notes: OperationNotes | undefined): Record<string, unknown> {
  const example = examples().operations[operationId];
  return Object.fromEntries(
    Object.entries(response).map(([status, schema]) => {
      if (typeof schema !== 'object' || schema === null) return [status, schema];
      // A response declared with its own content (the event stream, which is text) has no recorded example.
      if ('content' in schema) return [status, notes ? { ...schema, description: notes.returns } : schema];
      const described = notes ? { 'x-response-description': notes.returns } : {};
      const sample = example && String(example.status) === status ? { examples: [example.response] } : {};
      return [status, { ...schema, ...described, ...sample }];
    }),
  );
}

/** A route as the description shows it: its Idempotency-Key header, its answers and what a retry does. */
export function describeRoute({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }): { schema: FastifySchema; url: string } {
  if (!schema?.operationId) return { schema, url };
  const { operationId } = schema;
  const notes = OPERATION_NOTES[operationId];
  const idempotencyKey = keyTaken(route);
  const key = Type.String({ minLength: 1, maxLength: 255, description: IDEMPOTENCY_KEY_DESCRIPTION });
  const codes = [...new Set([...declaredErrors(schema, route), ...(notes?.errors ?? [])])];
  const request = examples().operations[operationId]?.request;
  const description = operationDescription(schema, route, notes);
  return {
    url,
    schema: {
      ...schema,
      ...(description ? { description } : {}),
      ...(schema.body && request !== undefined ? { body: { ...(schema.body as object), examples: [request] } } : {}),
      ...(idempotencyKey ? { headers: Type.Object({ 'Idempotency-Key': idempotencyKey === 'required' ? key : Type.Optional(key) }) } : {}),
      response: { ...successAnswers(operationId, (schema.response as Record<string, unknown> | undefined) ?? {}, notes), ...errorAnswers(operationId, codes) },
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

/** The object an event's `data` holds, by the type's first part. */
const EVENT_OBJECT: Readonly<Record<string, string>> = {
  order: 'Order',
  payment_intent: 'PaymentIntentSnapshot',
  receipt: 'Receipt',
  payout_account: 'PayoutAccount',
  payout: 'Payout',
};

/** The payload of each event type Tolov sends, as a `webhooks` entry and a named schema. */
function describeWebhooks(components: Record<string, unknown>): Json {
  const intent = components.PaymentIntent as { properties: Json } | undefined;
  if (intent) {
    // In an event's snapshot, a payment intent's status is written in lower case.
    components.PaymentIntentSnapshot = { ...intent, properties: { ...intent.properties, status: { type: 'string', enum: ['requires_capture', 'succeeded', 'failed', 'canceled'] } } };
  }
  return Object.fromEntries(
    SENT_EVENT_TYPES.map((type) => {
      const name = `${type.split(/[._]/).map((part) => part[0]!.toUpperCase() + part.slice(1)).join('')}Event`;
      const data = EVENT_OBJECT[type.split('.')[0]!]!;
      components[name] = {
        allOf: [{ $ref: '#/components/schemas/Event' }, { type: 'object', properties: { type: { const: type }, data: { $ref: `#/components/schemas/${data}` } } }],
      };
      const example = examples().events[type];
      const post = {
        operationId: `on${name}`,
        summary: `Sent when ${type} happens; signed with Tolov-Signature`,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` }, ...(example === undefined ? {} : { example }) } },
        },
        responses: { '200': { description: 'Any 2xx acknowledges the delivery; anything else is retried' } },
      };
      return [type, { post }];
    }),
  );
}

/** The document's introduction: the conventions, every error code, every failureCode, and idempotency. */
function introduction(summary: unknown): string {
  const codes = (Object.keys(ERROR_STATUS) as ErrorCode[]).sort((a, b) => ERROR_STATUS[a] - ERROR_STATUS[b]);
  const shape = examples().errors.createOrder?.VALIDATION_ERROR;
  return [
    typeof summary === 'string' ? summary : '',
    'Amounts are integers in tiyin (1 UZS = 100 tiyin). Authenticate with a secret key: `Authorization: Bearer sk_test_…` (test mode) or `sk_live_…`. ' +
      'Every answer carries a `Request-Id` header. The examples below are answers of a real run of the API in test mode.',
    '## Errors',
    'Every refusal answers one JSON shape; `code` is stable, so branch on it, never on `message`, which is written for people. ' +
      '`param` names the field at fault, when there is one; `requestId` is also the `Request-Id` header.',
    ...(shape ? [`\`\`\`json\n${JSON.stringify(shape, null, 2)}\n\`\`\``] : []),
    'Each operation lists the codes it answers, by status. All codes:',
    ['| status | code | when |', '|---|---|---|', ...codes.map((code) => `| ${ERROR_STATUS[code]} | \`${code}\` | ${ERROR_MEANINGS[code]} |`)].join('\n'),
    "The guide to errors and validation is `docs/errors.md` in Tolov's repository (the service does not serve it).",
    '## Why a payment failed: `failureCode`',
    "A refusal by the bank is an outcome, not an error: the charge answers 201 with a payment intent `FAILED`, and `failureCode` says why. " +
      'These are every value a payment intent, order, card binding, checkout session, refund or payout carries (null while nothing failed):',
    ['| failureCode | on | meaning |', '|---|---|---|', ...Object.entries(FAILURE_CODES).map(([code, { on, meaning }]) => `| \`${code}\` | ${on} | ${meaning} |`)].join('\n'),
    '## Idempotency',
    'Send an `Idempotency-Key` header with a POST and retry it as often as needed: Tolov does the work once and answers every retry the same way, ' +
      'for 24 hours. Required where money moves or an order is made, accepted on every other merchant POST; each operation states its rules. ' +
      "The guide is `docs/idempotency.md` in Tolov's repository.",
  ].join('\n\n');
}

/** The finished description: its introduction, named components and the webhooks section. */
export function describeDocument({ openapiObject }: { openapiObject: Json }): Json {
  const existing = isObject(openapiObject.components) ? openapiObject.components : {};
  const schemas: Record<string, unknown> = { ...(isObject(existing.schemas) ? existing.schemas : {}) };
  const paths = hoistNamed(openapiObject.paths, schemas);
  const webhooks = describeWebhooks(schemas);
  const info = isObject(openapiObject.info) ? openapiObject.info : {};
  return { ...openapiObject, info: { ...info, description: introduction(info.description) }, paths, webhooks, components: { ...existing, schemas } };
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
