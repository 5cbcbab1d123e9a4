// The bank gateway protocol (docs/rail-protocol.md), shared by Tolov's HTTP rail and the bank simulator.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-gateway-signature';
export const TIMESTAMP_HEADER = 'x-gateway-timestamp';
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** hex(HMAC-SHA256(secret, "<timestamp>.<body>")), for requests and answers alike. */
export function gatewaySignature(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

export function gatewaySignatureValid(secret: string, timestamp: string | undefined, signature: string | undefined, body: string, nowMs = Date.now()): boolean {
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || !signature || !/^[0-9a-f]{64}$/.test(signature)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) return false;
  return timingSafeEqual(Buffer.from(signature, 'hex'), Buffer.from(gatewaySignature(secret, Number(timestamp), body), 'hex'));
}

/** Every answer: done, refused (with a code), or pending (received, outcome not known yet: ask later). */
export type GatewayAnswer =
  | ({ result: 'ok' } & Record<string, unknown>)
  | { result: 'refused'; code: string }
  | { result: 'pending' }
  | { result: 'not_found' }
  | { result: 'fenced' };
