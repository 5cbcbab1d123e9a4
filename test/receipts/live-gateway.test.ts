// The fiscal gateway's rules: its protocol at the simulator (idempotent by id, deadline, fence, refusals), and what
// Tolov makes of a gateway it cannot reach or that answers too late once the schedule (two attempts here) is spent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { REFUSED_TEST_CODE } from '../../src/rails/test-fiscal.js';
import { idem } from '../support/harness.js';
import { eventsOf } from '../support/payments.js';
import { receiptFor } from '../support/receipts.js';
import { bindLiveCard, fiscalizeNow, fiscalizeUntilSettled, gateway, setFaults, simReceipts, startLive, type Live } from '../support/live.js';

/** Tolov waits 200 ms an attempt of a call (3 attempts, about 1.7 s in all); the slow gateway below takes 2.5 s. */
const RAIL_TIMEOUT_MS = 200;
const SLOW_REGISTRATION_MS = 2_500;

let live: Live;
let card: string;
beforeAll(async () => {
  live = await startLive({ TOLOV_LIVE_RAIL_TIMEOUT_MS: String(RAIL_TIMEOUT_MS), TOLOV_WEBHOOK_RETRY_SCHEDULE: '0,1' }, { receiptRequired: true });
  card = await bindLiveCard(live, '8600000000000007');
});
afterAll(() => live.stop());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const inAMinute = () => new Date(Date.now() + 60_000).toISOString();
const get = (url: string) => live.service.call({ method: 'GET', url, key: live.merchant.live });
const registrationsOf = async (id: string) => (await simReceipts(live.sim)).filter((receipt) => receipt.id === id);

async function paidReceipt(amount: number): Promise<{ paymentIntent: string; receipt: string }> {
  const paid = await live.service.call({
    method: 'POST',
    url: '/subscribe/v1/charges',
    key: live.merchant.live,
    idempotencyKey: idem(),
    body: { amount, card, receipt: receiptFor(amount) },
  });
  expect(paid.body.status, paid.text).toBe('SUCCEEDED');
  return { paymentIntent: paid.body.id, receipt: paid.body.receipt };
}

/** A registration as Tolov sends it. */
const registration = (id: string, code = '10399001001000000', deadline = inAMinute()) => ({
  id,
  type: 'sale',
  amount: 10_000,
  vatAmount: 1_071,
  lines: [{ title: 'Choynak', price: 10_000, count: 1, code, packageCode: '1505709', vatPercent: 12, discount: 0, commissionTin: null }],
  deadline,
});

describe('retries spent while the fiscal gateway cannot be reached', () => {
  it.each([
    ['answering 5xx', () => setFaults(live.sim, { errorRate: 1 }), () => setFaults(live.sim, {})],
    ['not listening', () => live.stopSim(), () => live.startSim()],
  ])('%s through the attempts and the fences: the receipt is FAILED FISCAL_UNSETTLED (the module may hold it), the payment untouched', async (_label, down, up) => {
    const { paymentIntent, receipt } = await paidReceipt(31_000);
    await down();
    try {
      expect(await fiscalizeNow(live.service)).toBe(1);
      expect((await get(`/v1/receipts/${receipt}`)).body.status).toBe('PENDING');
      await fiscalizeUntilSettled(live.service, [receipt]);
    } finally {
      await up();
    }
    const failed = (await get(`/v1/receipts/${receipt}`)).body;
    expect(failed).toMatchObject({ status: 'FAILED', failureCode: 'FISCAL_UNSETTLED', terminalId: null, qrUrl: null });
    expect((await eventsOf(live.service, receipt)).map((event) => event.type)).toEqual(['receipt.failed']);
    expect((await get(`/subscribe/v1/charges/${paymentIntent}`)).body.status).toBe('SUCCEEDED');
    expect(await registrationsOf(receipt)).toEqual([]);
    expect(await fiscalizeNow(live.service)).toBe(0);
  });

  it('answering again for the fence after the attempts are spent: the id is fenced and the receipt FAILED FISCAL_UNAVAILABLE', async () => {
    const { receipt } = await paidReceipt(32_000);
    await setFaults(live.sim, { errorRate: 1 });
    try {
      // The schedule has two attempts: both unclear, the last one's fence unanswered.
      expect(await fiscalizeNow(live.service)).toBe(1);
      expect(await fiscalizeNow(live.service)).toBe(1);
      expect((await get(`/v1/receipts/${receipt}`)).body.status).toBe('PENDING');
    } finally {
      await setFaults(live.sim, {});
    }
    expect(await fiscalizeNow(live.service)).toBe(1);
    expect((await get(`/v1/receipts/${receipt}`)).body).toMatchObject({ status: 'FAILED', failureCode: 'FISCAL_UNAVAILABLE' });
    expect(await registrationsOf(receipt)).toEqual([]);
    // Fenced: a registration of it arriving now registers nothing.
    expect((await eventsOf(live.service, receipt)).map((event) => event.type)).toEqual(['receipt.failed']);
  });
});

