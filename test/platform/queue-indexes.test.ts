import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/types.js';
import { QUEUE_DEPTHS_SQL } from '../../src/modules/monitoring/queues.js';
import { engine, explain, openTestDb } from '../support/harness.js';

const SETTLED = 5_000;
const WAITING = 2_000;

/**
 * Statistics are often taken while the work queues (debits and refunds awaiting the bank, deliveries awaiting a
 * receiver, open orders and card captures awaiting expiry) are nearly empty; an outage or a busy hour then fills them.
 * A lookup by key must still read one row, not the whole queue.
 */
describe(`queues that grew after their statistics were taken (${engine})`, () => {
  let db: Db;
  beforeAll(async () => {
    db = await openTestDb();
    await db.exec(`
      INSERT INTO products (id, name, scopes, fee_bps) VALUES ('prod_q', 'Queue', '{subscribe}', 100);
      INSERT INTO test_rail_cards (token, network, behaviour) VALUES ('tr_q', 'uzcard', 'succeeds');
      INSERT INTO cards (id, product_id, livemode, status, rail, rail_token, masked_pan, expiry)
        VALUES ('card_q', 'prod_q', false, 'ACTIVE', 'uzcard', 'tr_q', '860000******0007', '12/30');
      INSERT INTO webhook_endpoints (id, product_id, livemode, url, status, secret)
        VALUES ('we_q', 'prod_q', false, 'https://hooks.example.com/q', 'enabled', 'whsec_cXVldWUtc2VjcmV0LXF1ZXVlLXNlY3JldC1xdWV1ZS0wMTI=');
      INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, rail_token, rail, masked_pan, succeeded_at)
        SELECT 'pi_s' || g, 'prod_q', false, 100, 1, 'UZS', 'SUCCEEDED', 'card_q', 'tr_q', 'uzcard', '860000******0007', now() FROM generate_series(1, ${SETTLED}) g;
      INSERT INTO refunds (id, product_id, livemode, payment_intent_id, amount, currency, status)
        SELECT 're_s' || g, 'prod_q', false, 'pi_s' || g, 100, 'UZS', 'SUCCEEDED' FROM generate_series(1, ${SETTLED}) g;
      INSERT INTO events (id, product_id, livemode, type, object_id, data)
        SELECT 'evt_s' || g, 'prod_q', false, 'payment_intent.succeeded', 'pi_s' || g, '{}' FROM generate_series(1, ${SETTLED}) g;
      INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempts)
        SELECT 'wd_s' || g, 'we_q', 'evt_s' || g, 'succeeded', 1 FROM generate_series(1, ${SETTLED}) g;
      INSERT INTO orders (id, product_id, livemode, amount, currency, status, checkout_token, expires_at, paid_at)
        SELECT 'ord_s' || g, 'prod_q', false, 100, 'UZS', 'PAID', 'cs_s' || g, now(), now() FROM generate_series(1, ${SETTLED}) g;
      INSERT INTO checkout_sessions (token, kind, product_id, livemode, order_id, status, expires_at)
        SELECT 'cs_s' || g, 'order', 'prod_q', false, 'ord_s' || g, 'COMPLETED', now() FROM generate_series(1, ${SETTLED}) g;`);
    await db.exec('VACUUM ANALYZE');
    await db.exec(`
      INSERT INTO payment_intents (id, product_id, livemode, amount, fee, currency, status, card_id, rail_token, rail, masked_pan, reconcile_after)
        SELECT 'pi_w' || g, 'prod_q', false, 100, 1, 'UZS', 'PROCESSING', 'card_q', 'tr_q', 'uzcard', '860000******0007', now() FROM generate_series(1, ${WAITING}) g;
      INSERT INTO refunds (id, product_id, livemode, payment_intent_id, amount, currency, status, reconcile_after)
        SELECT 're_w' || g, 'prod_q', false, 'pi_s' || (${SETTLED} - g), 100, 'UZS', 'PENDING', now() FROM generate_series(1, ${WAITING}) g
        ON CONFLICT DO NOTHING;
      INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, next_attempt_at)
        SELECT 'wd_w' || g, 'we_q', 'evt_s' || g, 'pending', now() FROM generate_series(1, ${WAITING}) g;
      INSERT INTO orders (id, product_id, livemode, amount, currency, status, checkout_token, expires_at)
        SELECT 'ord_w' || g, 'prod_q', false, 100, 'UZS', 'PENDING', 'cs_w' || g, now() - interval '1 second' FROM generate_series(1, ${WAITING}) g;
      INSERT INTO checkout_sessions (token, kind, product_id, livemode, order_id, status, expires_at)
        SELECT 'cs_w' || g, 'order', 'prod_q', false, 'ord_w' || g, 'PENDING', now() + interval '30 minutes' FROM generate_series(1, ${WAITING}) g;
      INSERT INTO card_bindings (id, product_id, livemode, checkout_token)
        SELECT 'cb_w' || g, 'prod_q', false, 'cs_b' || g FROM generate_series(1, ${WAITING}) g;
      INSERT INTO checkout_sessions (token, kind, product_id, livemode, binding_id, status, expires_at)
        SELECT 'cs_b' || g, 'card_binding', 'prod_q', false, 'cb_w' || g, 'PENDING', now() - interval '1 second' FROM generate_series(1, ${WAITING}) g;`);
  });
  afterAll(() => db.close());

  const plan = (sql: string, params: unknown[]) => explain(db, sql, params);

  it('finds a debit, a refund, a delivery, an order or a session by its key, never by scanning its queue', async () => {
    expect(await plan(`UPDATE payment_intents SET reconcile_after = NULL WHERE id = $1 AND status = 'PROCESSING'`, ['pi_w7'])).toContain(
      'payment_intents_pkey',
    );
    expect(await plan(`SELECT 1 FROM payment_intents WHERE order_id = $1 AND status = 'PROCESSING'`, ['ord_x'])).not.toContain('to_reconcile');
    expect(await plan(`UPDATE refunds SET reconcile_after = NULL WHERE id = $1 AND status = 'PENDING'`, ['re_w7'])).toContain('refunds_pkey');
    expect(await plan(`UPDATE webhook_deliveries SET locked_until = NULL WHERE id = $1 AND status = 'pending'`, ['wd_w7'])).toContain(
      'webhook_deliveries_pkey',
    );
    expect(await plan(`UPDATE orders SET status = 'CANCELED' WHERE id = $1 AND status = 'PENDING'`, ['ord_w7'])).toContain('orders_pkey');
    expect(
      await plan(`UPDATE checkout_sessions SET status = 'AWAITING_CODE' WHERE token = $1 AND status = 'PENDING' AND expires_at > now()`, ['cs_w7']),
    ).toContain('checkout_sessions_pkey');
  });

  it('still lets the workers take the oldest waiting rows from the queue indexes', async () => {
    expect(
      await plan(`SELECT id FROM payment_intents WHERE status = 'PROCESSING' AND reconcile_after <= now() ORDER BY reconcile_after LIMIT $1`, [10]),
    ).toContain('payment_intents_to_reconcile');
    expect(await plan(`SELECT id FROM refunds WHERE status = 'PENDING' AND reconcile_after <= now() ORDER BY reconcile_after LIMIT $1`, [10])).toContain(
      'refunds_to_reconcile',
    );
    expect(
      await plan(
        `SELECT id FROM webhook_deliveries WHERE status = 'pending' AND ((attempts > 0 AND next_attempt_at <= now()) OR (attempts = 0 AND next_attempt_at <= now()))
          ORDER BY next_attempt_at LIMIT $1`,
        [10],
      ),
    ).toContain('webhook_deliveries_due');
    expect(
      await plan(`SELECT id FROM orders WHERE status = 'PENDING' AND paid_at IS NULL AND expires_at <= now() ORDER BY expires_at LIMIT $1`, [10]),
    ).toContain('orders_pending_expiry');
    expect(
      await plan(
        `SELECT token FROM checkout_sessions WHERE kind = 'card_binding' AND status IN ('PENDING', 'AWAITING_CODE') AND expires_at <= now()
          ORDER BY expires_at LIMIT $1`,
        [10],
      ),
    ).toContain('checkout_sessions_open_expiry');
  });

  it('counts each queue for the monitoring gauges from a queue index, never from every payment or delivery', async () => {
    const counted = await plan(QUEUE_DEPTHS_SQL, []);
    expect(counted).toContain('payment_intents_to_reconcile');
    expect(counted).toContain('webhook_deliveries_due');
    expect(counted).not.toMatch(/Seq Scan on (payment_intents|webhook_deliveries)\b|payment_intents_by_status/);
  });
});
