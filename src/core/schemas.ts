// Field schemas shared by every resource, with the bounds the API promises (ids, amounts, texts, metadata).
import { Type, type Static } from '@sinclair/typebox';

export const AMOUNT_MAX = 1_000_000_000_000;

export const Amount = Type.Integer({ minimum: 1, maximum: AMOUNT_MAX, description: 'In tiyin (1 UZS = 100 tiyin)' });

export const HttpUrl = Type.String({
  maxLength: 2048,
  pattern: '^https?://[^\\s/?#]+([/?#]\\S*)?$',
  description: 'an http:// or https:// URL of at most 2048 characters',
});

export const Description = Type.String({ maxLength: 500 });
export const CustomerRef = Type.String({ minLength: 1, maxLength: 255 });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });
export const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export type IdParams = Static<typeof IdParams>;

export const CAPTURE_METHODS = ['automatic', 'manual'] as const;
export const CaptureMethod = Type.Union(CAPTURE_METHODS.map((method) => Type.Literal(method)), {
  description: '`manual`: the bank holds the amount (REQUIRES_CAPTURE) until you capture it (or part of it) or cancel; `automatic` (the default): it is taken at once',
});
export type CaptureMethod = (typeof CAPTURE_METHODS)[number];
