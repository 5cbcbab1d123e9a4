// Products in the operator console: the search (by id exactly, by a part of the name or of an owner's e-mail, a page
// of 50 at most), a product's page with the operator actions on it, and the admin's suspension, resumption and
// settings, each seen by the operator API and audited with who did it; support reads and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/web/dashboard/i18n.js';
import { escapeHtml } from '../../src/web/html.js';
import { ownerWithSecondFactor } from '../dashboard/client.js';
import { startService, type TestService } from '../support/harness.js';
import { firstAdmin, invitedOperator, type Operator } from './client.js';

let service: TestService;
let admin: Operator;
beforeAll(async () => {
  service = await startService();
  admin = await firstAdmin(service);
});
afterAll(() => service?.stop());

const { en } = MESSAGES;
const said = (text: string, params: Record<string, string | number> = {}) => escapeHtml(text.replace(/\{(\w+)\}/g, (_, name: string) => String(params[name])));

const pageOf = (productId: string) => `/operator/products/${productId}`;
const status = async (productId: string) => (await service.admin('GET', `/admin/v1/products/${productId}`)).body as { feeBps: number; receiptRequired: boolean; suspension: { since: string; reason: string } | null };
const auditOf = async (productId: string) => (await service.admin('GET', `/admin/v1/audit_log?target=${productId}`)).body.data as Array<Record<string, unknown>>;
/** The product ids a search page lists, in its order. */
const listed = (html: string) => [...html.matchAll(/<a href="\/operator\/products\/(prod_\w+)">/g)].map((match) => match[1]);
const search = async (q: string) => listed((await admin.client.get(`/operator/products?q=${encodeURIComponent(q)}`)).html);
/**
 * The products' ids newest first, as the search lists them: by creation time, then by id (products made within one
 * tick of the database's clock tie on their time).
 */
const newestFirst = async (ids: string[]) =>
  (await service.db.query<{ id: string }>('SELECT id FROM products WHERE id = ANY($1) ORDER BY created_at DESC, id DESC', [ids])).map((row) => row.id);
let tags = 0;
const tag = () => `t${process.pid}x${++tags}`;

describe('the product search', () => {
  it('finds a product by its id exactly, by a part of its name or of an owner’s e-mail, whatever the case', async () => {
    const name = `Samarqand Tea House ${tag()}`;
    const shop = await service.createMerchant({ name, feeBps: 250 });
    const owner = await ownerWithSecondFactor(service, `search-${tag()}`);
    const [owned] = await service.db.query<{ id: string }>('SELECT p.id FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1', [owner.email]);

    expect(await search(shop.productId)).toEqual([shop.productId]);
    expect(await search(shop.productId.slice(0, -2))).toEqual([]);
    expect(await search(name.toUpperCase().slice(10))).toEqual([shop.productId]);
    expect(await search(owner.email.toUpperCase())).toEqual([owned!.id]);
    expect(await search(owner.email.split('@')[0]!)).toEqual([owned!.id]);
    // The search's own characters are text, not wildcards.
    expect(await search('%')).toEqual([]);
    expect(await search('_')).toEqual([]);

    const found = await admin.client.get(`/operator/products?q=${shop.productId}`);
    expect(found.status).toBe(200);
    expect(found.html).toContain('<a href="/operator/products" aria-current="page">');
    expect(found.html).toMatch(/<label>[^<]+<input type="search" name="q" value="prod_\w+"/);
    expect(found.html).toContain('<td data-label="Fee" class="num">2.50% (250 bps)</td>');
    expect(found.html).toContain(`<span class="status s-not_submitted">${en.activation_not_submitted}</span>`);
    expect((await admin.client.get('/operator/products?q=no-such-product-anywhere')).html).toContain(said(en.opProductsNone));
  });

  it('lists 50 at most, newest first, with a link to the next page', async () => {
    const prefix = `Paged ${tag()}`;
    const made: string[] = [];
    for (let index = 0; index < 52; index++) made.push((await service.createMerchant({ name: `${prefix} ${index}` })).productId);
    const newest = await newestFirst(made);
    const first = await admin.client.get(`/operator/products?q=${encodeURIComponent(prefix)}`);
    expect(listed(first.html)).toEqual(newest.slice(0, 50));
    const next = /<a href="([^"]+)">Next page<\/a>/.exec(first.html)?.[1]?.replaceAll('&amp;', '&');
    expect(next).toBeDefined();
    const second = await admin.client.get(next!);
    expect(listed(second.html)).toEqual(newest.slice(50));
    expect(second.html).not.toContain('Next page');
  });

  it('is the operator API’s too, paged the same way, and refuses a page after no product', async () => {
    const prefix = `Listed ${tag()}`;
    const made: string[] = [];
    for (let index = 0; index < 3; index++) made.push((await service.createMerchant({ name: `${prefix} ${index}`, feeBps: 150 })).productId);
    const newest = await newestFirst(made);
    const first = await service.admin('GET', `/admin/v1/products?q=${encodeURIComponent(prefix.toLowerCase())}&limit=2`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', has_more: true });
    expect(first.body.data.map((product: { id: string }) => product.id)).toEqual(newest.slice(0, 2));
    expect(first.body.data[0]).toMatchObject({ object: 'product', feeBps: 150, suspension: null });
    const second = await service.admin('GET', `/admin/v1/products?q=${encodeURIComponent(prefix)}&limit=2&starting_after=${newest[1]}`);
    expect(second.body.data.map((product: { id: string }) => product.id)).toEqual(newest.slice(2));
    expect(second.body.has_more).toBe(false);
    const refused = await service.admin('GET', '/admin/v1/products?starting_after=prod_nothing');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_ERROR', param: 'starting_after' });
    expect((await service.admin('GET', '/admin/v1/products?limit=51')).status).toBe(400);
  });
});

