import { idem, type TestService } from './harness.js';

export const PHONE = '998901234567';
export const TEST_CODE = '111111';

/** Creates a card binding with the key and returns it with its session token. */
export async function createBinding(service: TestService, key: string, body: Record<string, unknown> = {}) {
  const reply = await service.call({ method: 'POST', url: '/subscribe/v1/card_bindings', key, idempotencyKey: idem(), body });
  if (reply.status !== 201) throw new Error(`binding creation failed: ${reply.text}`);
  return reply.body as { id: string; clientToken: string; url: string; [field: string]: unknown };
}

export const submitCard = (service: TestService, token: string, card: Record<string, unknown>) =>
  service.call({ method: 'POST', url: `/checkout/v1/sessions/${token}/card`, body: { expiry: '12/30', phone: PHONE, ...card } });

export const submitCode = (service: TestService, token: string, code: string) =>
  service.call({ method: 'POST', url: `/checkout/v1/sessions/${token}/code`, body: { code } });

export const resendCode = (service: TestService, token: string) =>
  service.call({ method: 'POST', url: `/checkout/v1/sessions/${token}/code/resend` });

export const sessionState = (service: TestService, token: string) => service.call({ method: 'GET', url: `/checkout/v1/sessions/${token}` });

/** Lets the resend cooldown pass, as if the last code had been sent a minute ago. */
export const passResendCooldown = (service: TestService, token: string) =>
  service.db.query("UPDATE checkout_sessions SET code_sent_at = now() - interval '1 minute' WHERE token = $1", [token]);

/** Binds `pan` all the way and returns the saved card id. */
export async function bindCard(service: TestService, key: string, pan: string, body: Record<string, unknown> = {}): Promise<string> {
  const binding = await createBinding(service, key, body);
  const card = await submitCard(service, binding.clientToken, { pan });
  if (card.status !== 200) throw new Error(`card refused: ${card.text}`);
  const code = await submitCode(service, binding.clientToken, TEST_CODE);
  if (code.status !== 200) throw new Error(`code refused: ${code.text}`);
  const read = await service.call({ method: 'GET', url: `/subscribe/v1/card_bindings/${binding.id}`, key });
  return read.body.card as string;
}
