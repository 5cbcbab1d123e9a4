// Branding in the dashboard: what buyers see on the hosted pages, set by the account's owners with a form and a file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, startService, type TestService } from '../support/harness.js';
import { logoPng } from '../support/png.js';
import { DashboardClient, uniqueEmail } from './client.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => service.stop());

const PASSWORD = 'correct horse battery';
const png = (body: Buffer) => ({ logo: { filename: 'logo.png', type: 'image/png', body } });
const NO_FILE = { logo: { filename: '', type: 'application/octet-stream', body: Buffer.alloc(0) } };

async function owner(business = 'Kulol Uyi LLC') {
  const client = new DashboardClient(service);
  const email = uniqueEmail('owner');
  await client.signUp(email, PASSWORD, business);
  const key = /sk_test_[0-9A-Za-z]{32}/.exec((await client.post('/dashboard/api-keys', {})).html)![0];
  return { client, key, email };
}

/** The branding of the product of `email`'s account, as the database holds it. */
async function stored(email: string) {
  const [row] = await service.db.query<{ display_name: string | null; brand_color: string | null; logo_digest: string | null }>(
    `SELECT p.display_name, p.brand_color, p.logo_digest
       FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1`,
    [email],
  );
  return row!;
}

/** A new order's hosted page, as a buyer's browser first receives it. */
async function payPage(key: string): Promise<string> {
  const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 1_500_000 } });
  const path = new URL(order.body.paymentUrl).pathname;
  return (await service.app.inject({ method: 'GET', url: path })).body;
}