describe('a product’s page', () => {
  it('shows the product, and 404 for an unknown one', async () => {
    const owner = await ownerWithSecondFactor(service, `page-${tag()}`);
    const [product] = await service.db.query<{ id: string }>('SELECT p.id FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1', [owner.email]);
    const shown = await admin.client.get(pageOf(product!.id));
    expect(shown.status).toBe(200);
    for (const text of [product!.id, owner.email, said(en.opProductNotSuspended), said(en.opProductAuditNone)]) expect(shown.html, text).toContain(text);
    expect(shown.html).toContain('<label for="settings-feeBps">');
    expect(shown.html).toContain('<label for="suspend-reason">');
    expect(shown.html).toMatch(/<label><input type="checkbox" name="receiptRequired" value="true" checked>/);
    expect((await admin.client.get(pageOf('prod_missing'))).status).toBe(404);
    // Only the notices it knows: a name every object has finds none; a notice asked twice is a bad address.
    const unknown = await admin.client.get(`${pageOf(product!.id)}?done=toString`);
    expect(unknown.status).toBe(200);
    expect(unknown.html).not.toContain('class="notice');
    expect((await admin.client.get(`${pageOf(product!.id)}?done=saved&done=resumed`)).status).toBe(400);
    expect((await admin.client.post(`${pageOf('prod_missing')}/suspend`, { reason: 'Whatever' })).status).toBe(404);
  });

  it('suspends with a reason and resumes, as the API then sees, each audited with the operator through the console', async () => {
    const shop = await service.createMerchant();
    const empty = await admin.client.post(`${pageOf(shop.productId)}/suspend`, { reason: '  ' });
    expect(empty.status).toBe(400);
    expect(empty.html).toContain(said(en.opReasonRequired));
    expect((await status(shop.productId)).suspension).toBeNull();

    const reason = 'Sells goods that may not be sold online';
    const suspended = await admin.client.post(`${pageOf(shop.productId)}/suspend`, { reason });
    expect(suspended.location).toBe(`${pageOf(shop.productId)}?done=suspended`);
    expect((await status(shop.productId)).suspension).toEqual({ since: expect.any(String), reason });
    const charge = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: `suspended-${tag()}`, body: { amount: 100_000 } });
    expect(charge.body.code).toBe('PRODUCT_SUSPENDED');
    const shown = (await admin.client.get(suspended.location!)).html;
    expect(shown).toContain(said(en.opProductSuspended));
    expect(shown).toContain(`<blockquote class="reason">${reason}</blockquote>`);
    expect(shown).toContain(`action="${pageOf(shop.productId)}/resume"`);
    expect((await admin.client.post(`${pageOf(shop.productId)}/suspend`, { reason: 'Again' })).status).toBe(409);

    const resumed = await admin.client.post(`${pageOf(shop.productId)}/resume`, {});
    expect(resumed.location).toBe(`${pageOf(shop.productId)}?done=resumed`);
    expect((await status(shop.productId)).suspension).toBeNull();
    const again = await admin.client.post(`${pageOf(shop.productId)}/resume`, {});
    expect(again.status).toBe(409);
    expect(again.html).toContain(said(en.opProductNotSuspendedNow));

    const audit = await auditOf(shop.productId);
    expect(audit.map((entry) => entry.action)).toEqual(['product.resumed', 'product.suspended', 'product.created']);
    expect(audit[1]).toMatchObject({ operator: { email: admin.email }, via: 'console', detail: reason });
    const page = (await admin.client.get(pageOf(shop.productId))).html;
    expect(page).toContain('<code>product.suspended</code>');
    // As the audit log's page lists them, without the column every entry here would repeat: the product.
    expect(page).toContain(`<td data-label="Who">${escapeHtml(admin.email)}</td><td data-label="Through">Console</td>`);
    expect(page).not.toContain('<th scope="col">On</th>');
  });

  it('changes the fee and the fiscal lines, audited with what changed; refuses a fee that is no whole number from 0 to 10000', async () => {
    const shop = await service.createMerchant({ feeBps: 250 });
    for (const feeBps of ['10001', '-1', '2.5', 'abc', '', '1e3']) {
      const refused = await admin.client.post(`${pageOf(shop.productId)}/settings`, { feeBps, receiptRequired: 'true' });
      expect(refused.status, feeBps).toBe(400);
      expect(refused.html).toContain(said(en.opFeeInvalid));
      expect(refused.html).toContain('aria-invalid="true"');
    }
    expect(await status(shop.productId)).toMatchObject({ feeBps: 250, receiptRequired: true });
    expect((await auditOf(shop.productId)).map((entry) => entry.action)).toEqual(['product.created']);

    const saved = await admin.client.post(`${pageOf(shop.productId)}/settings`, { feeBps: '175', receiptRequired: 'true' });
    expect(saved.location).toBe(`${pageOf(shop.productId)}?done=saved`);
    expect(await status(shop.productId)).toMatchObject({ feeBps: 175, receiptRequired: true });
    expect((await auditOf(shop.productId))[0]).toMatchObject({ action: 'product.updated', operator: { email: admin.email }, via: 'console', detail: 'feeBps = 175' });
    expect((await admin.client.get(saved.location!)).html).toContain('1.75% (175 bps)');

    // A checkbox left unticked sends nothing: the fiscal lines are no longer required.
    expect((await admin.client.post(`${pageOf(shop.productId)}/settings`, { feeBps: '175' })).location).toBe(`${pageOf(shop.productId)}?done=saved`);
    expect(await status(shop.productId)).toMatchObject({ feeBps: 175, receiptRequired: false });
    expect((await auditOf(shop.productId))[0]).toMatchObject({ detail: 'receiptRequired = false' });

    const unchanged = await admin.client.post(`${pageOf(shop.productId)}/settings`, { feeBps: '175' });
    expect(unchanged.location).toBe(`${pageOf(shop.productId)}?done=unchanged`);
    expect(await auditOf(shop.productId)).toHaveLength(3);
  });
});

