// A payment's and an order's page: fields, linked objects, the timeline with its deliveries; refund and cancel by owners
// and developers, through the capabilities' commands under the form's idempotency key, audited with the change; never
// by a viewer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard, submitCard, submitCode, TEST_CODE } from '../support/binding.js';
import { idem, startService, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';
import { DashboardClient, uniqueEmail } from './client.js';

let service: TestService;
let owner: DashboardClient;
let key: string;
beforeAll(async () => {
  service = await startService({ TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true' });
  owner = new DashboardClient(service);
  await owner.signUp(uniqueEmail());
  key = /sk_test_[0-9A-Za-z]{32}/.exec((await owner.post('/dashboard/api-keys', {})).html)![0];
  await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key, body: { url: 'http://127.0.0.1:9/hooks' } });
});
afterAll(async () => service.stop());

const formKeyOf = (html: string) => /name="idempotencyKey" value="([0-9a-f-]{36})"/.exec(html)?.[1];

async function viewer(): Promise<DashboardClient> {
  const invitee = uniqueEmail('viewer');
  await owner.post('/dashboard/team/invite', { email: invitee, role: 'viewer' });
  const path = await owner.invitationFor(invitee);
  const member = new DashboardClient(service);
  await member.get(path);
  expect((await member.post(path, { password: 'correct horse battery' })).status).toBe(303);
  return member;
}

describe('a payment’s page', () => {
  it('shows its fields, its order, and its timeline with each delivery', async () => {
    const order = await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 2_500_000, customerRef: 'sardor' } });
    const paid = await service.call({ method: 'POST', url: `/v1/test_helpers/orders/${order.body.id}/pay`, key, body: {} });
    const page = await owner.get(`/dashboard/payments/${paid.body.paymentIntent}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('25,000.00 UZS');
    expect(page.html).toContain(`href="/dashboard/orders/${order.body.id}"`);
    expect(page.html).toMatch(/<code>payment_intent\.succeeded<\/code>/);
    expect(page.html).toContain('Pending');
    const orderPage = await owner.get(`/dashboard/orders/${order.body.id}`);
    expect(orderPage.html).toContain(`href="/dashboard/payments/${paid.body.paymentIntent}"`);
    expect(orderPage.html).toMatch(/<code>order\.paid<\/code>/);
    expect((await owner.get('/dashboard/payments/pi_nothing')).status).toBe(404);
  });

  it('names the card a hosted-page payment debited, whether or not it was saved', async () => {
    const order = (await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 31_000 } })).body;
    const token = order.paymentUrl.split('/pay/')[1] as string;
    await submitCard(service, token, { pan: '8600000000000007' });
    expect((await submitCode(service, token, TEST_CODE)).body.status).toBe('COMPLETED');
    const intent = (await service.call({ method: 'GET', url: `/merchant/v1/orders/${order.id}`, key })).body.paymentIntent as string;
    expect((await owner.get(`/dashboard/payments/${intent}`)).html).toMatch(/<dt>Card<\/dt>\s*<dd>Uzcard •••• 0007<\/dd>/);

    const card = await bindCard(service, key, '8600000000000007');
    const charged = (await charge(service, key, { amount: 12_000, card })).body.id;
    const saved = (await owner.get(`/dashboard/payments/${charged}`)).html;
    expect(saved).toContain('Uzcard •••• 0007');
    expect(saved).toContain(`href="/dashboard/payments?card=${card}"`);
  });

  it('refunds once, however often the form is posted, audited; a second refund says why not', async () => {
    const card = await bindCard(service, key, '8600000000000007');
    const intent = (await charge(service, key, { amount: 880_000, card })).body.id;
    const page = await owner.get(`/dashboard/payments/${intent}`);
    expect(page.html).toContain('Refund the full amount');
    const formKey = formKeyOf(page.html)!;
    const first = await owner.post(`/dashboard/payments/${intent}/refund`, { idempotencyKey: formKey });
    expect(first.status).toBe(303);
    expect(first.location).toBe(`/dashboard/payments/${intent}?done=refunded`);
    const again = await owner.post(`/dashboard/payments/${intent}/refund`, { idempotencyKey: formKey });
    expect(again.location).toBe(`/dashboard/payments/${intent}?done=refunded`);
    const refunds = await service.call({ method: 'GET', url: `/v1/refunds?paymentIntent=${intent}`, key });
    expect(refunds.body.data).toHaveLength(1);
    expect(refunds.body.data[0]).toMatchObject({ status: 'SUCCEEDED', amount: 880_000 });
    const after = await owner.get(`/dashboard/payments/${intent}?done=refunded`);
    expect(after.html).toContain('The refund is made');
    expect(after.html).not.toContain('Refund the full amount');
    // The API still says SUCCEEDED; the page says what happened, and its timeline shows the refund, linked.
    expect(after.html).toMatch(/<dt>Status<\/dt>\s*<dd><span class="status s-refunded" title="SUCCEEDED">Refunded<\/span><\/dd>/);
    const refund = refunds.body.data[0].id as string;
    const timeline = /<ol class="timeline">(.*?)<\/ol>\s*$/s.exec(after.html.split('</main>')[0]!)?.[1] ?? '';
    expect(timeline).toMatch(new RegExp(`<li><span>[^<]+ UTC</span> Refund <a href="/dashboard/refunds\\?q=${refund}"><code>${refund}</code></a> · 8,800\\.00 UZS · <span class="status s-succeeded" title="SUCCEEDED">Succeeded</span></li>`));
    owner.lang = 'ru';
    expect((await owner.get(`/dashboard/payments/${intent}`)).html).toContain('<span class="status s-refunded" title="SUCCEEDED">Возвращён</span>');
    owner.lang = 'en';
    const audit = await owner.get('/dashboard/team/audit');
    expect(audit.html.match(new RegExp(`<code>payment\\.refunded</code></td><td[^>]*>${intent}<`, 'g')) ?? []).toHaveLength(1);

    const other = await owner.post(`/dashboard/payments/${intent}/refund`, { idempotencyKey: '00000000-0000-4000-8000-000000000001' });
    expect(decodeURIComponent(other.location!)).toMatch(/\?error=ALREADY_REFUNDED$/);
    expect((await owner.get(other.location!)).html).toContain('<p class="notice error" role="alert">This payment already has a refund.</p>');
    // A link cannot put words of its own on the page.
    expect((await owner.get(`/dashboard/payments/${intent}?error=Call+us+at+555`)).html).not.toContain('notice error');
  });

  it('cancels a pending order; a viewer sees neither button, and a viewer’s direct POST is refused', async () => {
    const order = (await service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey: idem(), body: { amount: 10_000 } })).body.id;
    const card = await bindCard(service, key, '8600000000000007');
    const intent = (await charge(service, key, { amount: 10_000, card })).body.id;
    const member = await viewer();
    const seen = await member.get(`/dashboard/orders/${order}`);
    expect(seen.status).toBe(200);
    expect(seen.html).not.toContain('Cancel order');
    expect((await member.get(`/dashboard/payments/${intent}`)).html).not.toContain('Refund the full amount');
    const key1 = '00000000-0000-4000-8000-0000000000aa';
    expect((await member.post(`/dashboard/orders/${order}/cancel`, { idempotencyKey: key1 })).status).toBe(403);
    expect((await member.post(`/dashboard/payments/${intent}/refund`, { idempotencyKey: key1 })).status).toBe(403);
    expect((await service.call({ method: 'GET', url: `/merchant/v1/orders/${order}`, key })).body.status).toBe('PENDING');

    const page = await owner.get(`/dashboard/orders/${order}`);
    const canceled = await owner.post(`/dashboard/orders/${order}/cancel`, { idempotencyKey: formKeyOf(page.html)! });
    expect(canceled.location).toBe(`/dashboard/orders/${order}?done=canceled`);
    expect((await service.call({ method: 'GET', url: `/merchant/v1/orders/${order}`, key })).body.status).toBe('CANCELED');
    expect((await owner.get('/dashboard/team/audit')).html).toMatch(new RegExp(`<code>order\\.canceled</code></td><td[^>]*>${order}<`));
  });
});
