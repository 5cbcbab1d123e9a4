import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../src/http/server.js';
import { expiry } from '../../src/workers/expiry.js';
import { createBinding, passResendCooldown, PHONE, resendCode, sessionState, submitCard, submitCode, TEST_CODE } from '../support/binding.js';
import { startService, type Merchant, type TestService } from '../support/harness.js';

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
});
afterAll(() => service.stop());

const newToken = async () => (await createBinding(service, merchant.test)).clientToken;
const expire = (token: string) =>
  service.db.query("UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE token = $1", [token]);
/** The merchant's view of the binding whose session `token` is. */
const bindingOf = async (token: string) => {
  const [row] = await service.db.query<{ id: string }>('SELECT id FROM card_bindings WHERE checkout_token = $1', [token]);
  return (await service.call({ method: 'GET', url: `/subscribe/v1/card_bindings/${row!.id}`, key: merchant.test })).body;
};
const cardAttemptsLeft = async (token: string) => (await sessionState(service, token)).body.cardAttemptsLeft as number;

describe('bad card data: refused naming the field, nothing saved', () => {
  it.each([
    ['a Luhn-invalid number', { pan: '8600000000000008' }, 'pan', 'INVALID_CARD'],
    ['non-digits', { pan: '8600-0000-0000-0007' }, 'pan', 'INVALID_CARD'],
    ['15 digits', { pan: '860000000000007' }, 'pan', 'INVALID_CARD'],
    ['17 digits', { pan: '86000000000000070' }, 'pan', 'INVALID_CARD'],
    ['an unknown network', { pan: '4111111111111111' }, 'pan', 'INVALID_CARD'],
    ['a month 13', { expiry: '13/30' }, 'expiry', 'INVALID_CARD'],
    ['no month in either reading', { expiry: '1313' }, 'expiry', 'INVALID_CARD'],
    ['letters in the expiry', { expiry: 'ab/cd' }, 'expiry', 'INVALID_CARD'],
    ['an expired card (MM/YY)', { expiry: '01/20' }, 'expiry', 'INVALID_CARD'],
    ['an expired card (MMYY)', { expiry: '0120' }, 'expiry', 'INVALID_CARD'],
  ])('refuses %s', async (_, card, param, code) => {
    const token = await newToken();
    const reply = await submitCard(service, token, { pan: '8600000000000007', ...card });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code, param });
    expect(reply.text).not.toContain('8600000000000');
    expect((await sessionState(service, token)).body).toMatchObject({ status: 'PENDING', maskedPan: null, cardAttemptsLeft: 2 });
    const cards = await service.db.query('SELECT id FROM cards WHERE product_id = $1', [merchant.productId]);
    expect(cards).toHaveLength(0);
  });

  it.each([
    ['the country code twice', '998998901234567'],
    ['no country code', '901234567'],
    ['a plus', '+998901234567'],
    ['spaces', '998 90 123 45 67'],
    ['8 national digits', '99890123456'],
    ['10 national digits', '9989012345678'],
    ['letters', '99890123456x'],
    ['another country', '79161234567'],
    ['nothing', ''],
  ])('refuses a phone with %s as VALIDATION_ERROR, before it costs an attempt or reaches the bank', async (_, phone) => {
    const token = await newToken();
    const reply = await submitCard(service, token, { pan: '8600000000000007', phone });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'VALIDATION_ERROR', param: 'phone', message: expect.stringContaining('998901234567') });
    expect((await sessionState(service, token)).body).toMatchObject({ status: 'PENDING', maskedPan: null, cardAttemptsLeft: 3 });
    expect(await service.db.query('SELECT id FROM cards WHERE product_id = $1', [merchant.productId])).toHaveLength(0);
    // The session is as it was: the same card with the phone as the contract writes it goes through.
    expect((await submitCard(service, token, { pan: '8600000000000007', phone: PHONE })).body).toMatchObject({ status: 'AWAITING_CODE' });
  });

  it('says an expired card has expired', async () => {
    const reply = await submitCard(service, await newToken(), { pan: '8600000000000007', expiry: '01/21' });
    expect(reply.body.message).toBe('The card has expired');
  });

  it.each([
    ['a missing pan', { expiry: '12/30', phone: PHONE }, 'pan'],
    ['a numeric pan', { pan: 8600000000000007, expiry: '12/30', phone: PHONE }, 'pan'],
    ['an unknown field', { pan: '8600000000000007', expiry: '12/30', phone: PHONE, cvv: '123' }, 'cvv'],
    ['an over-long pan', { pan: '8'.repeat(33), expiry: '12/30', phone: PHONE }, 'pan'],
  ])('refuses %s before counting an attempt', async (_, body, param) => {
    const token = await newToken();
    const reply = await service.call({ method: 'POST', url: `/checkout/v1/sessions/${token}/card`, body });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'VALIDATION_ERROR', param });
    expect(await cardAttemptsLeft(token)).toBe(3);
  });

  it('refuses an oversized body with 413', async () => {
    const reply = await service.call({
      method: 'POST',
      url: `/checkout/v1/sessions/${await newToken()}/card`,
      payload: JSON.stringify({ pan: '8600000000000007', expiry: '12/30', phone: PHONE, pad: 'x'.repeat(BODY_LIMIT_BYTES) }),
    });
    expect(reply.status).toBe(413);
  });
});

