import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard, createBinding, passResendCooldown, resendCode, sessionState, submitCard, submitCode, TEST_CODE } from '../support/binding.js';
import { startService, type Merchant, type TestService } from '../support/harness.js';

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService({ TOLOV_SESSION_TTL_SECONDS: '600', TOLOV_CHECKOUT_URL: 'https://pay.example.uz' });
  merchant = await service.createMerchant({ name: 'Korzinka' });
});
afterAll(() => service.stop());

describe('binding a card', () => {
  it('creates a binding with a long client token and a hosted page', async () => {
    const reply = await service.call({
      method: 'POST',
      url: '/subscribe/v1/card_bindings',
      key: merchant.test,
      body: { customerRef: 'cust-9', returnUrl: 'https://shop.example.uz/cards' },
    });
    expect(reply.status).toBe(201);
    const binding = reply.body;
    expect(Object.keys(binding).sort()).toEqual(
      ['card', 'clientToken', 'created', 'customerRef', 'expiresAt', 'failureCode', 'id', 'livemode', 'object', 'returnUrl', 'status', 'url'].sort(),
    );
    expect(binding).toMatchObject({ object: 'card_binding', status: 'PENDING', card: null, customerRef: 'cust-9', livemode: false });
    expect(binding.id).toMatch(/^cb_/);
    expect(binding.clientToken).toMatch(/^cbs_[0-9A-Za-z]{40}$/);
    expect(binding.url).toBe(`https://pay.example.uz/bind/${binding.clientToken}`);
    expect(Date.parse(binding.expiresAt) - Date.parse(binding.created)).toBe(600_000);
    const read = await service.call({ method: 'GET', url: `/subscribe/v1/card_bindings/${binding.id}`, key: merchant.test });
    expect(read.body).toEqual(binding);
  });

  it('goes PENDING → AWAITING_CODE → (wrong code) → (resend) → COMPLETED, and saves the card', async () => {
    const binding = await createBinding(service, merchant.test, { customerRef: 'cust-1', returnUrl: 'https://shop.example.uz/done' });
    const token = binding.clientToken;

    const initial = await sessionState(service, token);
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({
      object: 'checkout_session',
      kind: 'card_binding',
      status: 'PENDING',
      productName: 'Korzinka',
      livemode: false,
      maskedPan: null,
      returnUrl: null,
      expiresAt: binding.expiresAt,
      failureCode: null,
      cardAttemptsLeft: 3,
      codeAttemptsLeft: 5,
      resendAvailableAt: null,
      order: null,
      canSaveCard: false,
      shopSuspended: false,
      receipt: null,
    });

    const card = await submitCard(service, token, { pan: '8600000000000007', expiry: '1230', phone: '998901234567' });
    expect(card.status).toBe(200);
    expect(card.body).toMatchObject({ status: 'AWAITING_CODE', maskedPan: '860000******0007', returnUrl: null, cardAttemptsLeft: 2 });
    expect(Date.parse(card.body.resendAvailableAt)).toBeGreaterThan(Date.now() + 20_000);

    const wrong = await submitCode(service, token, '222222');
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ code: 'WRONG_CODE', message: 'The code is wrong; 4 attempts left' });
    expect((await sessionState(service, token)).body).toMatchObject({ status: 'AWAITING_CODE', codeAttemptsLeft: 4 });

    await passResendCooldown(service, token);
    const resent = await resendCode(service, token);
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ status: 'AWAITING_CODE', codeAttemptsLeft: 4 });

    const done = await submitCode(service, token, TEST_CODE);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'COMPLETED', returnUrl: 'https://shop.example.uz/done', maskedPan: '860000******0007' });

    const read = await service.call({ method: 'GET', url: `/subscribe/v1/card_bindings/${binding.id}`, key: merchant.test });
    expect(read.body.status).toBe('COMPLETED');
    expect(read.body.card).toMatch(/^card_/);
    const saved = await service.call({ method: 'GET', url: `/subscribe/v1/cards/${read.body.card}`, key: merchant.test });
    expect(saved.body).toEqual({
      id: read.body.card,
      object: 'card',
      status: 'ACTIVE',
      maskedPan: '860000******0007',
      rail: 'uzcard',
      expiry: '12/30',
      customerRef: 'cust-1',
      livemode: false,
      created: expect.any(String),
    });
  });

  it.each([
    ['MMYY', '0731', '07/31'],
    ['MM/YY', '07/31', '07/31'],
    ['YYMM', '3107', '07/31'],
  ])('reads the expiry written as %s', async (_, expiry, shown) => {
    const binding = await createBinding(service, merchant.test);
    expect((await submitCard(service, binding.clientToken, { pan: '8600000000000007', expiry })).status).toBe(200);
    await submitCode(service, binding.clientToken, TEST_CODE);
    const read = await service.call({ method: 'GET', url: `/subscribe/v1/card_bindings/${binding.id}`, key: merchant.test });
    const card = await service.call({ method: 'GET', url: `/subscribe/v1/cards/${read.body.card}`, key: merchant.test });
    expect(card.body.expiry).toBe(shown);
  });

  it('saves a Humo card on the humo rail', async () => {
    const cardId = await bindCard(service, merchant.test, '9860000000000000');
    const card = await service.call({ method: 'GET', url: `/subscribe/v1/cards/${cardId}`, key: merchant.test });
    expect(card.body).toMatchObject({ rail: 'humo', maskedPan: '986000******0000', status: 'ACTIVE' });
  });

  it('accepts every valid card outside the test table as the first row does', async () => {
    const cardId = await bindCard(service, merchant.test, '8600123456789012');
    expect((await service.call({ method: 'GET', url: `/subscribe/v1/cards/${cardId}`, key: merchant.test })).body.maskedPan).toBe('860012******9012');
  });

  it('refuses the inactive test card with CARD_INACTIVE and leaves the session PENDING', async () => {
    const binding = await createBinding(service, merchant.test);
    const reply = await submitCard(service, binding.clientToken, { pan: '8600000000000023' });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('CARD_INACTIVE');
    expect((await sessionState(service, binding.clientToken)).body).toMatchObject({ status: 'PENDING', cardAttemptsLeft: 2, maskedPan: null });
    // The buyer may try another card.
    expect((await submitCard(service, binding.clientToken, { pan: '8600000000000007' })).body.status).toBe('AWAITING_CODE');
  });
});

