import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { TEST_SMS_CODE, TestRail } from '../../src/rails/test-rail.js';
import type { Rail } from '../../src/rails/rail.js';
import { startService, type TestService } from '../support/harness.js';

let service: TestService;
let rail: Rail;
beforeAll(async () => {
  service = await startService();
  rail = new TestRail(service.db);
});
afterAll(() => service.stop());

const card = (pan: string) => ({ pan, expiry: { month: 12, year: 2030 }, phone: '998901234567' });

async function tokenFor(pan: string): Promise<string> {
  const result = await rail.tokenize(card(pan));
  if (!result.ok) throw new Error(`${pan} refused`);
  return result.token;
}

describe('the test rail (the test cards of docs/testing.md)', () => {
  it.each([
    ['8600000000000007', { status: 'SUCCEEDED' }, { status: 'SUCCEEDED' }],
    ['9860000000000000', { status: 'SUCCEEDED' }, { status: 'SUCCEEDED' }],
    ['8600000000000015', { status: 'FAILED', failureCode: 'INSUFFICIENT_FUNDS' }, { status: 'FAILED', failureCode: 'INSUFFICIENT_FUNDS' }],
    ['8600000000000031', { status: 'UNKNOWN' }, { status: 'SUCCEEDED' }],
    ['8600000000000049', { status: 'UNKNOWN' }, { status: 'FAILED', failureCode: 'PROCESSING_ERROR' }],
    ['8600000000000056', { status: 'FAILED', failureCode: 'CARD_BLOCKED' }, { status: 'FAILED', failureCode: 'CARD_BLOCKED' }],
    ['8600000000000064', { status: 'SUCCEEDED' }, { status: 'SUCCEEDED' }],
    ['8600123456789012', { status: 'SUCCEEDED' }, { status: 'SUCCEEDED' }],
  ])('debits %s: answers %j, and its own record says %j', async (pan, answer, truth) => {
    const token = await tokenFor(pan);
    const operationId = newId('pi');
    expect(await rail.debit({ operationId, token, amount: 10_000 })).toEqual(answer);
    expect(await rail.fence(operationId)).toEqual(truth);
    // A fresh rail over the same database (a restart) tells the same truth.
    expect(await new TestRail(service.db).fence(operationId)).toEqual(truth);
  });

  it('refuses the inactive card at tokenization', async () => {
    expect(await rail.tokenize(card('8600000000000023'))).toEqual({ ok: false, refusal: 'CARD_INACTIVE' });
  });

  it('tells the network from the BIN', async () => {
    expect(await rail.tokenize(card('9860000000000000'))).toMatchObject({ ok: true, network: 'humo' });
    expect(await rail.tokenize(card('8600000000000007'))).toMatchObject({ ok: true, network: 'uzcard' });
  });

  it('accepts exactly the code 111111', async () => {
    const token = await tokenFor('8600000000000007');
    expect(await rail.verifyCode(token, TEST_SMS_CODE)).toBe(true);
    expect(await rail.verifyCode(token, '111112')).toBe(false);
  });

  it('executes an operation id at most once: a repeat gets the first answer and moves nothing', async () => {
    const token = await tokenFor('8600000000000007');
    const operationId = newId('pi');
    await rail.debit({ operationId, token, amount: 500 });
    expect(await rail.debit({ operationId, token, amount: 500 })).toEqual({ status: 'SUCCEEDED' });
    const rows = await service.db.query('SELECT * FROM test_rail_operations WHERE operation_id = $1', [operationId]);
    expect(rows).toHaveLength(1);
  });

  it('records concurrent operations together, each once: repeats in the same batch and after it get the first record', async () => {
    const succeeds = await tokenFor('8600000000000007');
    const refuses = await tokenFor('8600000000000015');
    const ids = Array.from({ length: 40 }, () => newId('pi'));
    // Every operation twice at once, so repeats land in the same write as their first call; then once more.
    const calls = [...ids, ...ids].map((operationId, index) =>
      rail.debit({ operationId, token: index % ids.length < 20 ? succeeds : refuses, amount: 700 }),
    );
    const answers = await Promise.all(calls);
    const expected = ids.map((_, index) =>
      index < 20 ? { status: 'SUCCEEDED' } : { status: 'FAILED', failureCode: 'INSUFFICIENT_FUNDS' },
    );
    expect(answers).toEqual([...expected, ...expected]);
    expect(await Promise.all(ids.map((operationId) => rail.debit({ operationId, token: succeeds, amount: 700 })))).toEqual(expected);
    const rows = await service.db.query<{ operation_id: string; status: string }>(
      'SELECT operation_id, status FROM test_rail_operations WHERE operation_id = ANY($1::text[]) ORDER BY operation_id',
      [ids],
    );
    expect(rows).toHaveLength(40);
    expect(rows.filter((row) => row.status === 'SUCCEEDED')).toHaveLength(20);
  });

  it('refunds: succeeded, or unclear and then succeeded for 8600000000000064', async () => {
    for (const [pan, answer] of [
      ['8600000000000007', { status: 'SUCCEEDED' }],
      ['8600000000000031', { status: 'SUCCEEDED' }],
      ['8600000000000064', { status: 'UNKNOWN' }],
    ] as const) {
      const token = await tokenFor(pan);
      const debitOperationId = newId('pi');
      await rail.debit({ operationId: debitOperationId, token, amount: 900 });
      const operationId = newId('re');
      expect(await rail.refund({ operationId, debitOperationId, token, amount: 900 })).toEqual(answer);
      expect(await rail.fence(operationId)).toEqual({ status: 'SUCCEEDED' });
    }
  });

  it('fences an operation it never executed', async () => {
    expect(await rail.fence('pi_never')).toEqual({ status: 'FENCED' });
  });

  it('fences an operation before it was recorded: a late debit of it moves nothing and answers failed', async () => {
    const token = await tokenFor('8600000000000007');
    const operationId = newId('pi');
    const asked = new Date();
    expect(await rail.fence(operationId)).toEqual({ status: 'FENCED' });
    // The debit's write arrives after reconciliation fenced it as never executed.
    expect(await rail.debit({ operationId, token, amount: 800 })).toEqual({ status: 'FAILED', failureCode: 'PROCESSING_ERROR' });
    expect(await rail.fence(operationId)).toEqual({ status: 'FENCED' });
    expect(await new TestRail(service.db).fence(operationId)).toEqual({ status: 'FENCED' });
    const books = await rail.operations({ from: new Date(asked.getTime() - 60_000), to: new Date(Date.now() + 60_000), after: null, limit: 1_000 });
    expect(books.map((operation) => operation.operationId)).not.toContain(operationId);
    // An operation recorded before the fence is not fenced: it answers what it was.
    const recorded = newId('pi');
    await rail.debit({ operationId: recorded, token, amount: 800 });
    expect(await rail.fence(recorded)).toEqual({ status: 'SUCCEEDED' });
  });

  it('keeps no card number in its books', async () => {
    await tokenFor('8600000000000007');
    const books = JSON.stringify([
      await service.db.query('SELECT * FROM test_rail_cards'),
      await service.db.query('SELECT * FROM test_rail_operations'),
    ]);
    expect(books).not.toMatch(/8600000000000007|998901234567/);
  });
});
