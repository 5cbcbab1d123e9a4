// The story the examples are recorded from: a shop in Samarkand takes orders on the hosted page, saves cards, charges
// them, refunds, and receives webhooks; each step also provokes the refusals its operation documents. The order of the
// steps decides which answer is each operation's example (the first success), so it reads as a merchant meets them.
import type { WebhooksService } from '../../src/modules/webhooks/service.js';
import { SENT_EVENT_TYPES } from '../../src/modules/webhooks/events.js';
import { Recorder, type Reply } from './recorder.js';

export interface Shop {
  productId: string;
  test: string;
  live: string;
}

/** The cards of the test rail (docs/testing.md). */
export const CARDS = {
  succeeds: '8600000000000007',
  humo: '9860000000000000',
  insufficientFunds: '8600000000000015',
  inactive: '8600000000000023',
  unclear: '8600000000000031',
} as const;
const TEST_CODE = '111111';
const PHONE = '998901234567';
/** An expiry a few years ahead, as a buyer types it. */
export const EXPIRY = `12/${String((new Date().getUTCFullYear() + 4) % 100).padStart(2, '0')}`;

/**
 * The fiscal lines of order 1001: two kilograms of apricots and the delivery, 15,000.00 so'm. The codes have the
 * right shape; a real shop looks up its own (docs/receipts.md).
 */
export const APRICOTS_RECEIPT = {
  items: [{ title: 'Dried apricots, 1 kg', price: 650_000, count: 2, code: '10813001001000000', packageCode: '1505709', vatPercent: 12 }],
  shipping: { title: 'Delivery in Samarkand', price: 200_000, code: '10112006002000000', packageCode: '1209779', vatPercent: 12 },
};
/** The monthly box's line, with its subscriber's discount: 28,000.00 − 3,000.00 = 25,000.00 so'm. */
export const BOX_RECEIPT = {
  items: [{ title: 'Dried fruit box, monthly', price: 2_800_000, count: 1, code: '10813001002000000', packageCode: '1505712', vatPercent: 12, discount: 300_000 }],
};

const ok = Recorder.expect;
const tokenOf = (url: string) => url.split('/').at(-1)!;

/** The operator makes the shop, a second key, and the shop's branding. */
export async function operatorSetsUp(s: Recorder): Promise<Shop> {
  const made = ok(await s.admin('POST', '/admin/v1/products', { name: 'Samarkand Dried Fruit' }), 201, 'product').body;
  const shop = { productId: made.id, test: made.keys.test, live: made.keys.live };
  const key = ok(await s.admin('POST', `/admin/v1/products/${shop.productId}/keys`, { mode: 'test', scopes: ['subscribe'] }), 201, 'key').body;
  ok(await s.admin('GET', `/admin/v1/products/${shop.productId}/keys`), 200, 'keys');
  ok(await s.admin('POST', `/admin/v1/keys/${key.id}/revoke`), 200, 'revoke');
  ok(await s.admin('POST', `/admin/v1/products/${shop.productId}/live`), 200, 'live');
  ok(await s.admin('GET', `/admin/v1/products/${shop.productId}/branding`), 200, 'branding');
  ok(await s.admin('POST', `/admin/v1/products/${shop.productId}/branding`, { displayName: 'Samarkand Dried Fruit', brandColor: '#0F766E' }), 200, 'branding');
  return shop;
}

/** A buyer's two steps on a hosted page: card, then the SMS code. */
async function pay(s: Recorder, token: string, pan: string, extra: Record<string, unknown> = {}): Promise<Reply> {
  ok(await s.call({ method: 'POST', url: `/checkout/v1/sessions/${token}/card`, body: { pan, expiry: EXPIRY, phone: PHONE, ...extra } }), 200, `card ${pan}`);
  return s.call({ method: 'POST', url: `/checkout/v1/sessions/${token}/code`, body: { code: TEST_CODE } });
}

export async function createOrder(s: Recorder, shop: Shop, number: number, amount: number, description: string, receipt?: object) {
  const body = { amount, description, customerRef: 'customer-4821', returnUrl: `https://shop.example.uz/orders/${number}/done`, ...(receipt ? { receipt } : {}) };
  return ok(await s.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: `order-${number}`, body }), 201, 'order').body;
}

