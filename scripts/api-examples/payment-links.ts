// Payment links: the shop sells a gift box at a fixed price with its fiscal lines, limited to the boxes it has, and
// takes donations of an amount the buyer chooses; it reads and lists them, and deactivates the box's link once the
// season ends. Each step also provokes the refusals a merchant meets: bounds the wrong way round, lines that do not add
// up, a link that does not exist.
import { Recorder } from './recorder.js';
import { APRICOTS_RECEIPT, type Shop } from './scenarios.js';

const ok = Recorder.expect;

export async function paymentLinksAreShared(s: Recorder, shop: Shop): Promise<void> {
  const create = (idempotencyKey: string, body: Record<string, unknown>) => s.call({ method: 'POST', url: '/v1/payment_links', key: shop.test, idempotencyKey, body });
  const box = { amount: 1_500_000, description: 'Dried apricots gift box, 2 kg, delivered in Samarkand', receipt: APRICOTS_RECEIPT, quantityMax: 50 };
  const made = ok(await create('link-gift-box', box), 201, 'payment link').body;
  ok(await create('link-donations', { description: 'Donation to the Samarkand school library', amountMin: 500_000, amountMax: 50_000_000 }), 201, 'donations');
  await create('link-bounds-reversed', { description: 'Donation', amountMin: 50_000_000, amountMax: 500_000 });
  await create('link-lines-short', { ...box, amount: 1_600_000 });
  ok(await s.call({ method: 'GET', url: `/v1/payment_links/${made.id}`, key: shop.test }), 200, 'payment link');
  ok(await s.call({ method: 'GET', url: '/v1/payment_links?active=true&limit=2', key: shop.test }), 200, 'payment links');
  ok(await s.call({ method: 'POST', url: `/v1/payment_links/${made.id}`, key: shop.test, idempotencyKey: 'link-gift-box-off', body: { active: false } }), 200, 'deactivate');
}
