// `tolov payment_links` as a developer runs it from the repository (npm run tolov --): links made with a fixed amount
// (and fiscal lines) or the buyer's, listed and filtered, read, turned off and described again, each printed as a line
// or as the API's JSON; usage mistakes and the API's refusals said as they are, with exit status 2 and 1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTolov } from '../support/cli.js';
import { startService, type Merchant, type TestService } from '../support/harness.js';

let service: TestService;
let merchant: Merchant;
let base: string;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
  base = await service.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => service.stop());

const tolov = (args: string[], env: Record<string, string> = {}) => runTolov(args, { key: merchant.test, base }, env);

const apiLink = async (id: string) => (await service.call({ method: 'GET', url: `/v1/payment_links/${id}`, key: merchant.test })).body;

describe('tolov payment_links', () => {
  it('makes a fixed-price link with fiscal lines and a stock, and one whose buyer enters the amount', async () => {
    const receipt = { items: [{ title: 'Dried apricots', price: 7_500_000, count: 2, code: '10399001001000000', packageCode: '1505709', vatPercent: 12 }] };
    const fixed = await tolov(['payment_links', 'create', '--description', 'Dried apricots, 2 kg', '--amount', '15000000', '--quantity-max', '20', '--receipt', JSON.stringify(receipt), '--json']);
    expect(fixed.code, fixed.stderr).toBe(0);
    const made = JSON.parse(fixed.stdout);
    expect(made).toMatchObject({ object: 'payment_link', amount: 15_000_000, quantityMax: 20, active: true, receipt });
    expect(await apiLink(made.id)).toEqual(made);

    const chosen = await tolov(['payment_links', 'create', '--description', 'Donation to the school library', '--amount-min', '500000', '--amount-max', '50000000']);
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(chosen.stdout).toMatch(/^plink_\w+ {2}active {2}buyer chooses 5000\.00 UZS–500000\.00 UZS {2}"Donation to the school library" {2}http\S+\/l\/[0-9A-Za-z]{10}\n$/);
    expect((await tolov(['payment_links', 'get', made.id])).stdout).toBe(`${made.id}  active  150000.00 UZS, at most 20 at once  "Dried apricots, 2 kg"  ${made.url}\n`);
  });

  it('lists links newest first, filtered by state, and turns one off and describes it again', async () => {
    const shop = await service.createMerchant();
    const as = (args: string[]) => tolov(args, { TOLOV_API_KEY: shop.test });
    const ids: string[] = [];
    for (const description of ['Somsa', 'Tandir non', 'Choy']) {
      ids.push(JSON.parse((await as(['payment_links', 'create', '--description', description, '--amount', '800000', '--json'])).stdout).id);
    }
    const off = await as(['payment_links', 'update', ids[0]!, '--active', 'false']);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toContain(`${ids[0]}  inactive  8000.00 UZS  "Somsa"`);
    expect((await service.call({ method: 'GET', url: `/v1/payment_links/${ids[0]}`, key: shop.test })).body.active).toBe(false);

    const listed = await as(['payment_links', 'list', '--limit', '2']);
    expect(listed.stdout.trimEnd().split('\n').map((line) => line.split('  ')[0])).toEqual([ids[2], ids[1]]);
    const active = JSON.parse((await as(['payment_links', 'list', '--active', 'true', '--json'])).stdout);
    expect(active.map((link: { id: string }) => link.id)).toEqual([ids[2], ids[1]]);
    expect((await as(['payment_links', 'list', '--active', 'false'])).stdout).toMatch(new RegExp(`^${ids[0]}  inactive`));

    const described = await as(['payment_links', 'update', ids[1]!, '--description', 'Tandir non, 10 dona', '--json']);
    expect(JSON.parse(described.stdout)).toMatchObject({ id: ids[1], description: 'Tandir non, 10 dona', active: true });
    expect((await tolov(['payment_links', 'list'], { TOLOV_API_KEY: (await service.createMerchant()).test })).stdout).toBe('no payment links\n');
  });

  it('says what is wrong: a usage mistake with status 2, the API’s refusal with its code and status 1', async () => {
    expect(await tolov(['payment_links', 'create', '--amount', '1000'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^tolov: tolov payment_links create needs --description/) });
    expect(await tolov(['payment_links', 'create', '--description', 'Somsa', '--amount', '8 000'])).toMatchObject({
      code: 2,
      stderr: 'tolov: --amount takes a whole number of tiyin (1500000 is UZS 15,000.00), not 8 000\n',
    });
    expect(await tolov(['payment_links', 'create', '--description', 'Somsa', '--amount', '1000', '--receipt', '{items'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--receipt takes the fiscal lines as JSON') });
    expect(await tolov(['payment_links', 'list', '--active', 'yes'])).toMatchObject({ code: 2, stderr: 'tolov: --active takes true or false, not yes\n' });
    expect(await tolov(['payment_links', 'update', 'plink_any'])).toMatchObject({ code: 2, stderr: expect.stringContaining('takes --active and/or --description') });
    expect(await tolov(['payment_links', 'delete', 'plink_any'])).toMatchObject({ code: 2, stderr: expect.stringContaining('tolov payment_links get <plink_…>') });

    const both = await tolov(['payment_links', 'create', '--description', 'Somsa', '--amount', '1000', '--amount-min', '1000']);
    expect(both).toMatchObject({ code: 1, stderr: expect.stringMatching(/^tolov: VALIDATION_ERROR: amountMin bounds an amount the buyer chooses.* \(req_\w+\)\n$/) });
    expect(await tolov(['payment_links', 'get', 'plink_missing'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/^tolov: NOT_FOUND: No such payment link \(req_\w+\)/) });
    expect((await tolov(['--help'])).stdout).toContain('payment_links list [--active true|false] [--limit N]');
  });
});