/** Orders: paid by a test helper (with fiscal lines), canceled, expired, refused; returns the paid one's sale receipt. */
export async function ordersAreMade(s: Recorder, shop: Shop): Promise<string> {
  const paid = await createOrder(s, shop, 1001, 1_500_000, 'Dried apricots, 2 kg', APRICOTS_RECEIPT);
  const receipt = ok(await s.call({ method: 'POST', url: `/v1/test_helpers/orders/${paid.id}/pay`, key: shop.test, body: { card: CARDS.succeeds } }), 200, 'pay').body.receipt;
  ok(await s.call({ method: 'GET', url: `/merchant/v1/orders/${paid.id}`, key: shop.test }), 200, 'order');
  const canceled = await createOrder(s, shop, 1002, 890_000, 'Raisins, 1 kg');
  ok(await s.call({ method: 'POST', url: `/merchant/v1/orders/${canceled.id}/cancel`, key: shop.test, idempotencyKey: 'order-1002-cancel' }), 200, 'cancel');
  await s.call({ method: 'POST', url: `/merchant/v1/orders/${canceled.id}/cancel`, key: shop.test, idempotencyKey: 'order-1002-cancel-again' });
  const expired = await createOrder(s, shop, 1003, 2_400_000, 'Walnuts, 3 kg');
  ok(await s.call({ method: 'POST', url: `/v1/test_helpers/orders/${expired.id}/expire`, key: shop.test }), 200, 'expire');
  await s.call({ method: 'POST', url: `/v1/test_helpers/orders/${expired.id}/expire`, key: shop.test });
  const refused = await createOrder(s, shop, 1004, 640_000, 'Dried figs, 1 kg');
  await s.call({ method: 'POST', url: `/v1/test_helpers/orders/${refused.id}/pay`, key: shop.test, body: { card: CARDS.insufficientFunds } });
  await s.call({ method: 'POST', url: `/v1/test_helpers/orders/${refused.id}/pay`, key: shop.test, body: { card: CARDS.inactive } });
  ok(await s.call({ method: 'GET', url: '/merchant/v1/orders?limit=2', key: shop.test }), 200, 'orders');
  return receipt;
}

/** The hosted payment page's calls, as a buyer pays an order and saves the card; then the refusals a buyer meets. */
export async function buyerPaysOnThePage(s: Recorder, shop: Shop): Promise<void> {
  const order = await createOrder(s, shop, 1005, 3_200_000, 'Dried apricots and almonds, gift box');
  const token = tokenOf(order.paymentUrl);
  const session = `/checkout/v1/sessions/${token}`;
  ok(await s.call({ method: 'GET', url: session }), 200, 'session');
  await s.call({ method: 'POST', url: `${session}/code`, body: { code: TEST_CODE } });
  await s.call({ method: 'POST', url: `${session}/card`, body: { pan: CARDS.inactive, expiry: EXPIRY, phone: PHONE } });
  await s.call({ method: 'POST', url: `${session}/card`, body: { pan: '8600000000000001', expiry: EXPIRY, phone: PHONE } });
  ok(await s.call({ method: 'POST', url: `${session}/card`, body: { pan: CARDS.succeeds, expiry: EXPIRY, phone: PHONE, saveCard: true } }), 200, 'card');
  await s.call({ method: 'POST', url: `${session}/code/resend` });
  // As if the code had been sent a minute ago: the resend cooldown has passed.
  await s.db.query("UPDATE checkout_sessions SET code_sent_at = now() - interval '1 minute' WHERE token = $1", [token]);
  ok(await s.call({ method: 'POST', url: `${session}/code/resend` }), 200, 'resend');
  await s.call({ method: 'POST', url: `${session}/code`, body: { code: '000000' } });
  ok(await s.call({ method: 'POST', url: `${session}/code`, body: { code: TEST_CODE } }), 200, 'code');

  const refused = await createOrder(s, shop, 1006, 5_100_000, 'Pistachios, 2 kg');
  await pay(s, tokenOf(refused.paymentUrl), CARDS.insufficientFunds);
  const paying = await createOrder(s, shop, 1007, 1_200_000, 'Dried cherries, 1 kg');
  ok(await pay(s, tokenOf(paying.paymentUrl), CARDS.unclear), 200, 'unclear payment');
  await s.call({ method: 'POST', url: `/merchant/v1/orders/${paying.id}/cancel`, key: shop.test, idempotencyKey: 'order-1007-cancel' });
  await s.call({ method: 'POST', url: `/v1/test_helpers/orders/${paying.id}/expire`, key: shop.test });
}