describe('to support', () => {
  let support: Operator;
  beforeAll(async () => {
    support = await invitedOperator(service, admin, 'support');
  });

  it('shows the search and the product without its forms; each change posted is refused and changes nothing', async () => {
    const shop = await service.createMerchant({ feeBps: 250 });
    expect(listed((await support.client.get(`/operator/products?q=${shop.productId}`)).html)).toEqual([shop.productId]);
    const shown = await support.client.get(pageOf(shop.productId));
    expect(shown.status).toBe(200);
    expect(shown.html).toContain(said(en.opProductReadOnly));
    expect(shown.html).not.toContain('method="post" action="/operator/products/');

    expect((await support.client.post(`${pageOf(shop.productId)}/suspend`, { reason: 'Not mine to do' })).status).toBe(403);
    expect((await support.client.post(`${pageOf(shop.productId)}/settings`, { feeBps: '0', receiptRequired: 'true' })).status).toBe(403);
    expect((await admin.client.post(`${pageOf(shop.productId)}/suspend`, { reason: 'Under review' })).status).toBe(303);
    expect((await support.client.post(`${pageOf(shop.productId)}/resume`, {})).status).toBe(403);
    expect(await status(shop.productId)).toMatchObject({ feeBps: 250, receiptRequired: true, suspension: { reason: 'Under review' } });
    expect((await auditOf(shop.productId)).map((entry) => entry.action)).toEqual(['product.suspended', 'product.created']);
  });
});
