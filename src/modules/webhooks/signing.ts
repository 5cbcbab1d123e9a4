// Signatures of a delivery, made over the exact bytes sent.
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_BYTES = 32;

/** `whsec_` + 32 random bytes in base64: also a valid Standard Webhooks secret. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** `Tolov-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body" keyed by the secret>`, one v1 per secret. */
export function tolovSignature(secrets: string[], timestamp: number, body: string): string {
  const signatures = secrets.map((secret) => `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`);
  return [`t=${timestamp}`, ...signatures].join(',');
}

/**
 * `webhook-signature` of the Standard Webhooks specification: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by
 * the base64-decoded part of the secret after `whsec_`; space-separated, one per secret.
 */
export function standardSignature(secrets: string[], messageId: string, timestamp: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      return `v1,${createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`).digest('base64')}`;
    })
    .join(' ');
}
