// The operator's side of going live: the queue of activation requests, approval (live mode on and the live payout
// account set from the request, in one transaction, once) and rejection with a reason, through the operator API and
// through the console's pages (admins decide, support reads). The merchant's side, the dashboard's form, is
// test/dashboard/activation.test.ts; the API's tests put a submitted request in place as it leaves, the console's have
// a merchant submit it in the dashboard.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/web/dashboard/i18n.js';
import { escapeHtml } from '../../src/web/html.js';
import { freshCode, ownerWithSecondFactor, type SecondFactorOwner } from '../dashboard/client.js';
import { startService, type TestService } from '../support/harness.js';
import { validAccount } from '../support/payouts.js';
import { firstAdmin, invitedOperator, type Operator } from './client.js';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.stop());

const ACCOUNT = validAccount('00440', '4321');

/** A product as sign-up makes it (test mode only), with a request submitted for it `minutesAgo`. */
async function submitted(name: string, minutesAgo = 0): Promise<string> {
  const shop = await service.createMerchant({ name });
  await service.db.query('UPDATE products SET live_enabled = false WHERE id = $1', [shop.productId]);
  await service.db.query(
    `INSERT INTO activation_requests (product_id, status, legal_name, tin, legal_address, website, category, bank_mfo, account_number, holder_tin, holder_name, submitted_by, submitted_at)
     VALUES ($1, 'submitted', $2, '301234567', 'Tashkent, Chorsu 1', 'https://t.me/chorsu_market', 'retail', '00440', $3, '301234567', $2, 'usr_fixture', now() - $4 * interval '1 minute')`,
    [shop.productId, `${name} MChJ`, ACCOUNT, minutesAgo],
  );
  return shop.productId;
}

const approve = (productId: string) => service.admin('POST', `/admin/v1/products/${productId}/activation/approve`);
const reject = (productId: string, reason: string) => service.admin('POST', `/admin/v1/products/${productId}/activation/reject`, { reason });

describe('activation requests', () => {
  it('are listed newest first, by status, a page at a time', async () => {
    const older = await submitted('Older shop', 10);
    const newer = await submitted('Newer shop', 5);
    const list = (query: string) => service.admin('GET', `/admin/v1/activations${query}`);
    const page = await list('?status=submitted&limit=1');
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ object: 'list', has_more: true, data: [{ product: newer, status: 'submitted', productName: 'Newer shop' }] });
    expect((await list(`?status=submitted&limit=1&starting_after=${newer}`)).body.data.map((a: { product: string }) => a.product)).toEqual([older]);
    expect(page.body.data[0]).toEqual({
      object: 'activation',
      product: newer,
      productName: 'Newer shop',
      status: 'submitted',
      legalName: 'Newer shop MChJ',
      tin: '301234567',
      legalAddress: 'Tashkent, Chorsu 1',
      website: 'https://t.me/chorsu_market',
      category: 'retail',
      payoutAccount: { bankMfo: '00440', accountLast4: '4321', tin: '301234567', holderName: 'Newer shop MChJ' },
      rejectionReason: null,
      submitted: expect.any(String),
      decided: null,
    });
    expect((await list('?status=lost')).status).toBe(400);
    expect((await list('?starting_after=prod_missing')).body).toMatchObject({ code: 'VALIDATION_ERROR', param: 'starting_after' });
    expect((await service.call({ method: 'GET', url: '/admin/v1/activations' })).status).toBe(401);
  });

  it('approved, turn live mode on and set the live payout account from the request, once', async () => {
    const productId = await submitted('Approved shop');
    const approved = await approve(productId);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', decided: expect.any(String), rejectionReason: null });
    expect((await service.admin('GET', `/admin/v1/products/${productId}`)).body.liveEnabled).toBe(true);
    const key = (await service.admin('POST', `/admin/v1/products/${productId}/keys`, { mode: 'live' })).body.secret as string;
    const account = await service.call({ method: 'GET', url: '/v1/payout_account', key });
    expect(account.body).toMatchObject({ bankMfo: '00440', accountLast4: '4321', holderName: 'Approved shop MChJ', payoutsHeldUntil: null, livemode: true });
    const events = await service.db.query<{ type: string }>('SELECT type FROM events WHERE product_id = $1 AND livemode', [productId]);
    expect(events.map((event) => event.type)).toEqual(['payout_account.updated']);
    const again = await approve(productId);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('INVALID_STATE');
    expect((await reject(productId, 'Too late')).status).toBe(409);
  });

  it('rejected, carry the reason and leave live mode off', async () => {
    const productId = await submitted('Rejected shop');
    expect((await reject(productId, '')).status).toBe(400);
    const rejected = await reject(productId, 'The website does not show what you sell: add your catalogue');
    expect(rejected.body).toMatchObject({ status: 'rejected', rejectionReason: 'The website does not show what you sell: add your catalogue' });
    expect((await service.admin('GET', `/admin/v1/products/${productId}`)).body.liveEnabled).toBe(false);
    expect((await service.admin('GET', `/admin/v1/products/${productId}/activation`)).body.status).toBe('rejected');
    expect((await approve(productId)).status).toBe(409);
  });

  it('answer 404 for a product without a request', async () => {
    const shop = await service.createMerchant();
    expect((await approve(shop.productId)).status).toBe(404);
    expect((await service.admin('GET', `/admin/v1/products/${shop.productId}/activation`)).status).toBe(404);
    expect((await approve('prod_missing')).status).toBe(404);
  });

  it('approved twice at once are approved once', async () => {
    const productId = await submitted('Raced shop');
    const answers = await Promise.all([approve(productId), approve(productId), approve(productId)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409]);
    const events = await service.db.query('SELECT 1 FROM events WHERE product_id = $1 AND type = $2', [productId, 'payout_account.updated']);
    expect(events).toHaveLength(1);
  });
});