describe('state rules', () => {
  it('refuses a code before a card, and a resend before a card, with 409 INVALID_STATE', async () => {
    const token = await newToken();
    expect((await submitCode(service, token, TEST_CODE)).body).toMatchObject({ code: 'INVALID_STATE' });
    expect((await resendCode(service, token)).body).toMatchObject({ code: 'INVALID_STATE' });
    expect((await sessionState(service, token)).body).toMatchObject({ status: 'PENDING', codeAttemptsLeft: 5 });
  });

  it('refuses a second card while the code is awaited, and every call after completion', async () => {
    const token = await newToken();
    await submitCard(service, token, { pan: '8600000000000007' });
    const second = await submitCard(service, token, { pan: '9860000000000000' });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('INVALID_STATE');
    expect((await sessionState(service, token)).body).toMatchObject({ maskedPan: '860000******0007', cardAttemptsLeft: 2 });
    await submitCode(service, token, TEST_CODE);
    for (const reply of [
      await submitCard(service, token, { pan: '8600000000000007' }),
      await submitCode(service, token, TEST_CODE),
      await resendCode(service, token),
    ]) {
      expect(reply.status).toBe(409);
      expect(reply.body.code).toBe('INVALID_STATE');
    }
    expect(await service.db.query('SELECT id FROM cards WHERE product_id = $1 AND masked_pan = $2', [merchant.productId, '860000******0007'])).toHaveLength(1);
  });

  it('answers an unknown token with 404 on every call', async () => {
    const token = 'cbs_doesnotexist00000000000000000000000000';
    for (const reply of [
      await sessionState(service, token),
      await submitCard(service, token, { pan: '8600000000000007' }),
      await submitCode(service, token, TEST_CODE),
      await resendCode(service, token),
    ]) {
      expect(reply.status).toBe(404);
      expect(reply.body.code).toBe('NOT_FOUND');
    }
  });

  it('answers an expired session with 410 Gone on every call, and records it EXPIRED on read', async () => {
    const binding = await createBinding(service, merchant.test);
    await submitCard(service, binding.clientToken, { pan: '8600000000000007' });
    await expire(binding.clientToken);
    for (const reply of [
      await sessionState(service, binding.clientToken),
      await submitCard(service, binding.clientToken, { pan: '8600000000000007' }),
      await submitCode(service, binding.clientToken, TEST_CODE),
      await resendCode(service, binding.clientToken),
    ]) {
      expect(reply.status).toBe(410);
      expect(reply.body).toMatchObject({ statusCode: 410, error: 'Gone', code: 'SESSION_EXPIRED' });
    }
    const [row] = await service.db.query<{ status: string }>('SELECT status FROM checkout_sessions WHERE token = $1', [binding.clientToken]);
    expect(row!.status).toBe('EXPIRED');
    const read = await service.call({ method: 'GET', url: `/subscribe/v1/card_bindings/${binding.id}`, key: merchant.test });
    expect(read.body).toMatchObject({ status: 'EXPIRED', card: null });
  });

  it('reads a binding past its time as EXPIRED even before any public call or worker', async () => {
    const binding = await createBinding(service, merchant.test);
    await expire(binding.clientToken);
    const read = await service.call({ method: 'GET', url: `/subscribe/v1/card_bindings/${binding.id}`, key: merchant.test });
    expect(read.body.status).toBe('EXPIRED');
  });

  it('has a worker that expires open sessions past their time, and only those', async () => {
    const due = await createBinding(service, merchant.test);
    const fresh = await createBinding(service, merchant.test);
    await expire(due.clientToken);
    const worker = expiry(service.orders, service.bindings, 1_000);
    expect(await worker.runOnce()).toBeGreaterThanOrEqual(1);
    const statuses = await service.db.query<{ token: string; status: string }>('SELECT token, status FROM checkout_sessions WHERE token = ANY($1)', [
      [due.clientToken, fresh.clientToken],
    ]);
    expect(Object.fromEntries(statuses.map((row) => [row.token, row.status]))).toEqual({
      [due.clientToken]: 'EXPIRED',
      [fresh.clientToken]: 'PENDING',
    });
  });
});

