// What production's tools ask a process: /readyz (200 only while it can serve, 503 naming what fails) and /metrics in
// Prometheus's text format behind TOLOV_METRICS_TOKEN, its labels bounded (route templates; no product, key or card);
// the outcome counts, and the series the documented alerts name, in metrics-outcomes.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/harness.js';
import { bindCard } from '../support/binding.js';
import { charge } from '../support/payments.js';
import { killAll, processStorage, startMain } from '../support/process.js';
import { samples } from '../support/prometheus.js';
import { waitFor } from '../support/wait.js';

const METRICS_TOKEN = 'mtk_3f9Qz7LwP2xVb8NcR4tYk6Hs1Jd5Ge0U';

describe('/metrics', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ TOLOV_METRICS_TOKEN: METRICS_TOKEN });
  });
  afterAll(() => service.stop());
  const scrape = (key?: string) => service.call({ method: 'GET', url: '/metrics', ...(key === undefined ? {} : { headers: { authorization: `Bearer ${key}` } }) });

  it('answers only to the metrics token, with the error shape otherwise', async () => {
    for (const reply of [await scrape(), await scrape('mtk_wrong_token_of_the_same_length_xx')]) {
      expect(reply.status).toBe(401);
      expect(reply.body).toMatchObject({ code: 'UNAUTHENTICATED', statusCode: 401 });
      expect(reply.headers['www-authenticate']).toBe('Bearer realm="tolov-metrics"');
    }
  });

  it('counts requests by route template and status while charges run, with queues, pool and event loop, and no ids in labels', async () => {
    const shop = await service.createMerchant();
    const card = await bindCard(service, shop.test, '8600000000000031');
    const load = Promise.all(Array.from({ length: 20 }, () => charge(service, shop.test, { amount: 100_000, card })));
    const during = await scrape(METRICS_TOKEN);
    await load;
    expect(during.status).toBe(200);
    expect(samples(during.text).length).toBeGreaterThan(0);
    await service.call({ method: 'GET', url: `/subscribe/v1/charges/pi_${'x'.repeat(24)}`, key: shop.test });
    const after = await scrape(METRICS_TOKEN);
    expect(after.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const all = samples(after.text);
    const of = (name: string) => all.filter((sample) => sample.name === name);
    const charges = of('tolov_http_requests_total').find((s) => s.labels.route === '/subscribe/v1/charges' && s.labels.method === 'POST');
    expect(charges).toMatchObject({ labels: { status: '201' }, value: 20 });
    expect(of('tolov_http_requests_total').find((s) => s.labels.route === '/subscribe/v1/charges/:id')?.labels.status).toBe('404');
    expect(of('tolov_http_request_duration_seconds_count').some((s) => s.labels.route === '/subscribe/v1/charges')).toBe(true);
    // The charges of card …0031 wait PROCESSING for reconciliation.
    expect(of('tolov_queue_depth').find((s) => s.labels.queue === 'payments_processing')?.value).toBe(20);
    expect(of('tolov_queue_depth').map((s) => s.labels.queue).sort()).toEqual(['payments_processing', 'payouts_in_transit', 'payouts_pending', 'receipts_pending', 'webhook_deliveries_due']);
    expect(of('nodejs_eventloop_lag_seconds')).toHaveLength(1);
    if (service.db.engine === 'postgres') expect(of('tolov_db_pool_connections').map((s) => s.labels.state).sort()).toEqual(['idle', 'max', 'total', 'waiting']);
    for (const sample of all) {
      for (const value of Object.values(sample.labels)) expect(value, sample.name).not.toMatch(/(^|[^a-z])(prod|pi|card|sk_test|sk_live|cb|ord)_[0-9A-Za-z]{20,}/);
    }
  });
});

describe('/metrics unset', () => {
  it('does not exist without TOLOV_METRICS_TOKEN', async () => {
    const service = await startService();
    try {
      expect((await service.call({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(404);
    } finally {
      await service.stop();
    }
  });
});

describe('/readyz', () => {
  afterAll(() => killAll());

  it('names what keeps a process from serving: its workers not started, its database behind the code', async () => {
    const service = await startService();
    try {
      // This process was never started: it serves requests but runs no workers.
      expect((await service.call({ method: 'GET', url: '/readyz' })).body).toEqual({ status: 'unready', failing: ['workers'] });
      await service.db.query('DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)');
      const behind = await service.call({ method: 'GET', url: '/readyz' });
      expect(behind.status).toBe(503);
      expect(behind.body).toEqual({ status: 'unready', failing: ['workers', 'migrations'] });
    } finally {
      await service.stop();
    }
  });

  it('is ready once a started process runs its workers; /healthz alive all along', async () => {
    const started = await startMain(await processStorage());
    const ready = await fetch(`${started.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    expect((await fetch(`${started.url}/healthz`)).status).toBe(200);
  });

  it('fails from the moment a graceful stop begins, while the process still serves for TOLOV_SHUTDOWN_DRAIN_MS', async () => {
    const started = await startMain({ ...(await processStorage()), TOLOV_SHUTDOWN_DRAIN_MS: '3000' });
    expect((await fetch(`${started.url}/readyz`)).status).toBe(200);
    started.child.kill('SIGTERM');
    await waitFor(async () => ((await fetch(`${started.url}/readyz`)).status === 503 ? true : null), 2_000, 'readiness to fail');
    const draining = await fetch(`${started.url}/readyz`);
    expect(await draining.json()).toEqual({ status: 'unready', failing: ['stopping'] });
    // Still serving while the balancer notices.
    expect((await fetch(`${started.url}/healthz`)).status).toBe(200);
    expect(await started.exited).toBe(0);
  });
});
