// Two-step payments on a payment's page: the amount held shown to everyone; "Capture" (all of it or less) and "Cancel the
// hold" for owners and developers, through the holds commands under the form's idempotency key, audited; a viewer's
// POST refused, another account's payment a 404; and each refusal said in the page's language, at the amount when the
// amount is what to change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { startService, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';
import { receiptFor } from '../support/receipts.js';
import { DashboardClient, uniqueEmail, type Page } from './client.js';

let service: TestService;
let owner: DashboardClient;
let key: string;
let card: string;
beforeAll(async () => {
  service = await startService();
  owner = new DashboardClient(service);
  await owner.signUp(uniqueEmail());
  key = /sk_test_[0-9A-Za-z]{32}/.exec((await owner.post('/dashboard/api-keys', {})).html)![0];
  card = await bindCard(service, key, '8600000000000007');
});
afterAll(async () => service.stop());

const formKeysOf = (html: string) => [...html.matchAll(/name="idempotencyKey" value="([0-9a-f-]{36})"/g)].map((match) => match[1]!);
/** The page's content, its numbers' no-break spaces (ru, uz) as plain ones. */
const main = (page: Page) => page.html.split('<main')[1]!.replace(/[\u00a0\u202f]/g, ' ');

/** Runs `act` with the owner's browser asking for `lang`. */
async function inLanguage<T>(lang: string, act: () => Promise<T>): Promise<T> {
  owner.lang = lang;
  try {
    return await act();
  } finally {
    owner.lang = 'en';
  }
}

/** A hold of `amount` tiyin on the owner's test card: its id. */
async function hold(amount: number, extra: Record<string, unknown> = {}): Promise<string> {
  const reply = await charge(service, key, { amount, card, capture: 'manual', ...extra });
  expect(reply.body).toMatchObject({ status: 'REQUIRES_CAPTURE' });
  return reply.body.id as string;
}

const read = async (id: string) => (await service.call({ method: 'GET', url: `/subscribe/v1/charges/${id}`, key })).body;

/** Posts the page's capture form as a browser does: its own key, and `amount` typed over the one it offers. */
async function capture(client: DashboardClient, id: string, amount?: string): Promise<Page> {
  const page = await client.get(`/dashboard/payments/${id}`);
  const typed = amount ?? /id="capture-amount"[^>]* value="([^"]*)"/.exec(page.html)![1]!;
  return client.post(`/dashboard/payments/${id}/capture`, { idempotencyKey: formKeysOf(page.html)[0]!, amount: typed });
}

async function viewer(): Promise<DashboardClient> {
  const invitee = uniqueEmail('viewer');
  await owner.post('/dashboard/team/invite', { email: invitee, role: 'viewer' });
  const path = await owner.invitationFor(invitee);
  const member = new DashboardClient(service);
  await member.get(path);
  expect((await member.post(path, { password: 'correct horse battery' })).status).toBe(303);
  return member;
}

const auditCount = async (action: string, id: string) =>
  ((await owner.get('/dashboard/team/audit')).html.match(new RegExp(`<code>${action.replace('.', '\\.')}</code></td><td[^>]*>${id}<`, 'g')) ?? []).length;