export async function createBinding(s: Recorder, shop: Shop, customerRef: string) {
  const body = { customerRef, returnUrl: 'https://shop.example.uz/account/cards' };
  return ok(await s.call({ method: 'POST', url: '/subscribe/v1/card_bindings', key: shop.test, idempotencyKey: `bind-${customerRef}`, body }), 201, 'binding').body;
}

/** Card bindings: completed by the test helper, expired, and locked after too many codes; returns the saved cards. */
export async function cardsAreSaved(s: Recorder, shop: Shop): Promise<{ card: string; humo: string; poor: string }> {
  const binding = await createBinding(s, shop, 'customer-4821');
  const complete = (id: string, card: string) => s.call({ method: 'POST', url: `/v1/test_helpers/card_bindings/${id}/complete`, key: shop.test, body: { card } });
  ok(await complete(binding.id, CARDS.succeeds), 200, 'complete');
  await complete(binding.id, CARDS.succeeds);
  const read = ok(await s.call({ method: 'GET', url: `/subscribe/v1/card_bindings/${binding.id}`, key: shop.test }), 200, 'binding').body;
  const humo = await createBinding(s, shop, 'customer-5310');
  const humoCard = ok(await complete(humo.id, CARDS.humo), 200, 'humo').body.card;
  const poor = await createBinding(s, shop, 'customer-6172');
  const poorCard = ok(await complete(poor.id, CARDS.insufficientFunds), 200, 'poor').body.card;

  const expired = await createBinding(s, shop, 'customer-7001');
  await s.db.query("UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE token = $1", [expired.clientToken]);
  await s.call({ method: 'GET', url: `/checkout/v1/sessions/${expired.clientToken}` });
  const locked = await createBinding(s, shop, 'customer-7002');
  const session = `/checkout/v1/sessions/${locked.clientToken}`;
  ok(await s.call({ method: 'POST', url: `${session}/card`, body: { pan: CARDS.succeeds, expiry: EXPIRY, phone: PHONE }, example: false }), 200, 'card');
  for (let attempt = 0; attempt < 6; attempt++) await s.call({ method: 'POST', url: `${session}/code`, body: { code: '000000' } });
  await s.call({ method: 'POST', url: `${session}/code/resend` });
  await s.call({ method: 'POST', url: `${session}/card`, body: { pan: CARDS.succeeds, expiry: EXPIRY, phone: PHONE } });
  return { card: read.card, humo: humoCard, poor: poorCard };
}

/**
 * Saved cards read, listed, deleted; charges to them, the legacy pair, refunds (and the request log of them), the
 * balance. Returns the charge with fiscal lines that was refunded.
 */
