import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { startService, type Merchant, type TestService } from '../support/harness.js';
import { charge } from '../support/payments.js';

let service: TestService;
let merchant: Merchant;

describe('where the time of requests goes, for the operator', () => {
  beforeAll(async () => {
    service = await startService();
    merchant = await service.createMerchant();
  });
  afterAll(() => service?.stop());

  const read = async () => (await service.admin('GET', '/admin/v1/timings')).body;
  const named = (report: { series: { name: string; count: number }[] }) => new Map(report.series.map((series) => [series.name, series.count]));

  it("times each phase of a charge, its rail call, and the test rail's group writes, and starts afresh on reset", async () => {
    const card = await bindCard(service, merchant.test, '8600000000000007');
    expect((await service.admin('POST', '/admin/v1/timings/reset')).body.series).toEqual([]);
    for (let i = 0; i < 3; i++) expect((await charge(service, merchant.test, { amount: 100_000, card })).status).toBe(201);

    const report = await read();
    expect(report).toMatchObject({ object: 'timings', eventLoopDelay: { p50Ms: expect.any(Number), p99Ms: expect.any(Number) } });
    const route = 'POST /subscribe/v1/charges';
    expect(Object.fromEntries(named(report))).toEqual({
      [`${route} · started: write`]: 3,
      [`${route} · debit: call`]: 3,
      [`${route} · debit: record`]: 3,
      [`${route} · all phases`]: 3,
      'test rail operations: waiting for the group before': 3,
      'test rail operations: group write (execute and commit)': 3,
    });
    for (const series of report.series) expect(series.p50Ms, series.name).toBeLessThanOrEqual(series.p99Ms);
    // A whole charge takes at least as long as its phases together (within the histogram's 5%).
    const mean = (name: string) => report.series.find((series: { name: string }) => series.name === name).meanMs as number;
    const phases = mean(`${route} · started: write`) + mean(`${route} · debit: call`) + mean(`${route} · debit: record`);
    expect(mean(`${route} · all phases`)).toBeGreaterThanOrEqual(phases * 0.95);

    const reset = await service.admin('POST', '/admin/v1/timings/reset');
    expect(reset.body.series).toEqual([]);
    expect(Date.parse(reset.body.since)).toBeGreaterThan(Date.parse(report.since));
  });

  it('is the operator’s alone', async () => {
    expect((await service.call({ method: 'GET', url: '/admin/v1/timings', key: merchant.test })).status).toBe(401);
    expect((await service.call({ method: 'POST', url: '/admin/v1/timings/reset' })).status).toBe(401);
  });
});
