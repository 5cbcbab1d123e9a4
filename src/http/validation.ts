import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { ApiError } from '../core/errors.js';

// Bodies are taken exactly as sent: no type coercion ("100" is not an amount), no silent removal of unknown fields.
const bodyAjv = new Ajv({ allErrors: false, coerceTypes: false, removeAdditional: false, useDefaults: false, verbose: true, strict: false });
// Query strings and path parameters arrive as text, so integers there are coerced.
const queryAjv = new Ajv({ allErrors: false, coerceTypes: true, removeAdditional: false, useDefaults: true, verbose: true, strict: false });

/** Nesting a request's text is searched to; deeper is refused (bodies are bounded by size, this bounds the walk). */
const TEXT_DEPTH_MAX = 32;

/** Text PostgreSQL stores as sent: well-formed Unicode (no lone surrogate) without U+0000. */
const isStorableText = (text: string) => text.isWellFormed() && !text.includes('\u0000');

/**
 * The first string of `value` (object keys included) that is not storable text, as the parameter naming it, or null.
 * Every string the API takes goes through here (body, query and path), so that such text is a 400 naming the field
 * before anything runs, never a database error.
 */
export function unstorableText(value: unknown, param: string, depth = 0): string | null {
  if (typeof value === 'string') return isStorableText(value) ? null : param;
  if (value === null || typeof value !== 'object') return null;
  if (depth >= TEXT_DEPTH_MAX) return param;
  for (const [key, child] of Object.entries(value)) {
    if (!isStorableText(key)) return param;
    const found = unstorableText(child, param === '' ? key : `${param}.${key}`, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/** Refuses a request carrying text that is not storable, naming where it is. */
export function checkRequestText(request: { body: unknown; query: unknown; params: unknown }): void {
  for (const [part, value] of [['body', request.body], ['query', request.query], ['path', request.params]] as const) {
    const param = unstorableText(value, '');
    if (param !== null) {
      throw new ApiError('VALIDATION_ERROR', `${param || part} must be valid Unicode text without U+0000`, { param: param || part });
    }
  }
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const validate = (httpPart === 'body' ? bodyAjv : queryAjv).compile(schema) as ValidateFunction;
  const integers = httpPart === 'body' ? [] : integerProperties(schema);
  return (data: unknown) => {
    // A POST without a body is validated as an empty object, so a missing field is named rather than the body.
    const value = httpPart === 'body' && data === undefined ? {} : data;
    const loose = integers.find((name) => {
      const text = (value as Record<string, unknown> | null)?.[name];
      return typeof text === 'string' && !/^-?\d{1,16}$/.test(text);
    });
    if (loose !== undefined) return { error: new ApiError('VALIDATION_ERROR', `${loose} must be an integer in decimal digits`, { param: loose }) };
    return validate(value) ? { value } : { error: toApiError(validate.errors ?? [], httpPart) };
  };
};

/**
 * The integer parameters of a query or path schema. Their text is coerced to a number only when it is plain decimal
 * digits: coercion alone would also read `1e1`, `0x10` or ` 10` as 10.
 */
function integerProperties(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.entries(properties)
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name);
}

function paramOf(error: ErrorObject, httpPart: string | undefined): string {
  const path = error.instancePath.split('/').slice(1).join('.');
  const child =
    error.keyword === 'additionalProperties'
      ? String(error.params.additionalProperty)
      : error.keyword === 'required'
        ? String(error.params.missingProperty)
        : '';
  const param = [path, child].filter(Boolean).join('.');
  return param || (httpPart === 'body' ? 'body' : 'query');
}

/** Turns the first schema violation into one clear VALIDATION_ERROR naming the field. */
export function toApiError(errors: ErrorObject[], httpPart?: string): ApiError {
  const error = errors[0];
  if (!error) return new ApiError('VALIDATION_ERROR', 'Invalid request');
  const param = paramOf(error, httpPart);
  // A key of an object with free-form keys (metadata) broke the rule for keys.
  if ('propertyName' in error) return new ApiError('VALIDATION_ERROR', `${param} keys must be 1 to 40 characters`, { param });
  const schema = (error.parentSchema ?? {}) as Record<string, unknown>;
  const messages: Record<string, () => string> = {
    additionalProperties: () => `Unknown field ${param}`,
    required: () => `${param} is required`,
    type: () => (param === 'body' ? 'The body must be a JSON object' : `${param} must be ${article(String(error.params.type))}`),
    minimum: () => rangeMessage(param, schema),
    maximum: () => rangeMessage(param, schema),
    minLength: () => `${param} must be at least ${String(schema.minLength)} characters`,
    maxLength: () => `${param} must be at most ${String(schema.maxLength)} characters`,
    pattern: () => `${param} is not valid: ${String(schema.description ?? 'wrong format')}`,
    enum: () => `${param} must be one of ${(schema.enum as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
    const: () => `${param} must be ${JSON.stringify(schema.const)}`,
    maxItems: () => `${param} must have at most ${String(schema.maxItems)} items`,
    minItems: () => `${param} must have at least ${String(schema.minItems)} items`,
    uniqueItems: () => `${param} must not repeat items`,
    maxProperties: () => `${param} must have at most ${String(schema.maxProperties)} keys`,
  };
  return new ApiError('VALIDATION_ERROR', (messages[error.keyword] ?? (() => `${param} is invalid`))(), { param });
}

function article(type: string): string {
  return type === 'integer' || type === 'object' || type === 'array' ? `an ${type}` : `a ${type}`;
}

function rangeMessage(param: string, schema: Record<string, unknown>): string {
  const type = schema.type === 'integer' ? 'an integer' : 'a number';
  return `${param} must be ${type} from ${String(schema.minimum)} to ${String(schema.maximum)}`;
}