const { en } = MESSAGES;
/** A message as a page writes it (escaped), with its parameters. */
const said = (text: string, params: Record<string, string | number> = {}) => escapeHtml(text.replace(/\{(\w+)\}/g, (_, name: string) => String(params[name])));

/** What an owner types into the dashboard's activation form: the shop's Telegram link, the business's own account. */
const REQUEST = {
  legalName: '«Chorsu Market» MChJ',
  tin: '301234567',
  legalAddress: 'Toshkent sh., Chilonzor tumani, Bunyodkor koʻchasi, 12-uy',
  website: 't.me/chorsumarket',
  category: 'retail',
  bankMfo: '00440',
  accountNumber: '20208000505368522001',
  holderTin: '',
  holderName: '',
};

interface Submitted {
  owner: SecondFactorOwner;
  productId: string;
}

/** A new merchant whose owner submits the request in the dashboard, as a person does. */
async function submittedInDashboard(name: string): Promise<Submitted> {
  const owner = await ownerWithSecondFactor(service, name);
  const [product] = await service.db.query<{ id: string }>(
    'SELECT p.id FROM products p JOIN memberships m ON m.account_id = p.account_id JOIN users u ON u.id = m.user_id WHERE u.email = $1',
    [owner.email],
  );
  const sent = await owner.client.post('/dashboard/activation', { ...REQUEST, code: await freshCode(service, owner), idempotencyKey: randomUUID() });
  expect(sent.location).toBe('/dashboard/activation?done=submitted');
  return { owner, productId: product!.id };
}

const reviewOf = (productId: string) => `/operator/activations/${productId}`;
const statusOf = async (productId: string) => (await service.admin('GET', `/admin/v1/products/${productId}/activation`)).body.status as string;
const auditOf = async (productId: string) => (await service.admin('GET', `/admin/v1/audit_log?target=${productId}`)).body.data as Array<Record<string, unknown>>;
const hasDecisionForms = (html: string) => html.includes('/approve"') || html.includes('/reject"');

