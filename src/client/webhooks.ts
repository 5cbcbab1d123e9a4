// For receivers of Tolov webhooks: verify a delivery's signature on the raw body, then trust its JSON.
//
//   import { constructEvent } from 'tolov/webhooks';
//   const event = constructEvent(rawBody, request.headers['tolov-signature'], process.env.TOLOV_WEBHOOK_SECRET);
import { createHmac, timingSafeEqual } from 'node:crypto';

export const DEFAULT_TOLERANCE_SECONDS = 300;
const SIGNATURE_HEADER_MAX = 2_048;

export interface TolovEvent {
  id: string;
  object: 'event';
  type: string;
  livemode: boolean;
  created: string;
  data: Record<string, unknown>;
}

export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

/**
 * Checks `Tolov-Signature` (`t=<unix seconds>,v1=<hex>[,v1=<hex>…]`) against the raw body and the endpoint's secret,
 * in constant time, and refuses timestamps more than `toleranceSeconds` away from now (replays). Returns the parsed
 * event; throws WebhookSignatureError otherwise (answer 400). Several v1 values appear while a secret is being rolled.
 */
export function constructEvent(
  rawBody: string | Buffer,
  signatureHeader: string | string[] | undefined,
  secret: string,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
  nowMs = Date.now(),
): TolovEvent {
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
  const body = typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8');
  const expected = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest();
  if (!signatures.some((signature) => timingSafeEqual(signature, expected))) {
    throw new WebhookSignatureError('no signature matches: wrong secret, or the body was changed');
  }
  return JSON.parse(body) as TolovEvent;
}
