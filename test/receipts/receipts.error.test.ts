// Bad fiscal lines: a 400 naming the field, with no order or payment written, on orders, charges and the legacy create
// alike; RECEIPT_REQUIRED for a live product that must fiscalize. A malformed field is not kept under the request's
// key; lines that do not add up, or missing lines, are the key's answer, replayed to a retry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { bindCard } from '../support/binding.js';

let service: TestService;
let merchant: Merchant;
let card: string;
beforeAll(async () => {
  service = await startService({ TOLOV_VAT_RATES: '0,12,15' });
  merchant = await service.createMerchant();
  card = await bindCard(service, merchant.test, '8600000000000007');
});
afterAll(() => service.stop());

const item = (fields: Record<string, unknown> = {}) => ({ title: 'Choy', price: 10_000, count: 1, code: '10399001001000000', packageCode: '1505709', vatPercent: 12, ...fields });
const receiptOf = (items: unknown[], shipping?: unknown) => ({ items, ...(shipping === undefined ? {} : { shipping }) });
const shipping = (fields: Record<string, unknown> = {}) => ({ title: 'Delivery', price: 5_000, code: '10112006002000000', packageCode: '1209779', vatPercent: 0, ...fields });

const written = async () =>
  (
    await service.db.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM orders WHERE product_id = $1) + (SELECT count(*) FROM payment_intents WHERE product_id = $1) AS n`,
      [merchant.productId],
    )
  )[0]!.n;

const CREATES = [
  ['an order', '/merchant/v1/orders', {}],
  ['a charge', '/subscribe/v1/charges', { card: 'CARD' }],
  ['a legacy payment intent', '/v1/payment_intents', { card: 'CARD' }],
] as const;

const post = (url: string, extra: Record<string, unknown>, body: Record<string, unknown>, key = merchant.test, idempotencyKey = idem()) =>
  service.call({ method: 'POST', url, key, idempotencyKey, body: { ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, v === 'CARD' ? card : v])), ...body } });

describe.each(CREATES)('bad lines on %s', (_name, url, extra) => {
  it.each([
    ['no items', receiptOf([]), 'receipt.items'],
    ['101 items', receiptOf(Array.from({ length: 101 }, () => item({ price: 0 }))), 'receipt.items'],
    ['items missing', {}, 'receipt.items'],
    ['an empty title', receiptOf([item({ title: '' })]), 'receipt.items.0.title'],
    ['a title of 129 characters', receiptOf([item({ title: 'x'.repeat(129) })]), 'receipt.items.0.title'],
    ['a negative price', receiptOf([item({ price: -1 })]), 'receipt.items.0.price'],
    ['a fractional price', receiptOf([item({ price: 100.5 })]), 'receipt.items.0.price'],
    ['a price as text', receiptOf([item({ price: '10000' })]), 'receipt.items.0.price'],
    ['a count of 0', receiptOf([item({ count: 0 })]), 'receipt.items.0.count'],
    ['a count over 100,000', receiptOf([item({ count: 100_001 })]), 'receipt.items.0.count'],
    ['a code of 16 digits', receiptOf([item({ code: '1039900100100000' })]), 'receipt.items.0.code'],
    ['a code with a letter', receiptOf([item({ code: '1039900100100000A' })]), 'receipt.items.0.code'],
    ['a code as a number', receiptOf([item({ code: 10399001001000000 })]), 'receipt.items.0.code'],
    ['an empty package code', receiptOf([item({ packageCode: '' })]), 'receipt.items.0.packageCode'],
    ['a package code of 21 digits', receiptOf([item({ packageCode: '1'.repeat(21) })]), 'receipt.items.0.packageCode'],
    ['a VAT rate not configured', receiptOf([item(), item({ vatPercent: 20 })]), 'receipt.items.1.vatPercent'],
    ['a fractional VAT rate', receiptOf([item({ vatPercent: 12.5 })]), 'receipt.items.0.vatPercent'],
    ['a negative discount', receiptOf([item({ discount: -1 })]), 'receipt.items.0.discount'],
    ['a commission TIN of 8 digits', receiptOf([item({ commissionTin: '12345678' })]), 'receipt.items.0.commissionTin'],
    ['an unknown item field', receiptOf([item({ unit: 'kg' })]), 'receipt.items.0.unit'],
    ['an unknown receipt field', { ...receiptOf([item()]), email: 'buyer@example.uz' }, 'receipt.email'],
    ['shipping without a code', receiptOf([item()], { title: 'Delivery', price: 5_000, packageCode: '1', vatPercent: 0 }), 'receipt.shipping.code'],
    ['shipping at a VAT rate not configured', receiptOf([item()], shipping({ vatPercent: 7 })), 'receipt.shipping.vatPercent'],
    ['shipping with a count', receiptOf([item()], shipping({ count: 2 })), 'receipt.shipping.count'],
    ['a receipt that is not an object', 'lines', 'receipt'],
  ])('%s: 400 VALIDATION_ERROR naming it, nothing written', async (_case, receipt, param) => {
    const before = await written();
    const reply = await post(url, extra, { amount: 10_000, receipt });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'VALIDATION_ERROR', param });
    expect(await written()).toBe(before);
  });

  it.each([
    ['lines short of the amount', 20_000, receiptOf([item()]), 'amount'],
    ['a line passing the amount', 10_000, receiptOf([item(), item()]), 'receipt.items.1'],
    ['shipping passing the amount', 10_000, receiptOf([item()], shipping()), 'receipt.shipping.price'],
    ['a discount above its line', 10_000, receiptOf([item({ price: 5_000, discount: 5_001 }), item({ price: 10_001 })]), 'receipt.items.0.discount'],
    ['price × count past 2^53 that no discount brings back', 10_000, receiptOf([item({ price: 1_000_000_000_000, count: 100_000 })]), 'receipt.items.0'],
  ])('%s: 400 RECEIPT_MISMATCH naming the first field off, nothing written', async (_case, amount, receipt, param) => {
    const before = await written();
    const reply = await post(url, extra, { amount, receipt });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'RECEIPT_MISMATCH', param });
    expect(await written()).toBe(before);
  });

  it('a malformed field is not kept under its key: the same key with a right field then succeeds', async () => {
    const key = idem();
    expect((await post(url, extra, { amount: 10_000, receipt: receiptOf([item({ vatPercent: 20 })]) }, merchant.test, key)).body.code).toBe('VALIDATION_ERROR');
    expect((await post(url, extra, { amount: 10_000, receipt: receiptOf([item()]) }, merchant.test, key)).status).toBe(201);
  });

  it("lines that do not add up are the key's answer: a retry gets it again, another body under the key 422", async () => {
    const key = idem();
    const first = await post(url, extra, { amount: 15_000, receipt: receiptOf([item()]) }, merchant.test, key);
    expect(first.body.code).toBe('RECEIPT_MISMATCH');
    const again = await post(url, extra, { amount: 15_000, receipt: receiptOf([item()]) }, merchant.test, key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect((await post(url, extra, { amount: 15_000, receipt: receiptOf([item()], shipping()) }, merchant.test, key)).status).toBe(422);
  });

  it('lines that add up exactly, with discounts, free lines and shipping, are taken', async () => {
    const receipt = receiptOf([item({ price: 7_000, count: 3, discount: 1_000 }), item({ price: 0, vatPercent: 15 }), item({ price: 1, count: 100_000, vatPercent: 0 })], shipping());
    const reply = await post(url, extra, { amount: 20_000 + 100_000 + 5_000, receipt });
    expect(reply.status).toBe(201);
  });
});

describe('the largest receipt', () => {
  it('100 lines with 128-character Cyrillic titles, escaped as \\uXXXX as many JSON encoders write them, is taken', async () => {
    const items = Array.from({ length: 100 }, () => item({ title: 'Ш'.repeat(128), price: 1_000 }));
    const ascii = JSON.stringify({ amount: 100_000, receipt: receiptOf(items) }).replace(/[^\x00-\x7f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
    expect(ascii.length).toBeGreaterThan(80_000);
    const reply = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: idem(), payload: ascii });
    expect(reply.status, reply.text).toBe(201);
  });
});

describe('receiptRequired in live mode', () => {
  it('a live order without lines is 400 RECEIPT_REQUIRED and writes nothing; with lines it is made', async () => {
    const before = await written();
    const refused = await post('/merchant/v1/orders', {}, { amount: 10_000 }, merchant.live);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'RECEIPT_REQUIRED', param: 'receipt' });
    expect(await written()).toBe(before);
    const made = await post('/merchant/v1/orders', {}, { amount: 10_000, receipt: receiptOf([item()]) }, merchant.live);
    expect(made.status).toBe(201);
    expect(made.body.livemode).toBe(true);
  });

  it('a retry of a live order made while lines were not required gets its order, after they became required', async () => {
    const shop = await service.createMerchant({ name: 'Changed its mind', receiptRequired: false });
    const key = idem();
    const made = await post('/merchant/v1/orders', {}, { amount: 10_000 }, shop.live, key);
    expect(made.status).toBe(201);
    await service.admin('POST', `/admin/v1/products/${shop.productId}`, { receiptRequired: true });
    const retried = await post('/merchant/v1/orders', {}, { amount: 10_000 }, shop.live, key);
    expect(retried.status).toBe(201);
    expect(retried.body.id).toBe(made.body.id);
  });

  it('test mode never requires lines', async () => {
    expect((await post('/merchant/v1/orders', {}, { amount: 10_000 })).status).toBe(201);
  });

  it('the operator turns it off for a merchant who fiscalizes itself, and on again, effective at once', async () => {
    const shop = await service.createMerchant({ name: 'Own register' });
    const off = await service.admin('POST', `/admin/v1/products/${shop.productId}`, { receiptRequired: false });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ id: shop.productId, object: 'product', receiptRequired: false });
    expect((await post('/merchant/v1/orders', {}, { amount: 10_000 }, shop.live)).status).toBe(201);
    await service.admin('POST', `/admin/v1/products/${shop.productId}`, { receiptRequired: true });
    expect((await post('/merchant/v1/orders', {}, { amount: 10_000 }, shop.live)).body.code).toBe('RECEIPT_REQUIRED');
  });

  it('a product can be made without the requirement, and the setting is checked', async () => {
    const made = await service.admin('POST', '/admin/v1/products', { name: 'Fiscalizes itself', receiptRequired: false });
    expect(made.body.receiptRequired).toBe(false);
    expect((await post('/merchant/v1/orders', {}, { amount: 10_000 }, made.body.keys.live)).status).toBe(201);
    expect((await service.admin('POST', `/admin/v1/products/${made.body.id}`, { receiptRequired: 'no' })).body).toMatchObject({ code: 'VALIDATION_ERROR', param: 'receiptRequired' });
    expect((await service.admin('POST', '/admin/v1/products/prod_missing', { receiptRequired: false })).status).toBe(404);
    expect((await service.call({ method: 'POST', url: `/admin/v1/products/${made.body.id}`, key: merchant.test, body: { receiptRequired: true } })).status).toBe(401);
  });
});