describe('the console\'s activation queue', () => {
  let admin: Operator;
  beforeAll(async () => {
    admin = await firstAdmin(service);
  });

  it('lists the waiting requests, the longest waiting first, each opened to the whole request with the account masked', async () => {
    const first = await submittedInDashboard('queue-first');
    const second = await submittedInDashboard('queue-second');
    const queue = await admin.client.get('/operator/activations');
    expect(queue.status).toBe(200);
    expect(queue.html).toContain('<a href="/operator/activations" aria-current="page">');
    const [at1, at2] = [queue.html.indexOf(`href="${reviewOf(first.productId)}"`), queue.html.indexOf(`href="${reviewOf(second.productId)}"`)];
    expect(at1).toBeGreaterThan(0);
    expect(at2).toBeGreaterThan(at1);
    expect(queue.html).toContain(escapeHtml(REQUEST.legalName));
    expect(queue.html).toMatch(/<label>Status <select name="status">/);

    const review = await admin.client.get(reviewOf(first.productId));
    expect(review.status).toBe(200);
    for (const text of [REQUEST.legalName, REQUEST.tin, REQUEST.legalAddress, 'Retail', first.owner.email]) expect(review.html, text).toContain(escapeHtml(text));
    expect(review.html).toContain('<a href="https://t.me/chorsumarket" rel="noopener noreferrer" target="_blank">https://t.me/chorsumarket</a>');
    expect(review.html).toContain('<dd class="masked">00440\u00a0••••\u00a02001</dd>');
    expect(review.html).not.toContain(REQUEST.accountNumber);
    expect(review.html).toContain(`<a href="/operator/products/${first.productId}">`);
    expect(review.html).toMatch(/<label for="reject-reason">[^<]+<\/label>\s*<textarea id="reject-reason" name="reason"[^>]*required/);
    expect(hasDecisionForms(review.html)).toBe(true);
  });

  it('approves: live mode on, the decision audited with the operator, through the console; a second approval is a notice', async () => {
    const { owner, productId } = await submittedInDashboard('approved');
    const approved = await admin.client.post(`${reviewOf(productId)}/approve`, {});
    expect(approved.status).toBe(303);
    expect(approved.location).toBe(`${reviewOf(productId)}?done=approved`);
    const shown = await admin.client.get(approved.location!);
    expect(shown.html).toContain(said(en.opReviewApproved));
    expect(shown.html).toContain(`<span class="status s-approved">${en.activation_approved}</span>`);
    expect(hasDecisionForms(shown.html)).toBe(false);
    expect((await service.admin('GET', `/admin/v1/products/${productId}`)).body.liveEnabled).toBe(true);

    const operators = (await service.admin('GET', '/admin/v1/operators')).body.data as Array<{ id: string; email: string }>;
    const adminId = operators.find((operator) => operator.email === admin.email)!.id;
    expect((await auditOf(productId)).find((entry) => entry.action === 'activation.approved')).toMatchObject({ operator: { id: adminId, email: admin.email }, via: 'console', target: productId });

    const again = await admin.client.post(`${reviewOf(productId)}/approve`, {});
    expect(again.status).toBe(409);
    expect(again.html).toContain(said(en.opReviewAlreadyDecided));
    expect((await auditOf(productId)).filter((entry) => entry.action === 'activation.approved')).toHaveLength(1);
    expect((await owner.client.get('/dashboard/activation')).html).toContain(`<span class="status s-approved">${en.activation_approved}</span>`);
    expect((await admin.client.get('/operator/activations?status=approved')).html).toContain(`href="${reviewOf(productId)}"`);
  });

  it('rejects only with a reason, which the merchant reads; the request then cannot be approved', async () => {
    const { owner, productId } = await submittedInDashboard('rejected');
    for (const reason of ['', '   ', 'x'.repeat(501)]) {
      const refused = await admin.client.post(`${reviewOf(productId)}/reject`, { reason });
      expect(refused.status, `${reason.length} characters`).toBe(400);
      expect(refused.html).toContain('aria-invalid="true"');
    }
    expect((await admin.client.post(`${reviewOf(productId)}/reject`, { reason: '' })).html).toContain(said(en.opReasonRequired));
    expect(await statusOf(productId)).toBe('submitted');

    const reason = 'The shop link shows no goods: add your catalogue & prices';
    const rejected = await admin.client.post(`${reviewOf(productId)}/reject`, { reason });
    expect(rejected.location).toBe(`${reviewOf(productId)}?done=rejected`);
    expect(await statusOf(productId)).toBe('rejected');
    expect((await owner.client.get('/dashboard/activation')).html).toContain(`<blockquote class="reason">${escapeHtml(reason)}</blockquote>`);
    const shown = (await admin.client.get(reviewOf(productId))).html;
    expect(shown).toContain(`<blockquote class="reason">${escapeHtml(reason)}</blockquote>`);
    expect(hasDecisionForms(shown)).toBe(false);
    expect((await auditOf(productId)).find((entry) => entry.action === 'activation.rejected')).toMatchObject({ via: 'console', detail: reason });

    const late = await admin.client.post(`${reviewOf(productId)}/approve`, {});
    expect(late.status).toBe(409);
    expect(late.html).toContain(said(en.opReviewAlreadyDecided));
    expect((await service.admin('GET', `/admin/v1/products/${productId}`)).body.liveEnabled).toBe(false);
  });

  it('answers 404 for a product without a request, and 400 for a status it does not know or is given twice', async () => {
    const shop = await service.createMerchant();
    expect((await admin.client.get(reviewOf(shop.productId))).status).toBe(404);
    expect((await admin.client.get(reviewOf('prod_missing'))).status).toBe(404);
    expect((await admin.client.post(`${reviewOf('prod_missing')}/approve`, {})).status).toBe(404);
    expect((await admin.client.get('/operator/activations?status=lost')).status).toBe(400);
    // A parameter given twice is one the page cannot choose between; a notice it does not know is none.
    expect((await admin.client.get('/operator/activations?status=approved&status=rejected')).status).toBe(400);
    const unknown = await admin.client.get(`${reviewOf(await submitted('Unknown notice'))}?done=toString`);
    expect(unknown.status).toBe(200);
    expect(unknown.html).not.toContain('class="notice');
  });

  describe('to support', () => {
    let support: Operator;
    beforeAll(async () => {
      support = await invitedOperator(service, admin, 'support');
    });

    it('shows the queue and the requests, without the decisions: each decision posted is refused and changes nothing', async () => {
      const { productId } = await submittedInDashboard('support-reads');
      expect((await support.client.get('/operator/activations')).html).toContain(`href="${reviewOf(productId)}"`);
      const review = await support.client.get(reviewOf(productId));
      expect(review.status).toBe(200);
      expect(review.html).toContain(said(en.opReviewSupportOnly));
      expect(hasDecisionForms(review.html)).toBe(false);
      expect((await support.client.post(`${reviewOf(productId)}/approve`, {})).status).toBe(403);
      expect((await support.client.post(`${reviewOf(productId)}/reject`, { reason: 'Not allowed to' })).status).toBe(403);
      expect(await statusOf(productId)).toBe('submitted');
      expect((await service.admin('GET', `/admin/v1/products/${productId}`)).body.liveEnabled).toBe(false);
      expect(await auditOf(productId)).toEqual([]);
    });
  });
});
