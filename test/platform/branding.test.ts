import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { dataUrl, logoPng } from '../support/png.js';

let service: TestService;
let merchant: Merchant;

describe("a product's branding, set by the operator and shown on the hosted pages", () => {
  beforeAll(async () => {
    service = await startService();
    merchant = await service.createMerchant({ name: 'chorsu-market-llc' });
  });
  afterAll(() => service?.stop());

  const branding = (body: unknown) => service.admin('POST', `/admin/v1/products/${merchant.productId}/branding`, body);
  const openPage = async () => {
    const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: idem(), body: { amount: 100 } });
    const path = new URL(order.body.paymentUrl).pathname;
    return Object.assign(await service.call({ method: 'GET', url: path }), { token: path.split('/pay/')[1]! });
  };

  it('starts with none, and changes only the fields sent', async () => {
    const before = await service.admin('GET', `/admin/v1/products/${merchant.productId}/branding`);
    expect(before.body).toEqual({ object: 'branding', product: merchant.productId, displayName: null, brandColor: null, logoUrl: null });

    const named = await branding({ displayName: 'Chorsu Market' });
    expect(named.status).toBe(200);
    const colored = await branding({ brandColor: '#C2410C' });
    expect(colored.body).toMatchObject({ displayName: 'Chorsu Market', brandColor: '#c2410c', logoUrl: null });
  });

  it('serves the logo itself, by an address that names its content, and the pages use name, colour and logo', async () => {
    const image = logoPng([194, 65, 12]);
    const reply = await branding({ logo: dataUrl('image/png', image) });
    expect(reply.status).toBe(200);
    const logoUrl = new URL(reply.body.logoUrl);
    expect(logoUrl.origin).toBe(service.config.checkoutUrl);
    expect(logoUrl.pathname).toMatch(/^\/brand\/logos\/[0-9a-f]{64}$/);

    const logo = await service.app.inject({ method: 'GET', url: logoUrl.pathname });
    expect(logo.statusCode).toBe(200);
    expect(logo.headers['content-type']).toBe('image/png');
    expect(logo.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(logo.headers['content-security-policy']).toBe("default-src 'none'");
    expect(logo.rawPayload.equals(image)).toBe(true);

    const page = await openPage();
    expect(page.text).toContain(`<img class="logo" src="${logoUrl.pathname}" alt="Chorsu Market">`);
    expect(page.text).toContain('<link rel="stylesheet" href="/brand/colors/c2410c.css">');
    expect(page.text).toContain('<p class="merchant" id="merchant">Chorsu Market uchun</p>');
    expect(page.text).not.toContain('chorsu-market-llc');
    // The session state the page's script reads names the product as buyers see it too.
    const state = await service.call({ method: 'GET', url: `/checkout/v1/sessions/${page.token}` });
    expect(state.body.productName).toBe('Chorsu Market');
  });

  it('writes a colour stylesheet whose button ink and link shade read on their backgrounds', async () => {
    const dark = await service.app.inject({ method: 'GET', url: '/brand/colors/c2410c.css' });
    expect(dark.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(dark.body).toBe(':root { --accent: #c2410c; --accent-ink: #ffffff; --accent-text: #c2410c; }\n');
    // A pale yellow: dark ink on the buttons, and a darker shade of it for text on white.
    const pale = await service.app.inject({ method: 'GET', url: '/brand/colors/fde047.css' });
    const [, ink, text] = /--accent-ink: (#\w+); --accent-text: (#\w+);/.exec(pale.body)!;
    expect(ink).toBe('#14213d');
    expect(text).not.toBe('#fde047');
    for (const url of ['/brand/colors/FDE047.css', '/brand/colors/fde04.css', '/brand/colors/fde047.js', '/brand/logos/abc']) {
      expect((await service.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
  });

  it('refuses what is not a small PNG, JPEG or WebP, or not a colour, naming the field and changing nothing', async () => {
    const before = (await service.admin('GET', `/admin/v1/products/${merchant.productId}/branding`)).body;
    const oneByteTooMany = Buffer.concat([logoPng([0, 0, 0]), Buffer.alloc(128 * 1024 + 1 - logoPng([0, 0, 0]).length)]);
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const cases: [unknown, string, RegExp][] = [
      [{ brandColor: 'orange' }, 'brandColor', /brandColor/],
      [{ brandColor: '#12345' }, 'brandColor', /brandColor/],
      [{ displayName: '' }, 'displayName', /displayName/],
      [{ logo: dataUrl('image/svg+xml', svg) }, 'logo', /PNG, JPEG or WebP/],
      [{ logo: dataUrl('image/png', Buffer.from('GIF89a not a png at all')) }, 'logo', /not a image\/png image/],
      [{ logo: dataUrl('image/jpeg', logoPng([0, 0, 0])) }, 'logo', /not a image\/jpeg image/],
      [{ logo: 'https://cdn.example.com/logo.png' }, 'logo', /data: URL/],
      [{ logo: dataUrl('image/png', oneByteTooMany) }, 'logo', /^logo is 131073 bytes; at most 131072 are taken$/],
      [{ colour: '#ffffff' }, 'colour', /Unknown field/],
    ];
    for (const [body, param, message] of cases) {
      const reply = await branding(body);
      expect(reply.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(reply.body).toMatchObject({ code: 'VALIDATION_ERROR', param, message: expect.stringMatching(message) });
    }
    expect((await service.admin('GET', `/admin/v1/products/${merchant.productId}/branding`)).body).toEqual(before);
    expect((await service.admin('POST', '/admin/v1/products/prod_missing/branding', { displayName: 'X' })).status).toBe(404);
    expect((await service.call({ method: 'POST', url: `/admin/v1/products/${merchant.productId}/branding`, key: merchant.test, body: { displayName: 'X' } })).status).toBe(401);
  });

  it('removes the logo and its image with null, and the pages fall back to Tolov', async () => {
    const { logoUrl } = (await service.admin('GET', `/admin/v1/products/${merchant.productId}/branding`)).body;
    const reply = await branding({ logo: null, brandColor: null, displayName: null });
    expect(reply.body).toMatchObject({ displayName: null, brandColor: null, logoUrl: null });
    expect((await service.app.inject({ method: 'GET', url: new URL(logoUrl).pathname })).statusCode).toBe(404);
    const page = await openPage();
    expect(page.text).toContain('<span class="brand">Tolov</span>');
    expect(page.text).not.toContain('/brand/');
    expect(page.text).toContain('chorsu-market-llc uchun');
  });
});
