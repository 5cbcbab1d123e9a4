// The console's money checks and audit log. The checks: every one ok on a clean database, and a receipt the fiscal
// module refused listed with links to its product and to it. The audit log: who did what to what, when and through
// what, newest first, 100 a page; read-only in the console, and UPDATE, DELETE and TRUNCATE refused by the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSED_TEST_CODE } from '../../src/rails/test-fiscal.js';
import { bindCard } from '../support/binding.js';
import { startService, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';
import { fiscalizeAll } from '../support/receipts.js';
import { firstAdmin, invitedOperator, type Operator } from './client.js';

let service: TestService;
let admin: Operator;
let support: Operator;

beforeAll(async () => {
  service = await startService();
  admin = await firstAdmin(service);
  support = await invitedOperator(service, admin, 'support');
});
afterAll(() => service?.stop());

describe('the money checks page', () => {
  it('shows every check ok on a clean database, to support too', async () => {
    const page = await support.client.get('/operator/checks');
    expect(page.status).toBe(200);
    expect(page.html).toContain('Every check holds.');
    expect(page.html.match(/<span class="status s-succeeded">OK<\/span>/g)).toHaveLength(8);
    expect(page.html).not.toContain('s-failed');
    for (const words of ['The ledger sums to zero', 'Every ledger transaction balances', 'Operations the bank has not settled', 'Failed payouts', 'Failing webhook endpoints']) expect(page.html).toContain(words);
  });

  it('lists a receipt the fiscal module refused, with links to its product and to the receipt', async () => {
    const shop = await service.createMerchant();
    const card = await bindCard(service, shop.test, '8600000000000007');
    const lines = { items: [{ title: 'Goods', price: 100_000, count: 1, code: REFUSED_TEST_CODE, packageCode: '1505709', vatPercent: 12 }] };
    const paid = (await charge(service, shop.test, { amount: 100_000, card, receipt: lines })).body;
    await fiscalizeAll(service);
    const page = await admin.client.get('/operator/checks');
    expect(page.status).toBe(200);
    expect(page.html).toContain('Checks that found problems: 1.');
    const receipts = /<section class="card" aria-labelledby="check-receipts_unsettled">[\s\S]*?<\/section>/.exec(page.html)![0];
    expect(receipts).toContain('<span class="status s-failed">Not OK</span>');
    expect(receipts).toContain('Problems found: 1');
    expect(receipts).toContain(`<a href="/operator/products/${shop.productId}"><code>${shop.productId}</code></a>`);
    expect(receipts).toContain(`<a href="/operator/search/${paid.receipt}"><code>${paid.receipt}</code></a>`);
    expect(receipts).toContain('Test mode');
    // The link opens the receipt, FAILED, with why.
    const receipt = await admin.client.get(`/operator/search/${paid.receipt}`);
    expect(receipt.html).toContain('s-failed');
    expect(receipt.html).toContain('INVALID_CODE');
  });
});

interface Entry {
  who: string;
  via: string;
  action: string;
  target: string;
  detail: string;
}

/** The audit table's rows, each cell as its HTML. */
function entriesOf(html: string): Entry[] {
  return [...html.matchAll(/<tr><td data-label="When">[\s\S]*?<\/tr>/g)].map(([row]) => {
    const cell = (label: string) => new RegExp(`data-label="${label}">([\\s\\S]*?)</td>`).exec(row)?.[1] ?? '';
    return { who: cell('Who'), via: cell('Through'), action: cell('What').replace(/<\/?code>/g, ''), target: cell('On'), detail: cell('Detail') };
  });
}

const olderLink = (html: string) => /<a href="(\/operator\/audit\?[^"]+)" rel="next">/.exec(html)?.[1]?.replaceAll('&amp;', '&');
const entriesInDatabase = async () => (await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM operator_audit'))[0]!.n;

describe('the audit log page', () => {
  it('lists who did what to what, through what and when, newest first', async () => {
    await admin.client.get('/operator/search/pi_0000000000000000audited');
    await service.admin('GET', '/admin/v1/search?q=ord_0000000000000000audited');
    const page = await support.client.get('/operator/audit');
    expect(page.status).toBe(200);
    const [api, viaConsole, ...older] = entriesOf(page.html);
    expect(api).toEqual({
      who: 'operator token (API)',
      via: 'API',
      action: 'support.searched',
      target: '<a href="/operator/search/ord_0000000000000000audited"><code>ord_0000000000000000audited</code></a>',
      detail: '',
    });
    expect(viaConsole).toMatchObject({ who: admin.email, via: 'Console', action: 'support.searched', target: expect.stringContaining('href="/operator/search/pi_0000000000000000audited"') });
    expect(older).toContainEqual(expect.objectContaining({ who: 'operator token (API)', action: 'operator.created', detail: `${admin.email} as admin` }));
    expect(older).toContainEqual(expect.objectContaining({ who: admin.email, action: 'operator.invited', target: `<code>${support.email}</code>`, detail: 'as support' }));
    expect(page.html).toMatch(/<td data-label="When"><time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time><\/td>/);
  });

  it('pages 100 entries at a time, older ones behind a link, none twice and none left out', async () => {
    await service.db.query(`INSERT INTO operator_audit (operator_id, via, action, target) SELECT NULL, 'api', 'test.filler', 'filler-' || g FROM generate_series(1, 150) g`);
    const total = await entriesInDatabase();
    const first = await admin.client.get('/operator/audit');
    expect(entriesOf(first.html)).toHaveLength(100);
    const link = olderLink(first.html)!;
    expect(link).toMatch(/^\/operator\/audit\?before=\d+$/);
    const second = await admin.client.get(link);
    expect(entriesOf(second.html)).toHaveLength(total - 100);
    expect(olderLink(second.html)).toBeUndefined();
    const targets = [...entriesOf(first.html), ...entriesOf(second.html)].map((entry) => entry.target);
    expect(targets.filter((target) => target.includes('filler-'))).toHaveLength(150);
    expect(targets.indexOf('<code>filler-150</code>')).toBeLessThan(targets.indexOf('<code>filler-1</code>'));
  });

  it('narrows to the entries about one object, and refuses a malformed page', async () => {
    const about = await admin.client.get('/operator/audit?target=pi_0000000000000000audited');
    expect(entriesOf(about.html).map((entry) => entry.action)).toEqual(['support.searched']);
    expect(about.html).toContain('value="pi_0000000000000000audited"');
    // Every entry is about the object in the filter: no column repeats it.
    expect(about.html).not.toContain('<th scope="col">On</th>');
    for (const query of ['before=abc', 'before=-1', 'before=1&before=2', 'target=a&target=b', `target=${'x'.repeat(201)}`]) expect((await admin.client.get(`/operator/audit?${query}`)).status, query).toBe(400);
  });

  it('has no way to change it in the console', async () => {
    for (const path of ['/operator/audit', '/operator/audit/1', '/operator/audit/1/delete']) expect((await admin.client.post(path, {})).status, path).toBe(404);
  });

  it('is refused UPDATE, DELETE and TRUNCATE by the database itself', async () => {
    const before = await entriesInDatabase();
    for (const statement of [`UPDATE operator_audit SET detail = 'changed'`, 'DELETE FROM operator_audit', 'TRUNCATE operator_audit']) {
      await expect(service.db.query(statement), statement).rejects.toThrow(/append-only/);
    }
    expect(await entriesInDatabase()).toBe(before);
    const [changed] = await service.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM operator_audit WHERE detail = 'changed'`);
    expect(changed!.n).toBe(0);
  });
});
