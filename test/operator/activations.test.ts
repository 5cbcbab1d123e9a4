// The operator's side of going live: the queue of activation requests, approval (live mode on and the live payout
// account set from the request, in one transaction, once) and rejection with a reason. The merchant's side, the
// dashboard's form, is test/dashboard/activation.test.ts; here a submitted request is put in place as it leaves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/harness.js';
import { validAccount } from '../support/payouts.js';

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
