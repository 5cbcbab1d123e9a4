// Input is read as written: what a lenient parser would turn into something else is refused, naming where it is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../src/http/server.js';
import { idem, startService, type Merchant, type TestService } from '../support/harness.js';

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
});
afterAll(() => service.stop());

const orderCount = async () => (await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders'))[0]!.n;
const createOrder = (payload: string, contentType = 'application/json') =>
  service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: idem(), payload, headers: { 'content-type': contentType } });

// Filled to the body limit. A regular expression over strings rescanned to the end from every quote of the first two
// (seconds of CPU each, every other request stalled); the others stress nesting, and numbers turned into text.
const fill = (head: string, unit: string, tail = '') => head + unit.repeat(Math.floor((BODY_LIMIT_BYTES - head.length - tail.length) / unit.length)) + tail;
const ATTACKS = {
  'escaped quotes, never closed': fill('"', '\\"'),
  'escaped quotes in a field': fill('{"description": "', '\\"'),
  'unclosed brackets': fill('', '['),
  'unclosed objects': fill('', '{"a":'),
  'closed brackets, deep': '['.repeat(BODY_LIMIT_BYTES / 2) + ']'.repeat(BODY_LIMIT_BYTES / 2),
  fractions: fill('[', '1.5,', '1]'),
};

/** Milliseconds GET /healthz takes, over a real connection. */
async function healthz(base: string): Promise<number> {
  const start = performance.now();
  expect((await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(20_000) })).status).toBe(200);
  return performance.now() - start;
}

/** A probe slower than this, in every round, means the server stalled on a body. */
const STALL_MS = 500;

/** Sends each body in turn while GET /healthz is timed again and again: a stall of the event loop shows as its latency. */
async function sendDuringProbes(base: string, bodies: Record<string, string>) {
  const answers: Record<string, unknown> = {};
  let sending = true;
  const sent = (async () => {
    for (const [name, body] of Object.entries(bodies)) {
      const reply = await fetch(`${base}/merchant/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${merchant.test}`, 'idempotency-key': idem(), 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(20_000),
      });
      answers[name] = { status: reply.status, code: ((await reply.json()) as { code: string }).code };
    }
  })().finally(() => (sending = false));
  let slowest = 0;
  let probes = 0;
  for (; sending; probes++) slowest = Math.max(slowest, await healthz(base));
  await sent;
  return { answers, slowest, probes };
}

describe('strict input', () => {
  it('takes an integer query parameter only in decimal digits', async () => {
    for (const limit of ['1e1', '0x10', '%2010', '10.0', '+10', '10%20', '']) {
      const reply = await service.call({ method: 'GET', url: `/merchant/v1/orders?limit=${limit}`, key: merchant.test });
      expect({ limit, status: reply.status, param: reply.body.param }).toEqual({ limit, status: 400, param: 'limit' });
    }
    expect((await service.call({ method: 'GET', url: '/merchant/v1/orders?limit=10', key: merchant.test })).status).toBe(200);
  });

  it('refuses a number written with a fraction or an exponent where a whole number goes, even one JSON would round whole', async () => {
    const before = await orderCount();
    for (const amount of ['999999999999.99999', '100.0', '1e3', '1E3', '-0.5']) {
      const reply = await createOrder(`{"amount": ${amount}}`);
      expect({ amount, status: reply.status, code: reply.body.code, param: reply.body.param }).toEqual({
        amount,
        status: 400,
        code: 'VALIDATION_ERROR',
        param: 'amount',
      });
    }
    expect(await orderCount()).toBe(before);
    // Digits inside strings are text, untouched.
    const fine = await createOrder('{"amount": 100, "description": "1.5e3 apricots"}');
    expect({ status: fine.status, description: fine.body.description }).toEqual({ status: 201, description: '1.5e3 apricots' });
  });

  it('refuses a body that repeats a key, naming it', async () => {
    const before = await orderCount();
    const top = await createOrder('{"amount": 100, "amount": 200}');
    expect({ status: top.status, param: top.body.param }).toEqual({ status: 400, param: 'amount' });
    const card = 'card_000000000000000000000000';
    const nested = await service.call({
      method: 'POST',
      url: '/subscribe/v1/charges',
      key: merchant.test,
      idempotencyKey: idem(),
      payload: `{"amount": 100, "card": "${card}", "metadata": {"a": "1", "b": {"a": 1}, "a": "2"}}`,
    });
    expect({ status: nested.status, param: nested.body.param }).toEqual({ status: 400, param: 'metadata.a' });
    // The same key in two objects is not a repeat.
    expect((await createOrder('{"amount": 100, "description": "amount"}')).status).toBe(201);
    expect(await orderCount()).toBe(before + 1);
  });

  it('reads JSON as UTF-8 only: another charset is refused 415', async () => {
    expect((await createOrder('{"amount": 100}', 'application/json; charset=utf-16')).status).toBe(415);
    expect((await createOrder('{"amount": 100}', 'application/json; charset=latin1')).body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect((await createOrder('{"amount": 100}', 'application/json; charset=UTF-8')).status).toBe(201);
    expect((await createOrder('{"amount": 100}', 'application/json;charset="utf-8"')).status).toBe(201);
  });

  it('reads any body in time linear in its size: a pathological 64 KB body is a 400 and other requests go on', async () => {
    const base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    await healthz(base);
    // Best of five rounds: the machine may be busy with other test files (a browser's, a thousand charges'), and the
    // first round runs the reader before it is compiled. A reader that rescans the body stalls every round for seconds;
    // a linear one keeps a probe within tens of milliseconds on a quiet machine, and under 500 on a loaded one.
    const rounds: Array<Awaited<ReturnType<typeof sendDuringProbes>>> = [];
    while (rounds.length < 5 && !rounds.some((round) => round.slowest < STALL_MS)) rounds.push(await sendDuringProbes(base, ATTACKS));
    for (const { answers, probes } of rounds) {
      expect(probes).toBeGreaterThan(0);
      for (const name of Object.keys(ATTACKS)) expect({ name, answer: answers[name] }).toEqual({ name, answer: { status: 400, code: 'VALIDATION_ERROR' } });
    }
    expect(Math.min(...rounds.map((round) => round.slowest))).toBeLessThan(STALL_MS);
  }, 90_000);
});

