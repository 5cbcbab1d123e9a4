// Payment links with the Node SDK against a running service: a link made, read, listed by its state and turned off,
// its orders listed by the link, and a refusal as a typed error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Tolov, { TolovError, type PaymentLink } from '../../packages/node/src/index.js';
import { startService, type TestService } from '../support/harness.js';

let service: TestService;
let tolov: Tolov;
beforeAll(async () => {
  service = await startService();
  const base = await service.app.listen({ port: 0, host: '127.0.0.1' });
  tolov = new Tolov((await service.createMerchant({ name: 'SDK Links' })).test, { baseUrl: base });
});
afterAll(async () => service.stop());

describe('payment links with the Node SDK', () => {
  it('makes, reads, lists and turns off a link, with typed answers', async () => {
    const link = await tolov.paymentLinks.create({ description: 'Xayriya', amountMin: 500_000, amountMax: 50_000_000 });
    // Typed as the API describes it: a wrong field would not compile.
    const shown: Pick<PaymentLink, 'amount' | 'amountMin' | 'active' | 'quantityMax'> = link;
    expect(shown).toMatchObject({ amount: null, amountMin: 500_000, active: true, quantityMax: null });
    expect(link.url).toMatch(/\/l\/[0-9A-Za-z]{10}$/);
    expect(link.qrSvgUrl).toBe(`${link.url}/qr.svg`);
    expect(await tolov.paymentLinks.retrieve(link.id)).toEqual(link);

    const off = await tolov.paymentLinks.update(link.id, { active: false, description: 'Xayriya (yopildi)' });
    expect(off).toMatchObject({ id: link.id, active: false, description: 'Xayriya (yopildi)' });
    expect((await tolov.paymentLinks.list({ active: false })).data.map((each) => each.id)).toContain(link.id);
    expect((await tolov.paymentLinks.list({ active: true })).data.map((each) => each.id)).not.toContain(link.id);
  });

  it('lists the orders a link opened', async () => {
    const link = await tolov.paymentLinks.create({ amount: 1_500_000, description: 'Non' });
    const opened = await service.paymentLinks.open(new URL(link.url).pathname.split('/l/')[1]!, null);
    expect(opened.outcome).toBe('opened');
    const orders = await tolov.orders.list({ paymentLink: link.id });
    expect(orders.data).toMatchObject([{ amount: 1_500_000, paymentLink: link.id }]);
  });

  it('refuses bounds given beside a fixed amount, as a typed error', async () => {
    const refused = await tolov.paymentLinks.create({ amount: 1_000, amountMin: 1_000, description: 'Bad' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(TolovError);
    expect((refused as TolovError).code).toBe('VALIDATION_ERROR');
  });
});