describe('attempt limits', () => {
  it('allows 3 card submissions; the 4th is 429 TOO_MANY_ATTEMPTS', async () => {
    const token = await newToken();
    for (let i = 0; i < 3; i++) expect((await submitCard(service, token, { pan: '8600000000000023' })).body.code).toBe('CARD_INACTIVE');
    const fourth = await submitCard(service, token, { pan: '8600000000000007' });
    expect(fourth.status).toBe(429);
    expect(fourth.body.code).toBe('TOO_MANY_ATTEMPTS');
    // The third refusal closed the session: it says why, and so does the merchant's binding.
    expect((await sessionState(service, token)).body).toMatchObject({ status: 'FAILED', failureCode: 'TOO_MANY_ATTEMPTS', cardAttemptsLeft: 0 });
    expect(await bindingOf(token)).toMatchObject({ status: 'FAILED', failureCode: 'TOO_MANY_ATTEMPTS', card: null });
  });

  it('allows 5 codes; the 6th is 429 even if right, and resending never resets the count', async () => {
    const token = await newToken();
    await submitCard(service, token, { pan: '8600000000000007' });
    for (let i = 0; i < 5; i++) {
      if (i === 3) {
        await passResendCooldown(service, token);
        expect((await resendCode(service, token)).status).toBe(200);
      }
      expect((await submitCode(service, token, '000000')).body.code).toBe('WRONG_CODE');
    }
    const sixth = await submitCode(service, token, TEST_CODE);
    expect(sixth.status).toBe(429);
    expect(sixth.body.code).toBe('TOO_MANY_ATTEMPTS');
    expect((await sessionState(service, token)).body).toMatchObject({ status: 'FAILED', failureCode: 'TOO_MANY_ATTEMPTS', codeAttemptsLeft: 0 });
    expect(await bindingOf(token)).toMatchObject({ status: 'FAILED', failureCode: 'TOO_MANY_ATTEMPTS', card: null });
    expect((await resendCode(service, token)).body.code).toBe('TOO_MANY_ATTEMPTS');
  });

  it('makes the buyer wait between codes, with Retry-After', async () => {
    const token = await newToken();
    await submitCard(service, token, { pan: '8600000000000007' });
    const early = await resendCode(service, token);
    expect(early.status).toBe(429);
    expect(early.body.code).toBe('RATE_LIMITED');
    expect(Number(early.headers['retry-after'])).toBeGreaterThan(20);
  });

  it('sends at most 5 codes per session', async () => {
    const token = await newToken();
    await submitCard(service, token, { pan: '8600000000000007' });
    for (let i = 0; i < 4; i++) {
      await passResendCooldown(service, token);
      expect((await resendCode(service, token)).status).toBe(200);
    }
    await passResendCooldown(service, token);
    const sixth = await resendCode(service, token);
    expect(sixth.status).toBe(429);
    expect(sixth.body.code).toBe('TOO_MANY_ATTEMPTS');
    expect((await sessionState(service, token)).body.resendAvailableAt).toBeNull();
  });
});