describe('saved cards', () => {
  it('lists the cards of the product and mode, newest first', async () => {
    const shop = await service.createMerchant();
    const first = await bindCard(service, shop.test, '8600000000000007');
    const second = await bindCard(service, shop.test, '9860000000000000');
    const list = await service.call({ method: 'GET', url: '/subscribe/v1/cards', key: shop.test });
    expect(list.body.data.map((card: { id: string }) => card.id)).toEqual([second, first]);
    expect(list.body.has_more).toBe(false);
    const paged = await service.call({ method: 'GET', url: `/subscribe/v1/cards?limit=1&starting_after=${second}`, key: shop.test });
    expect(paged.body.data.map((card: { id: string }) => card.id)).toEqual([first]);
  });

  it('deletes a card, for good', async () => {
    const cardId = await bindCard(service, merchant.test, '8600000000000007');
    const deleted = await service.call({ method: 'DELETE', url: `/subscribe/v1/cards/${cardId}`, key: merchant.test });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: cardId, status: 'DELETED' });
    expect((await service.call({ method: 'DELETE', url: `/subscribe/v1/cards/${cardId}`, key: merchant.test })).body.status).toBe('DELETED');
    expect((await service.call({ method: 'GET', url: `/subscribe/v1/cards/${cardId}`, key: merchant.test })).body.status).toBe('DELETED');
  });

  it("answers another product's card, or the other mode's, with 404 on every call", async () => {
    const cardId = await bindCard(service, merchant.test, '8600000000000007');
    const other = await service.createMerchant();
    for (const key of [other.test, merchant.live]) {
      expect((await service.call({ method: 'GET', url: `/subscribe/v1/cards/${cardId}`, key })).status).toBe(404);
      expect((await service.call({ method: 'DELETE', url: `/subscribe/v1/cards/${cardId}`, key })).status).toBe(404);
      const list = await service.call({ method: 'GET', url: '/subscribe/v1/cards?limit=100', key });
      expect(list.body.data.map((card: { id: string }) => card.id)).not.toContain(cardId);
    }
    expect((await service.call({ method: 'GET', url: `/subscribe/v1/cards/${cardId}`, key: merchant.test })).body.status).toBe('ACTIVE');
  });
});