export async function cardsAreCharged(s: Recorder, shop: Shop, cards: { card: string; humo: string; poor: string }): Promise<string> {
  const charge = (key: string, body: Record<string, unknown>) => s.call({ method: 'POST', url: '/subscribe/v1/charges', key: shop.test, idempotencyKey: key, body });
  const membership = {
    amount: 2_500_000,
    card: cards.card,
    description: 'Dried fruit box, monthly subscription',
    metadata: { subscription: 'sub-4821', period: '2026-12' },
    receipt: BOX_RECEIPT,
  };
  const paid = ok(await charge('charge-sub-4821-2026-12', membership), 201, 'charge').body;
  ok(await s.call({ method: 'GET', url: `/subscribe/v1/charges/${paid.id}`, key: shop.test }), 200, 'charge');
  const failed = ok(await charge('charge-sub-6172-2026-12', { ...membership, card: cards.poor, metadata: { subscription: 'sub-6172', period: '2026-12' } }), 201, 'failed').body;
  ok(await s.call({ method: 'GET', url: `/subscribe/v1/cards/${cards.card}`, key: shop.test }), 200, 'card');
  ok(await s.call({ method: 'DELETE', url: `/subscribe/v1/cards/${cards.humo}`, key: shop.test }), 200, 'delete');
  await charge('charge-sub-5310-2026-12', { ...membership, card: cards.humo, metadata: { subscription: 'sub-5310', period: '2026-12' } });
  ok(await s.call({ method: 'GET', url: '/subscribe/v1/cards?limit=2', key: shop.test }), 200, 'cards');
  ok(await s.call({ method: 'GET', url: '/subscribe/v1/charges?limit=2', key: shop.test }), 200, 'charges');
  await legacyPair(s, shop, cards.card);
  await holdsAreCaptured(s, shop, cards.card);

  const refund = (key: string, body: Record<string, unknown>) => s.call({ method: 'POST', url: '/v1/refunds', key: shop.test, idempotencyKey: key, body });
  const refunded = ok(await refund('refund-sub-4821-2026-12', { paymentIntent: paid.id, reason: 'requested_by_customer' }), 201, 'refund').body;
  await refund('refund-sub-4821-2026-12-again', { paymentIntent: paid.id });
  await refund('refund-sub-6172-2026-12', { paymentIntent: failed.id });
  ok(await s.call({ method: 'GET', url: '/v1/request_logs?limit=3', key: shop.test }), 200, 'log');
  ok(await s.call({ method: 'GET', url: `/v1/refunds/${refunded.id}`, key: shop.test }), 200, 'refund');
  ok(await s.call({ method: 'GET', url: '/v1/refunds', key: shop.test }), 200, 'refunds');
  ok(await s.call({ method: 'GET', url: '/v1/balance', key: shop.test }), 200, 'balance');
  return paid.id;
}

/** Two-step payments: a deposit held and captured in part; a hold canceled; captures refused. */
async function holdsAreCaptured(s: Recorder, shop: Shop, card: string): Promise<void> {
  const hold = (key: string, amount: number, description: string) =>
    s.call({ method: 'POST', url: '/subscribe/v1/charges', key: shop.test, idempotencyKey: key, body: { amount, card, capture: 'manual', description } });
  const capture = (key: string, id: string, body: Record<string, unknown>) => s.call({ method: 'POST', url: `/subscribe/v1/charges/${id}/capture`, key: shop.test, idempotencyKey: key, body });
  const deposit = ok(await hold('rental-7731-hold', 3_000_000, 'Bicycle rental 7731, deposit'), 201, 'hold').body;
  await capture('rental-7731-capture-too-much', deposit.id, { amount: 3_500_000 });
  ok(await capture('rental-7731-capture', deposit.id, { amount: 2_200_000 }), 200, 'capture');
  const booking = ok(await hold('rental-7790-hold', 500_000, 'Bicycle rental 7790, deposit'), 201, 'hold').body;
  ok(await s.call({ method: 'POST', url: `/subscribe/v1/charges/${booking.id}/cancel`, key: shop.test, idempotencyKey: 'rental-7790-cancel' }), 200, 'cancel');
  await capture('rental-7790-capture', booking.id, {});
  const forgotten = ok(await hold('rental-7802-hold', 400_000, 'Bicycle rental 7802, deposit'), 201, 'hold').body;
  ok(await s.call({ method: 'POST', url: `/v1/test_helpers/charges/${forgotten.id}/expire_hold`, key: shop.test }), 200, 'expire hold');
}