describe('branding in the dashboard', () => {
  it('lets an owner set the name, colour and logo buyers see, shows them on the next payment page, and audits it', async () => {
    const { client, key, email } = await owner();
    const before = await client.get('/dashboard/branding');
    expect(before.status).toBe(200);
    expect(before.html).toContain('<p>For Kulol Uyi LLC</p>');
    expect(before.html).toContain('fill="#0b6e4f"');
    const logo = logoPng([124, 45, 18]);
    const saved = await client.postMultipart('/dashboard/branding', { displayName: '  Kulol Uyi  ', brandColor: '#7C2D12' }, png(logo));
    expect(saved.status).toBe(303);
    expect(saved.location).toBe('/dashboard/branding?done=saved');
    const after = await client.get(saved.location!);
    expect(after.html).toContain('Saved. New payment pages show it at once.');
    expect(after.html).toContain('<p>For Kulol Uyi</p>');
    // The sample button's text is the one that reads on the colour: white on a dark brown.
    expect(after.html).toMatch(/<rect [^>]*fill="#7c2d12"\/>\s*<text [^>]*fill="#ffffff"[^>]*>Pay UZS 15,000\.00<\/text>/);
    const row = await stored(email);
    expect(row).toMatchObject({ display_name: 'Kulol Uyi', brand_color: '#7c2d12', logo_digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(after.html).toContain(`src="/brand/logos/${row.logo_digest}"`);

    const page = await payPage(key);
    expect(page).toContain('Kulol Uyi uchun');
    expect(page).toContain('href="/brand/colors/7c2d12.css"');
    expect(page).toContain(`src="/brand/logos/${row.logo_digest}"`);
    const served = await service.app.inject({ method: 'GET', url: `/brand/logos/${row.logo_digest}` });
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.rawPayload.equals(logo)).toBe(true);

    const audit = await client.get('/dashboard/team/audit');
    expect(audit.html).toContain('<code>product.branding_changed</code>');
  });

  it("keeps the logo when no file is chosen, and goes back to the account's name, Tolov's colour and no logo", async () => {
    const { client, key, email } = await owner('Chorsu Market');
    await client.postMultipart('/dashboard/branding', { displayName: 'Chorsu', brandColor: '#1d4ed8' }, png(logoPng([29, 78, 216])));
    const { logo_digest: digest } = await stored(email);
    expect((await client.postMultipart('/dashboard/branding', { displayName: 'Chorsu bozori', brandColor: '#1d4ed8' }, NO_FILE)).status).toBe(303);
    expect(await stored(email)).toEqual({ display_name: 'Chorsu bozori', brand_color: '#1d4ed8', logo_digest: digest });

    const reset = await client.postMultipart('/dashboard/branding', { displayName: '', brandColor: '#1d4ed8', tolovColour: '1', removeLogo: '1' }, NO_FILE);
    expect(reset.status).toBe(303);
    expect(await stored(email)).toEqual({ display_name: null, brand_color: null, logo_digest: null });
    // The logo no product uses any more is gone.
    expect((await service.app.inject({ method: 'GET', url: `/brand/logos/${digest}` })).statusCode).toBe(404);
    const page = await payPage(key);
    expect(page).toContain('Chorsu Market uchun');
    expect(page).not.toContain('/brand/colors/');
    expect(page).not.toContain('/brand/logos/');
  });

  it('refuses what is not a small PNG, JPEG or WebP, or not a colour, saying why in the page language and changing nothing', async () => {
    const { client, email } = await owner();
    await client.postMultipart('/dashboard/branding', { displayName: 'Kulol Uyi', brandColor: '#7c2d12' }, png(logoPng([124, 45, 18])));
    const kept = await stored(email);
    const tooBig = Buffer.concat([logoPng([0, 0, 0]), Buffer.alloc(128 * 1024)]);
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const cases: Array<[Record<string, string>, Parameters<DashboardClient['postMultipart']>[2], string]> = [
      [{ displayName: 'x', brandColor: '#7c2d12' }, png(tooBig), 'The logo must be a PNG, JPEG or WebP image of at most 128 KiB.'],
      [{ displayName: 'x', brandColor: '#7c2d12' }, { logo: { filename: 'logo.svg', type: 'image/svg+xml', body: svg } }, 'The logo must be a PNG, JPEG or WebP image of at most 128 KiB.'],
      [{ displayName: 'x', brandColor: 'red' }, NO_FILE, 'Choose a colour as #RRGGBB.'],
      [{ displayName: 'x'.repeat(101), brandColor: '#7c2d12' }, NO_FILE, 'The name can be at most 100 characters.'],
    ];
    for (const [fields, files, message] of cases) {
      const refused = await client.postMultipart('/dashboard/branding', fields, files);
      expect(refused.status, message).toBe(400);
      expect(refused.html).toContain(`<p class="notice error" role="alert">${message}</p>`);
    }
    client.lang = 'ru';
    const russian = await client.postMultipart('/dashboard/branding', { displayName: 'x', brandColor: '#7c2d12' }, png(tooBig));
    expect(russian.html).toContain('Логотип должен быть изображением PNG, JPEG или WebP размером не больше 128 КБ.');
    expect(await stored(email)).toEqual(kept);
  });

  it('shows developers and viewers the branding without the form, refuses their posts, and refuses a post without the form token', async () => {
    const { client: ownerClient, email } = await owner();
    const before = await stored(email);
    for (const role of ['developer', 'viewer'] as const) {
      const invitee = uniqueEmail(role);
      await ownerClient.post('/dashboard/team/invite', { email: invitee, role });
      const path = await ownerClient.invitationFor(invitee);
      const member = new DashboardClient(service);
      await member.get(path);
      expect((await member.post(path, { password: PASSWORD })).status).toBe(303);
      const page = await member.get('/dashboard/branding');
      expect(page.status).toBe(200);
      expect(page.html).toContain('Only owners of the account can change the branding.');
      expect(page.html).not.toContain('enctype="multipart/form-data"');
      const refused = await member.postMultipart('/dashboard/branding', { displayName: 'Hijacked', brandColor: '#000000' }, NO_FILE);
      expect(refused.status, role).toBe(403);
    }
    const forged = await ownerClient.postMultipart('/dashboard/branding', { displayName: 'Forged', brandColor: '#000000' }, NO_FILE, { csrf: null });
    expect(forged.status).toBe(403);
    expect(await stored(email)).toEqual(before);
  });

  it('takes a file on the branding form alone: a multipart form anywhere else is refused and changes nothing', async () => {
    const { client } = await owner();
    const invitations = async () => (await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM invitations'))[0]!.n;
    const before = await invitations();
    const refused = await client.postMultipart('/dashboard/team/invite', { email: uniqueEmail('invited'), role: 'viewer' }, png(logoPng([0, 0, 0])));
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('The form could not be read.');
    expect(await invitations()).toBe(before);
  });
});
