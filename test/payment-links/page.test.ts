// A payment link's public page over HTTP, on both engines: a visit opens nothing, Pay opens one order of the link and
// takes the buyer to the hosted page, the amount a buyer types is read as so'm and checked on the server, a link
// turned off (or out of places) says so and opens nothing, even when it is turned off while the buyer presses Pay, and
// its QR code is served to print.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, startService, type Merchant, type Reply, type TestService } from '../support/harness.js';

let service: TestService;
let shop: Merchant;

beforeAll(async () => {
  service = await startService();
  shop = await service.createMerchant({ name: 'Choyxona Navroʻz' });
});
afterAll(() => service?.stop());

async function createLink(body: Record<string, unknown>): Promise<{ id: string; url: string; slug: string; qrSvgUrl: string }> {
  const reply = await service.call({ method: 'POST', url: '/v1/payment_links', key: shop.test, idempotencyKey: idem(), body });
  if (reply.status !== 201) throw new Error(`link refused: ${reply.text}`);
  return { ...reply.body, slug: new URL(reply.body.url).pathname.split('/l/')[1]! };
}

const page = (slug: string, lang = 'en') => service.call({ method: 'GET', url: `/l/${slug}?lang=${lang}` });
/** The Pay button: the form as a browser posts it. */
const pay = (slug: string, amount?: string, lang = 'en') =>
  service.call({
    method: 'POST',
    url: `/l/${slug}?lang=${lang}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: amount === undefined ? '' : new URLSearchParams({ amount }).toString(),
  });
const ordersOf = async (linkId: string) =>
  (await service.call({ method: 'GET', url: `/merchant/v1/orders?paymentLink=${linkId}&limit=100`, key: shop.test })).body.data as Array<Record<string, any>>;
const visibleText = (reply: Reply) => reply.text.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ');

describe('a payment link’s page', () => {
  it('shows what is sold and by whom, and a visit opens no order', async () => {
    const link = await createLink({ amount: 4_500_000, description: 'Osh for two' });
    const shown = await page(link.slug);
    expect(shown.status).toBe(200);
    expect(shown.headers['content-security-policy']).toContain("form-action 'self'");
    expect(shown.headers['cache-control']).toBe('no-store');
    expect(visibleText(shown)).toContain('Osh for two');
    expect(visibleText(shown)).toContain('For Choyxona Navroʻz');
    expect(visibleText(shown)).toContain('Pay UZS 45,000.00');
    expect(visibleText(shown)).toContain('Test mode');
    expect(await ordersOf(link.id)).toEqual([]);
  });

  it('opens one order of the link on Pay and sends the buyer to its hosted page, in their language', async () => {
    const link = await createLink({ amount: 4_500_000, description: 'Osh for two' });
    const paid = await pay(link.slug, undefined, 'ru');
    expect(paid.status).toBe(303);
    const [order] = await ordersOf(link.id);
    expect(order).toMatchObject({ amount: 4_500_000, description: 'Osh for two', paymentLink: link.id, status: 'PENDING' });
    expect(paid.headers.location).toBe(`${new URL(order!.paymentUrl).pathname}?lang=ru`);
    const hosted = await service.call({ method: 'GET', url: String(paid.headers.location) });
    expect(hosted.status).toBe(200);
  });

  it.each([
    ['150 000,50', 15_000_050],
    ['150000.5', 15_000_050],
    ['1,500', 150_000],
    ['1.500,25', 150_025],
    ['\u00a012\u00a0345 ', 1_234_500],
  ])('reads %j typed by the buyer as so’m', async (typed, tiyin) => {
    const link = await createLink({ description: 'Donation', amountMin: 100_000, amountMax: 100_000_000 });
    expect((await pay(link.slug, typed)).status).toBe(303);
    expect((await ordersOf(link.id)).map((order) => order.amount)).toEqual([tiyin]);
  });

  it.each([['abc'], [''], ['1,5,0'], ['999,99'], ['1 000 000,01'], ['12.345.678']])('refuses %j, saying the range, and opens nothing', async (typed) => {
    const link = await createLink({ description: 'Donation', amountMin: 100_000, amountMax: 100_000_000 });
    const refused = await pay(link.slug, typed, 'uz');
    expect(refused.status).toBe(400);
    // (The text is read with its no-break spaces as spaces.)
    expect(visibleText(refused)).toContain('1 000,00 soʻm dan 1 000 000,00 soʻm gacha summani kiriting');
    expect(refused.text).toContain('aria-invalid="true"');
    expect(await ordersOf(link.id)).toEqual([]);
  });

  it('says when it is turned off, and opens nothing', async () => {
    const link = await createLink({ amount: 100_000, description: 'Tea' });
    await service.call({ method: 'POST', url: `/v1/payment_links/${link.id}`, key: shop.test, body: { active: false } });
    for (const reply of [await page(link.slug), await pay(link.slug)]) {
      expect(reply.status).toBe(410);
      expect(visibleText(reply)).toContain('This link is turned off');
      expect(reply.text).not.toContain('<form');
    }
    expect(await ordersOf(link.id)).toEqual([]);
  });

  it('says when no places are left, and frees a place when its order is canceled', async () => {
    const link = await createLink({ amount: 100_000, description: 'Concert ticket', quantityMax: 1 });
    expect((await pay(link.slug)).status).toBe(303);
    const soldOut = await pay(link.slug);
    expect(soldOut.status).toBe(409);
    expect(visibleText(soldOut)).toContain('Sold out');
    const [order] = await ordersOf(link.id);
    await service.call({ method: 'POST', url: `/merchant/v1/orders/${order!.id}/cancel`, key: shop.test, idempotencyKey: idem() });
    expect((await pay(link.slug)).status).toBe(303);
  });

  it('answers an unknown link with the hosted pages’ not-found page', async () => {
    for (const reply of [await page('NoSuchLink1'), await pay('NoSuchLink1'), await page('bad-slug!')]) {
      expect(reply.status).toBe(404);
    }
    expect(visibleText(await page('NoSuchLink1'))).toContain('Link not found');
  });

  it('never opens an order on a link turned off while the buyer presses Pay', async () => {
    for (let round = 0; round < 8; round++) {
      const link = await createLink({ amount: 100_000, description: `Race ${round}` });
      const [paid] = await Promise.all([
        pay(link.slug),
        service.call({ method: 'POST', url: `/v1/payment_links/${link.id}`, key: shop.test, body: { active: false } }),
      ]);
      // The database decides: the order was opened before the link went off, or the page says it is off.
      expect([303, 410]).toContain(paid.status);
      expect((await ordersOf(link.id)).length).toBe(paid.status === 303 ? 1 : 0);
    }
  });

  it('serves its QR code as SVG and as a PNG to print, and as a file to download', async () => {
    const link = await createLink({ amount: 100_000, description: 'Tea' });
    const svg = await service.call({ method: 'GET', url: new URL(link.qrSvgUrl).pathname });
    expect(svg.status).toBe(200);
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    expect(svg.text).toMatch(/^<svg [^>]*viewBox/);
    const png = await service.app.inject({ method: 'GET', url: `/l/${link.slug}/qr.png?download` });
    expect(png.headers['content-type']).toBe('image/png');
    expect(png.headers['content-disposition']).toBe(`attachment; filename="tolov-${link.slug}.png"`);
    // The IHDR chunk: 1200 × 1200 pixels, 10 cm at 300 dpi.
    expect([png.rawPayload.readUInt32BE(16), png.rawPayload.readUInt32BE(20)]).toEqual([1200, 1200]);
    expect((await service.call({ method: 'GET', url: '/l/NoSuchLink1/qr.svg' })).status).toBe(404);
  });
});