/** The legacy pair: create, confirm; create, cancel; and a partial refund, refused. */
async function legacyPair(s: Recorder, shop: Shop, card: string): Promise<void> {
  const create = (key: string) =>
    s.call({ method: 'POST', url: '/v1/payment_intents', key: shop.test, idempotencyKey: key, body: { amount: 990_000, card, description: 'Almonds, 1 kg' } });
  const intent = ok(await create('intent-1008'), 201, 'intent').body;
  const confirmed = ok(await s.call({ method: 'POST', url: `/v1/payment_intents/${intent.id}/confirm`, key: shop.test, idempotencyKey: 'intent-1008-confirm' }), 200, 'confirm').body;
  await s.call({ method: 'POST', url: `/v1/payment_intents/${intent.id}/confirm`, key: shop.test, idempotencyKey: 'intent-1008-confirm-again' });
  ok(await s.call({ method: 'GET', url: `/v1/payment_intents/${intent.id}`, key: shop.test }), 200, 'intent');
  const dropped = ok(await create('intent-1009'), 201, 'intent').body;
  ok(await s.call({ method: 'POST', url: `/v1/payment_intents/${dropped.id}/cancel`, key: shop.test, idempotencyKey: 'intent-1009-cancel' }), 200, 'cancel');
  await s.call({ method: 'POST', url: `/v1/payment_intents/${dropped.id}/cancel`, key: shop.test, idempotencyKey: 'intent-1009-cancel-again' });
  await s.call({ method: 'POST', url: '/v1/refunds', key: shop.test, idempotencyKey: 'refund-1008', body: { paymentIntent: confirmed.id, amount: 500_000 } });
}

/**
 * Live mode: a payment without fiscal lines is refused first; with them (or once the operator has let the product
 * go without, for a shop that fiscalizes its sales itself), live mode without a bank gateway refuses what needs the bank.
 */
export async function liveModeHasNoRail(s: Recorder, shop: Shop): Promise<void> {
  const card = 'card_0VbfA1b2C3d4E5f6G7h8I9j0';
  const live = (url: string, idempotencyKey: string, body: Record<string, unknown>) => s.call({ method: 'POST', url, key: shop.live, idempotencyKey, body });
  await live('/subscribe/v1/card_bindings', 'live-bind-1', {});
  await live('/subscribe/v1/charges', 'live-charge-1', { amount: 100_000, card });
  await live('/merchant/v1/orders', 'live-order-1', { amount: 100_000 });
  await live('/v1/payment_intents', 'live-intent-1', { amount: 100_000, card });
  await live('/subscribe/v1/charges', 'live-charge-2', { amount: 2_500_000, card, receipt: BOX_RECEIPT });
  ok(await s.admin('POST', `/admin/v1/products/${shop.productId}`, { receiptRequired: false }), 200, 'receipts not required');
  await live('/subscribe/v1/charges', 'live-charge-3', { amount: 100_000, card });
  ok(await s.admin('POST', `/admin/v1/products/${shop.productId}`, { receiptRequired: true }), 200, 'receipts required');
  await s.call({ method: 'POST', url: `/v1/payment_intents/pi_0VbfA1b2C3d4E5f6G7h8I9j0/confirm`, key: shop.live, idempotencyKey: 'live-confirm-1' });
  await live('/v1/refunds', 'live-refund-1', { paymentIntent: 'pi_0VbfA1b2C3d4E5f6G7h8I9j0' });
  await s.admin('GET', `/admin/v1/reconciliation?date=${new Date().toISOString().slice(0, 10)}&mode=live`);
}

