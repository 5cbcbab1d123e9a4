// For receivers of Tolov webhooks: verify a delivery's signature on the raw body, then trust its JSON.
//
//   import { constructEvent } from '@tolov/node/webhooks';
//   const event = constructEvent(rawBody, request.headers, process.env.TOLOV_WEBHOOK_SECRET);
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { components } from './openapi.js';

export const DEFAULT_TOLERANCE_SECONDS = 300;
const SIGNATURE_HEADER_MAX = 2_048;

type Schemas = components['schemas'];
/**
 * The events Tolov sends, told apart by `type`. New types are added over time: a receiver skips those it does not know
 * (they arrive as `UnknownEvent`).
 */
export type TolovEvent =
  | Schemas['OrderPaidEvent']
  | Schemas['OrderFailedEvent']
  | Schemas['OrderExpiredEvent']
  | Schemas['PaymentIntentSucceededEvent']
  | Schemas['PaymentIntentFailedEvent']
  | Schemas['PaymentIntentRequiresCaptureEvent']
  | Schemas['PaymentIntentHoldReleasedEvent']
  | Schemas['ReceiptFiscalizedEvent']
  | Schemas['ReceiptFailedEvent']
  | Schemas['PayoutAccountUpdatedEvent']
  | Schemas['PayoutPaidEvent']
  | Schemas['PayoutFailedEvent']
  | UnknownEvent;

/**
 * An event of a type this version of the SDK does not know: skip it. At run time its `type` is that type's name; it is
 * typed `never` because TypeScript keeps any string-typed member in every narrowing, and then a check for a known
 * type (`event.type === 'receipt.failed'`) would not narrow `data` to that type's object.
 */
export interface UnknownEvent {
  id: string;
  object: 'event';
  type: never;
  livemode: boolean;
  created: string;
  data: Record<string, unknown>;
}

/** The `Tolov-Signature` header, from the header's value or from a request's headers (any case, Node or fetch). */
function signatureOf(headers: string | string[] | Record<string, unknown> | { get(name: string): string | null } | undefined): string | undefined {
  if (headers === undefined || typeof headers === 'string' || Array.isArray(headers)) return Array.isArray(headers) ? undefined : headers;
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(name: string): string | null }).get('tolov-signature') ?? undefined;
  const entry = Object.entries(headers).find(([name]) => name.toLowerCase() === 'tolov-signature');
  return typeof entry?.[1] === 'string' ? entry[1] : undefined;
}

export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

/**
 * Checks `Tolov-Signature` (`t=<unix seconds>,v1=<hex>[,v1=<hex>…]`) against the raw body and the endpoint's secret,
 * in constant time, and refuses timestamps more than `toleranceSeconds` away from now (replays). `headers` is the
 * request's headers or the header's value. Returns the parsed event; throws WebhookSignatureError otherwise, saying
 * why (answer 400). Several v1 values appear while a secret is being rolled.
 */
export function constructEvent(
  rawBody: string | Buffer | Uint8Array,
  headers: string | string[] | Record<string, unknown> | { get(name: string): string | null } | undefined,
  secret: string,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
  nowMs = Date.now(),
): TolovEvent {
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new WebhookSignatureError(
      'the body was parsed before its signature was checked: pass the raw body as received (a string or a Buffer), e.g. express.raw({ type: "application/json" })',
    );
  }
  if (typeof secret !== 'string' || !secret.startsWith('whsec_')) throw new WebhookSignatureError("the secret is not an endpoint's signing secret (whsec_…)");
  const signatureHeader = signatureOf(headers);
  if (typeof signatureHeader !== 'string' || signatureHeader.length === 0 || signatureHeader.length > SIGNATURE_HEADER_MAX) {
    throw new WebhookSignatureError('missing or malformed Tolov-Signature header');
  }
  let timestamp: number | null = null;
  const signatures: Buffer[] = [];
  let v1Seen = false;
  for (const part of signatureHeader.split(',')) {
    const [name, value = ''] = part.trim().split('=', 2);
    if (name === 't') {
      if (!/^\d{1,12}$/.test(value)) throw new WebhookSignatureError('Tolov-Signature t= is not a time in Unix seconds');
      timestamp = Number(value);
    }
    if (name === 'v1') {
      v1Seen = true;
      if (/^[0-9a-f]{64}$/.test(value)) signatures.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestamp === null) throw new WebhookSignatureError('Tolov-Signature lacks t=');
  if (!v1Seen) throw new WebhookSignatureError('Tolov-Signature lacks v1=');
  if (signatures.length === 0) throw new WebhookSignatureError('Tolov-Signature v1= is not 64 hexadecimal digits');
  if (Math.abs(nowMs / 1000 - timestamp) > toleranceSeconds) {
    throw new WebhookSignatureError(`the signature's timestamp is more than ${toleranceSeconds} s from now`);
  }
  const body = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  const expected = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest();
  if (!signatures.some((signature) => timingSafeEqual(signature, expected))) throw new WebhookSignatureError(mismatch(body));
  return JSON.parse(body) as TolovEvent;
}

/** Why no signature matched, as far as the (unverified) body can tell. */
function mismatch(body: string): string {
  let livemode: unknown;
  try {
    livemode = (JSON.parse(body) as { livemode?: unknown }).livemode;
  } catch {
    return 'no signature matches, and the body is not JSON: it was changed on the way (a proxy, or a framework that re-encoded it)';
  }
  const mode = livemode === true ? 'a live' : 'a test';
  return `no signature matches: the secret is not this endpoint's (this is ${mode} event: use the secret of the ${mode.slice(2)} endpoint it was sent to), or the body was re-serialised (verify the raw bytes)`;
}

/**
 * The headers Tolov signs a delivery of `payload` with, under `secret`: for tests of a receiver, and what `tolov listen`
 * forwards with. `Tolov-Signature` and the Standard Webhooks `webhook-*` headers, as a delivery carries them.
 */
export function signedHeaders(payload: string, secret: string, options: { eventId?: string; eventType?: string; timestamp?: number } = {}): Record<string, string> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const eventId = options.eventId ?? 'evt_test';
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return {
    'content-type': 'application/json',
    'tolov-signature': `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex')}`,
    'tolov-event-id': eventId,
    ...(options.eventType ? { 'tolov-event-type': options.eventType } : {}),
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${createHmac('sha256', key).update(`${eventId}.${timestamp}.${payload}`).digest('base64')}`,
  };
}