describe('concurrent calls', () => {
  it('saves one card when the right code is submitted twice at once', async () => {
    const binding = await createBinding(service, merchant.test);
    await submitCard(service, binding.clientToken, { pan: '8600000000000007' });
    const replies = await Promise.all([submitCode(service, binding.clientToken, TEST_CODE), submitCode(service, binding.clientToken, TEST_CODE)]);
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409]);
    const cards = await service.db.query('SELECT c.id FROM cards c JOIN card_bindings b ON b.card_id = c.id WHERE b.id = $1', [binding.id]);
    expect(cards).toHaveLength(1);
  });

  it('accepts one of two cards submitted at once', async () => {
    const token = await newToken();
    const replies = await Promise.all([submitCard(service, token, { pan: '8600000000000007' }), submitCard(service, token, { pan: '9860000000000000' })]);
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409]);
  });
});

describe('the merchant side', () => {
  it('needs the subscribe scope', async () => {
    const sales = await service.createMerchant({ scopes: ['sale_of_goods'] });
    const reply = await service.call({ method: 'POST', url: '/subscribe/v1/card_bindings', key: sales.test, body: {} });
    expect(reply.status).toBe(403);
    expect(reply.body.code).toBe('SCOPE_REQUIRED');
  });

  it('answers a live binding with 503 RAIL_UNAVAILABLE and creates nothing', async () => {
    const reply = await service.call({ method: 'POST', url: '/subscribe/v1/card_bindings', key: merchant.live, body: {} });
    expect(reply.status).toBe(503);
    expect(reply.body.code).toBe('RAIL_UNAVAILABLE');
    expect(await service.db.query('SELECT id FROM card_bindings WHERE product_id = $1 AND livemode', [merchant.productId])).toHaveLength(0);
  });

  it.each([
    [{ returnUrl: 'javascript:alert(1)' }, 'returnUrl'],
    [{ customerRef: '' }, 'customerRef'],
    [{ card: 'card_x' }, 'card'],
  ])('refuses %j', async (body, param) => {
    const reply = await service.call({ method: 'POST', url: '/subscribe/v1/card_bindings', key: merchant.test, body });
    expect(reply.status).toBe(400);
    expect(reply.body.param).toBe(param);
  });

  it("answers another product's binding, or the other mode's, with 404", async () => {
    const binding = await createBinding(service, merchant.test);
    const other = await service.createMerchant();
    for (const key of [other.test, merchant.live]) {
      expect((await service.call({ method: 'GET', url: `/subscribe/v1/card_bindings/${binding.id}`, key })).status).toBe(404);
    }
  });
});

describe('the public calls', () => {
  it('reveal nothing sensitive in the state', async () => {
    const token = await newToken();
    await submitCard(service, token, { pan: '8600000000000007' });
    const state = await sessionState(service, token);
    expect(state.text).not.toMatch(/8600000000000007|998901234567|tr_|rail_token|phone/);
  });

  it('may be called from any origin without credentials', async () => {
    const token = await newToken();
    const preflight = await service.call({
      method: 'OPTIONS' as 'GET',
      url: `/checkout/v1/sessions/${token}/card`,
      headers: { origin: 'https://shop.example.uz', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(preflight.headers['access-control-allow-methods']).toContain('POST');
    expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
    const state = await sessionState(service, token);
    expect(state.headers['access-control-allow-origin']).toBe('*');
    const error = await submitCode(service, token, TEST_CODE);
    expect(error.headers['access-control-allow-origin']).toBe('*');
  });

  it('are rate limited per session token, with Retry-After', async () => {
    const token = await newToken();
    let limited: Awaited<ReturnType<typeof sessionState>> | undefined;
    for (let i = 0; i < 70 && !limited; i++) {
      const reply = await sessionState(service, token);
      if (reply.status === 429) limited = reply;
    }
    expect(limited?.body.code).toBe('RATE_LIMITED');
    expect(Number(limited?.headers['retry-after'])).toBeGreaterThan(0);
    // Another session from the same address is not affected yet.
    expect((await sessionState(service, await newToken())).status).toBe(200);
  });

  it('are rate limited per client address across sessions', async () => {
    const strict = await startService({ TOLOV_RATE_LIMIT_ADDRESS_PER_MINUTE: '5' });
    try {
      const shop = await strict.createMerchant();
      const tokens = await Promise.all(Array.from({ length: 6 }, async () => (await createBinding(strict, shop.test)).clientToken));
      const statuses: number[] = [];
      for (const token of tokens) statuses.push((await sessionState(strict, token)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    } finally {
      await strict.stop();
    }
  });
});