/** Webhook endpoints, one event sent again to a receiver and delivered, and the events. */
export async function webhooksAreSet(s: Recorder, shop: Shop, services: { webhooks: WebhooksService }, receiverUrl: string): Promise<void> {
  const create = (body: Record<string, unknown>, example?: false) =>
    s.call({ method: 'POST', url: '/v1/webhook_endpoints', key: shop.test, idempotencyKey: `endpoint-${String(body.url)}`, body, ...(example === false ? { example } : {}) });
  const events = ['order.paid', 'order.failed', 'payment_intent.succeeded', 'payment_intent.failed'];
  const endpoint = ok(await create({ url: 'https://shop.example.uz/webhooks/tolov', enabledEvents: events, description: 'Order fulfilment' }), 201, 'endpoint').body;
  const url = `/v1/webhook_endpoints/${endpoint.id}`;
  ok(await s.call({ method: 'GET', url, key: shop.test }), 200, 'endpoint');
  ok(await s.call({ method: 'POST', url, key: shop.test, idempotencyKey: 'endpoint-update-1', body: { description: 'Order fulfilment and receipts', enabledEvents: [...events, 'order.expired'] } }), 200, 'update');
  ok(await s.call({ method: 'POST', url: `${url}/roll_secret`, key: shop.test, idempotencyKey: 'endpoint-roll-1', body: { overlapSeconds: 3600 } }), 200, 'roll');
  ok(await s.call({ method: 'GET', url: '/v1/webhook_endpoints', key: shop.test }), 200, 'endpoints');
  const staging = ok(await create({ url: 'https://staging.shop.example.uz/webhooks/tolov' }, false), 201, 'staging').body;
  const receiver = ok(await create({ url: receiverUrl }, false), 201, 'receiver').body;

  ok(await s.call({ method: 'GET', url: '/v1/events?limit=3', key: shop.test }), 200, 'events');
  const [event] = ok(await s.call({ method: 'GET', url: '/v1/events?type=order.paid&limit=1', key: shop.test }), 200, 'order.paid').body.data;
  ok(await s.call({ method: 'GET', url: `/v1/events/${event.id}`, key: shop.test }), 200, 'event');
  const resend = (endpointId: string) => s.call({ method: 'POST', url: `/v1/events/${event.id}/resend`, key: shop.test, body: { endpoint: endpointId } });
  ok(await resend(receiver.id), 201, 'resend');
  await services.webhooks.deliverDue(100);
  ok(await s.call({ method: 'GET', url: `/v1/webhook_endpoints/${receiver.id}/deliveries`, key: shop.test }), 200, 'deliveries');
  for (let sent = 1; sent <= 10; sent++) await resend(receiver.id);
  ok(await s.call({ method: 'POST', url: `/v1/webhook_endpoints/${staging.id}`, key: shop.test, body: { status: 'disabled' } }), 200, 'disable');
  await resend(staging.id);
  ok(await s.call({ method: 'DELETE', url: `/v1/webhook_endpoints/${staging.id}`, key: shop.test }), 200, 'delete');
  await s.call({ method: 'DELETE', url: `/v1/webhook_endpoints/${staging.id}`, key: shop.test });
  for (const type of SENT_EVENT_TYPES) {
    const [sent] = ok(await s.call({ method: 'GET', url: `/v1/events?type=${type}&limit=1`, key: shop.test, example: false }), 200, type).body.data;
    if (sent) s.examples.events[type] = sent;
  }
}

/** Our failure as a merchant meets it: the database has lost a table for a moment, and a list answers 500. */
export async function databaseFails(s: Recorder, shop: Shop): Promise<void> {
  await s.db.query('ALTER TABLE orders RENAME TO orders_away');
  try {
    await s.call({ method: 'GET', url: '/merchant/v1/orders', key: shop.test });
  } finally {
    await s.db.query('ALTER TABLE orders_away RENAME TO orders');
  }
}

/**
 * The operator's reports: the day's reconciliation, the money checks, a suspension and the order it refuses, and this
 * process's timings after one charge.
 */
export async function operatorReads(s: Recorder, shop: Shop, card: string): Promise<void> {
  ok(await s.admin('GET', `/admin/v1/reconciliation?date=${new Date().toISOString().slice(0, 10)}&mode=test`), 200, 'reconciliation');
  ok(await s.admin('GET', '/admin/v1/checks'), 200, 'checks');
  ok(await s.admin('GET', `/admin/v1/products/${shop.productId}`), 200, 'product');
  ok(await s.admin('POST', `/admin/v1/products/${shop.productId}/suspend`, { reason: 'Documents requested: the certificate of state registration' }), 200, 'suspend');
  await s.call({ method: 'POST', url: '/merchant/v1/orders', key: shop.test, idempotencyKey: 'order-while-suspended', body: { amount: 150_000 } });
  ok(await s.admin('POST', `/admin/v1/products/${shop.productId}/resume`), 200, 'resume');
  ok(await s.admin('POST', '/admin/v1/timings/reset'), 200, 'reset');
  const body = { amount: 1_800_000, card, description: 'Dried fruit box, monthly subscription', metadata: { subscription: 'sub-4821', period: '2027-01' } };
  ok(await s.call({ method: 'POST', url: '/subscribe/v1/charges', key: shop.test, idempotencyKey: 'charge-sub-4821-2027-01', body }), 201, 'charge');
  ok(await s.admin('GET', '/admin/v1/timings'), 200, 'timings');
}