describe('a fiscal gateway slower than the deadline', () => {
  it('registers none of the late calls: the last attempt fences the id and fails the receipt', async () => {
    const { receipt } = await paidReceipt(32_000);
    await setFaults(live.sim, { moneyLatencyMs: SLOW_REGISTRATION_MS });
    try {
      expect(await fiscalizeNow(live.service)).toBe(1);
      expect((await get(`/v1/receipts/${receipt}`)).body.status).toBe('PENDING');
      // The second and last scheduled attempt: status (not found), a registration too slow again, then the fence.
      expect(await fiscalizeNow(live.service)).toBe(1);
      expect((await get(`/v1/receipts/${receipt}`)).body).toMatchObject({ status: 'FAILED', failureCode: 'FISCAL_UNAVAILABLE' });
      expect(await gateway(live.sim, '/v1/receipts/status', { id: receipt })).toEqual({ result: 'refused', code: 'FENCED' });
      // Every call still sleeping at the gateway wakes past its deadline, or to its fence.
      await sleep(SLOW_REGISTRATION_MS + 500);
      expect(await registrationsOf(receipt)).toEqual([]);
    } finally {
      await setFaults(live.sim, {});
    }
  });
});

describe('the fiscal protocol at the simulator', () => {
  it('registers an id once: a repeat answers the first registration, as status and fence do', async () => {
    const id = newId('rcpt');
    const first = await gateway(live.sim, '/v1/receipts/register', registration(id));
    expect(first).toEqual({
      result: 'ok',
      status: 'REGISTERED',
      terminalId: expect.stringMatching(/^UZ\d+$/),
      receiptNumber: expect.stringMatching(/^\d+$/),
      fiscalSign: expect.stringMatching(/^\d{12}$/),
      registeredAt: expect.any(String),
    });
    expect(await gateway(live.sim, '/v1/receipts/register', { ...registration(id), amount: 99 })).toEqual(first);
    expect(await gateway(live.sim, '/v1/receipts/status', { id })).toEqual(first);
    expect(await gateway(live.sim, '/v1/receipts/fence', { id })).toEqual(first);
    expect(await registrationsOf(id)).toEqual([
      { id, type: 'sale', amount: 10_000, terminalId: first.terminalId, receiptNumber: first.receiptNumber, fiscalSign: first.fiscalSign, registeredAt: first.registeredAt },
    ]);
  });

  it('refuses a registration past its deadline, or without one, registering nothing', async () => {
    const late = newId('rcpt');
    const passed = new Date(Date.now() - 1_000).toISOString();
    expect(await gateway(live.sim, '/v1/receipts/register', registration(late, undefined, passed))).toEqual({ result: 'refused', code: 'DEADLINE_PASSED' });
    expect(await gateway(live.sim, '/v1/receipts/status', { id: late })).toEqual({ result: 'not_found' });
    const { deadline: _none, ...undated } = registration(newId('rcpt'));
    expect(await gateway(live.sim, '/v1/receipts/register', undated)).toEqual({ result: 'refused', code: 'BAD_REQUEST' });
    expect(await registrationsOf(late)).toEqual([]);
  });

  it('never registers a call still sleeping at the gateway once its id is fenced', async () => {
    await setFaults(live.sim, { moneyLatencyMs: 800 });
    try {
      const id = newId('rcpt');
      const sleeping = gateway(live.sim, '/v1/receipts/register', registration(id));
      await sleep(200);
      expect(await gateway(live.sim, '/v1/receipts/fence', { id })).toEqual({ result: 'fenced' });
      expect(await sleeping).toEqual({ result: 'refused', code: 'FENCED' });
      expect(await gateway(live.sim, '/v1/receipts/status', { id })).toEqual({ result: 'refused', code: 'FENCED' });
      expect(await gateway(live.sim, '/v1/receipts/fence', { id })).toEqual({ result: 'fenced' });
      expect(await registrationsOf(id)).toEqual([]);
    } finally {
      await setFaults(live.sim, {});
    }
  });

  it('refuses the code of seventeen zeros for good (INVALID_CODE), and never lists it', async () => {
    const id = newId('rcpt');
    const refused = { result: 'refused', code: 'INVALID_CODE' };
    expect(await gateway(live.sim, '/v1/receipts/register', registration(id, REFUSED_TEST_CODE))).toEqual(refused);
    expect(await gateway(live.sim, '/v1/receipts/register', registration(id))).toEqual(refused);
    expect(await gateway(live.sim, '/v1/receipts/status', { id })).toEqual(refused);
    expect(await gateway(live.sim, '/v1/receipts/fence', { id })).toEqual(refused);
    expect(await registrationsOf(id)).toEqual([]);
  });

  it('lists the registrations of a period oldest first, within its limit, and answers only signed calls', async () => {
    const ids = [newId('rcpt'), newId('rcpt')];
    for (const id of ids) await gateway(live.sim, '/v1/receipts/register', registration(id));
    const period = { from: new Date(Date.now() - 3_600_000).toISOString(), to: inAMinute() };
    const listed = (await gateway(live.sim, '/v1/receipts/list', { ...period, limit: 10_000 })) as { result: string; receipts: Array<{ id: string }> };
    expect(listed.result).toBe('ok');
    const order = listed.receipts.map((receipt) => receipt.id).filter((id) => ids.includes(id));
    expect(order).toEqual(ids);
    expect(await gateway(live.sim, '/v1/receipts/list', { ...period, limit: 10_001 })).toEqual({ result: 'refused', code: 'BAD_REQUEST' });
    const unsigned = await fetch(`${live.sim.url}/v1/receipts/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(registration(newId('rcpt'))) });
    expect(unsigned.status).toBe(401);
  });
});