describe('a held payment’s page', () => {
  it('shows the amount held and captures all of it once, however often the form is posted, audited', async () => {
    const id = await hold(15_000_000);
    const page = await owner.get(`/dashboard/payments/${id}`);
    expect(main(page)).toMatch(/<dt>Status<\/dt>\s*<dd><span class="status s-requires_capture" title="REQUIRES_CAPTURE">Held for capture<\/span><\/dd>/);
    expect(main(page)).toMatch(/<dt>Held on the card<\/dt>\s*<dd>150,000\.00 UZS<\/dd>/);
    expect(main(page)).toContain('<dd>Two-step: held on the card first, captured later</dd>');
    // The field offers the whole hold as a person types it; the two actions are confirmed first.
    expect(main(page)).toMatch(/id="capture-amount"[^>]* value="150,000"/);
    expect(main(page)).toContain('data-confirm="Capture the amount entered from the buyer’s card? What is left of the 150,000.00 UZS held goes back to the card. This cannot be undone."');
    expect(main(page)).toContain('data-confirm="Cancel the hold? All 150,000.00 UZS goes back to the buyer’s card, and this payment can no longer be captured."');
    expect(main(page)).not.toContain('Refund the full amount');

    const [formKey] = formKeysOf(page.html);
    const first = await owner.post(`/dashboard/payments/${id}/capture`, { idempotencyKey: formKey!, amount: '150,000' });
    expect(first.status).toBe(303);
    expect(first.location).toBe(`/dashboard/payments/${id}?done=captured`);
    const again = await owner.post(`/dashboard/payments/${id}/capture`, { idempotencyKey: formKey!, amount: '150,000' });
    expect(again.location).toBe(`/dashboard/payments/${id}?done=captured`);
    expect(await read(id)).toMatchObject({ status: 'SUCCEEDED', amount: 15_000_000, amountCapturable: 0 });
    const after = await owner.get(first.location!);
    expect(main(after)).toContain('<p class="notice ok" role="status">Captured 150,000.00 UZS: the payment has succeeded.</p>');
    expect(main(after)).toMatch(/<dt>Held on the card<\/dt>\s*<dd>150,000\.00 UZS<\/dd>/);
    expect(main(after)).not.toContain('capture-amount');
    expect(main(after)).toContain('Refund the full amount');
    expect(await auditCount('payment.captured', id)).toBe(1);
  });

  it('captures part of it: the payment is the amount captured, and its page says what went back to the card', async () => {
    const id = await hold(15_000_000);
    const captured = await capture(owner, id, '120 000');
    expect(captured.location).toBe(`/dashboard/payments/${id}?done=captured`);
    expect(await read(id)).toMatchObject({ status: 'SUCCEEDED', amount: 12_000_000, captureMethod: 'manual' });
    const page = await owner.get(captured.location!);
    expect(main(page)).toContain('Captured 120,000.00 UZS: the payment has succeeded.');
    expect(main(page)).toMatch(/<dt>Amount<\/dt>\s*<dd>120,000\.00 UZS<\/dd>/);
    expect(main(page)).toMatch(/<dt>Held on the card<\/dt>\s*<dd>150,000\.00 UZS, of which 30,000\.00 UZS went back to the card<\/dd>/);
    const ru = main(await inLanguage('ru', () => owner.get(`/dashboard/payments/${id}`)));
    expect(ru).toMatch(/<dt>Заблокировано на карте<\/dt>\s*<dd>150 000,00 сум, из них 30 000,00 сум вернулись на карту<\/dd>/);
  });

  it('cancels the hold: all of it back on the card, audited', async () => {
    const id = await hold(4_500_000);
    const page = await owner.get(`/dashboard/payments/${id}`);
    const released = await owner.post(`/dashboard/payments/${id}/cancel-hold`, { idempotencyKey: formKeysOf(page.html)[1]! });
    expect(released.location).toBe(`/dashboard/payments/${id}?done=released`);
    expect(await read(id)).toMatchObject({ status: 'CANCELED', amountCapturable: 0 });
    const after = main(await owner.get(released.location!));
    expect(after).toContain('<p class="notice ok" role="status">The hold is canceled: 45,000.00 UZS is back on the buyer’s card.</p>');
    expect(after).toMatch(/<dt>Held on the card<\/dt>\s*<dd>45,000\.00 UZS, all of it back on the card<\/dd>/);
    expect(after).not.toContain('Cancel the hold');
    expect(await auditCount('payment.hold_released', id)).toBe(1);
  });

  it('says why a second capture does nothing, in the page’s language', async () => {
    const id = await hold(2_000_000);
    const page = await owner.get(`/dashboard/payments/${id}`);
    const [captureKey, cancelKey] = formKeysOf(page.html);
    expect((await owner.post(`/dashboard/payments/${id}/capture`, { idempotencyKey: captureKey!, amount: '20000' })).status).toBe(303);
    // The same page, left open, posted again: a new key, and the payment is no longer held.
    const second = await owner.post(`/dashboard/payments/${id}/capture`, { idempotencyKey: '00000000-0000-4000-8000-0000000000c1', amount: '20000' });
    expect(second.status).toBe(409);
    expect(main(second)).toContain('<p class="notice error" role="alert">Nothing was done: this payment is no longer held for capture. Its status: Succeeded.</p>');
    const canceled = await inLanguage('uz', () => owner.post(`/dashboard/payments/${id}/cancel-hold`, { idempotencyKey: cancelKey! }));
    expect(canceled.status).toBe(409);
    expect(main(canceled)).toContain('Hech narsa qilinmadi: bu toʻlov endi yechib olishni kutmayapti. Uning holati: Muvaffaqiyatli.');
    expect(await read(id)).toMatchObject({ status: 'SUCCEEDED', amount: 2_000_000 });
    expect(await auditCount('payment.captured', id)).toBe(1);
    expect(await auditCount('payment.hold_released', id)).toBe(0);
  });

  it('says at the amount what is wrong with it, keeping what was typed, and captures nothing', async () => {
    const id = await hold(15_000_000);
    const cases: Array<[string, number, string]> = [
      ['150 000,01', 400, 'Enter at most 150,000.00 UZS: the bank holds no more.'],
      ['abc', 400, 'Enter an amount in UZS, such as 150000 or 150,000.50: at most two digits after the point.'],
      ['0', 400, 'Enter an amount above zero, or leave the field empty.'],
    ];
    for (const [typed, status, said] of cases) {
      const refused = await capture(owner, id, typed);
      expect(refused.status, typed).toBe(status);
      expect(main(refused)).toContain(`<p class="field-error" id="capture-amount-error">${said}</p>`);
      expect(main(refused)).toMatch(new RegExp(`id="capture-amount"[^>]* value="${typed}" aria-describedby="capture-amount-hint capture-amount-error" aria-invalid="true" autofocus`));
    }
    expect(main(await inLanguage('ru', () => capture(owner, id, '150 001')))).toContain('Введите не больше 150 000,00 сум: больше банк не заблокировал.');
    expect(await read(id)).toMatchObject({ status: 'REQUIRES_CAPTURE', amountCapturable: 15_000_000 });
    expect(await auditCount('payment.captured', id)).toBe(0);
  });

  it('says that a payment with fiscal lines is captured in full here, and captures it so', async () => {
    const id = await hold(3_000_000, { receipt: receiptFor(3_000_000) });
    const refused = await capture(owner, id, '10 000');
    expect(refused.status).toBe(400);
    expect(main(refused)).toContain(
      '<p class="field-error" id="capture-amount-error">This payment’s fiscal lines are for the whole 30,000.00 UZS: capture all of it here. To capture less, capture through the API with the lines for the amount captured.</p>',
    );
    expect(await read(id)).toMatchObject({ status: 'REQUIRES_CAPTURE' });
    expect((await capture(owner, id)).location).toBe(`/dashboard/payments/${id}?done=captured`);
    expect(await read(id)).toMatchObject({ status: 'SUCCEEDED', amount: 3_000_000, receipt: expect.stringMatching(/^rcpt_/) });
  });

  it('says why the bank refused, the money still held, in the page’s language', async () => {
    const id = await hold(1_600_000);
    // The bank's own record says less was held than Tolov asked for: it refuses to capture more.
    await service.db.query(`UPDATE test_rail_operations SET amount = 1000000 WHERE operation_id = $1`, [id]);
    const refused = await capture(owner, id);
    expect(refused.status).toBe(402);
    expect(main(refused)).toContain(
      '<p class="notice error" role="alert">Nothing was captured: the bank refused (The bank holds less than that). The money is still held: try again, or cancel the hold.</p>',
    );
    expect(main(refused)).toContain('id="capture-amount"');
    expect(main(await inLanguage('uz', () => capture(owner, id)))).toContain('Hech narsa yechib olinmadi: bank rad etdi (Bank kamroq summani band qilgan). Pul hali ham band');
    expect(await read(id)).toMatchObject({ status: 'REQUIRES_CAPTURE', amountCapturable: 1_600_000 });
    expect((await capture(owner, id, '10000')).location).toBe(`/dashboard/payments/${id}?done=captured`);
  });

  it('shows a viewer the hold without a button, and refuses a viewer’s POSTs', async () => {
    const id = await hold(700_000);
    const member = await viewer();
    const page = await member.get(`/dashboard/payments/${id}`);
    expect(page.status).toBe(200);
    expect(main(page)).toContain('Held for capture');
    expect(main(page)).toMatch(/<dt>Held on the card<\/dt>\s*<dd>7,000\.00 UZS<\/dd>/);
    expect(main(page)).toContain('<p class="hint">Owners and developers can capture a payment or cancel its hold.</p>');
    expect(main(page)).not.toContain('<form');
    const formKey = '00000000-0000-4000-8000-0000000000c2';
    expect((await member.post(`/dashboard/payments/${id}/capture`, { idempotencyKey: formKey, amount: '7000' })).status).toBe(403);
    expect((await member.post(`/dashboard/payments/${id}/cancel-hold`, { idempotencyKey: formKey })).status).toBe(403);
    expect(await read(id)).toMatchObject({ status: 'REQUIRES_CAPTURE' });
  });

  it('is a 404 to another account, whose POSTs change nothing', async () => {
    const id = await hold(800_000);
    const stranger = new DashboardClient(service);
    await stranger.signUp(uniqueEmail('stranger'));
    expect((await stranger.get(`/dashboard/payments/${id}`)).status).toBe(404);
    const formKey = '00000000-0000-4000-8000-0000000000c3';
    expect((await stranger.post(`/dashboard/payments/${id}/capture`, { idempotencyKey: formKey, amount: '8000' })).status).toBe(404);
    expect((await stranger.post(`/dashboard/payments/${id}/cancel-hold`, { idempotencyKey: formKey })).status).toBe(404);
    expect(await read(id)).toMatchObject({ status: 'REQUIRES_CAPTURE', amountCapturable: 800_000 });
  });

  it('lists the holds waiting for a capture under their status', async () => {
    const id = await hold(900_000);
    const list = main(await owner.get('/dashboard/payments?status=REQUIRES_CAPTURE'));
    expect(list).toContain('<option value="REQUIRES_CAPTURE" selected>Held for capture</option>');
    expect(list).toContain(`href="/dashboard/payments/${id}"`);
    expect(list).not.toContain('s-succeeded');
  });
});
