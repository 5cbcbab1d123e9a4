import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Merchant as AuthMerchant } from '../../src/core/merchant.js';
import { ApiError } from '../../src/core/errors.js';
import { foreignCall, runIdempotent, type Steps } from '../../src/core/idempotency.js';
import type { Db } from '../../src/db/types.js';
import { idempotencyCleanup } from '../../src/workers/idempotency-cleanup.js';
import { engine, idem, startService, type Merchant, type TestService } from '../support/harness.js';
import { receiptFor } from '../support/receipts.js';

let service: TestService;
let merchant: Merchant;
beforeAll(async () => {
  service = await startService();
  merchant = await service.createMerchant();
});
afterAll(() => service.stop());

const createOrder = (key: string, idempotencyKey: string | undefined, body: unknown = { amount: 10_000, description: 'Plov' }) =>
  service.call({ method: 'POST', url: '/merchant/v1/orders', key, idempotencyKey, body });

const countOrders = async (productId: string) =>
  (await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE product_id = $1', [productId]))[0]!.n;

describe('Idempotency-Key on order creation', () => {
  it('replays the first response byte for byte, marked Idempotent-Replayed', async () => {
    const key = idem();
    const first = await createOrder(merchant.test, key);
    const second = await createOrder(merchant.test, key);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.text).toBe(first.text);
    expect(second.headers['request-id']).not.toBe(first.headers['request-id']);
  });

  it('treats the same JSON with other key order or spacing as the same request', async () => {
    const key = idem();
    const first = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: key, payload: '{"amount":7,"description":"a"}' });
    const second = await service.call({ method: 'POST', url: '/merchant/v1/orders', key: merchant.test, idempotencyKey: key, payload: '{ "description": "a", "amount": 7 }' });
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body.id).toBe(first.body.id);
  });

  it('answers a reuse with another body with 422 IDEMPOTENCY_KEY_REUSED and creates nothing', async () => {
    const key = idem();
    await createOrder(merchant.test, key, { amount: 100 });
    const before = await countOrders(merchant.productId);
    const reuse = await createOrder(merchant.test, key, { amount: 101 });
    expect(reuse.status).toBe(422);
    expect(reuse.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await countOrders(merchant.productId)).toBe(before);
  });

  it('scopes keys by product and by mode', async () => {
    const other = await service.createMerchant();
    const key = idem();
    const test = await createOrder(merchant.test, key);
    const live = await createOrder(merchant.live, key, { amount: 10_000, description: 'Plov', receipt: receiptFor(10_000) });
    const foreign = await createOrder(other.test, key);
    for (const reply of [test, live, foreign]) {
      expect(reply.status).toBe(201);
      expect(reply.headers['idempotent-replayed']).toBeUndefined();
    }
    expect(new Set([test.body.id, live.body.id, foreign.body.id]).size).toBe(3);
  });

  it("replays a stored answer only to the API key that made it: another key of the product never gets its secret", async () => {
    const second = (await service.admin('POST', `/admin/v1/products/${merchant.productId}/keys`, { mode: 'test' })).body.secret as string;
    const key = idem();
    const endpoint = { url: 'https://hooks.example.com/tolov' };
    const created = await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: merchant.test, idempotencyKey: key, body: endpoint });
    expect(created.body.secret).toMatch(/^whsec_/);
    const other = await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: second, idempotencyKey: key, body: endpoint });
    expect({ status: other.status, code: other.body.code }).toEqual({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(other.text).not.toContain('whsec_');
    const again = await service.call({ method: 'POST', url: '/v1/webhook_endpoints', key: merchant.test, idempotencyKey: key, body: endpoint });
    expect({ status: again.status, text: again.text, replayed: again.headers['idempotent-replayed'] }).toEqual({
      status: 201,
      text: created.text,
      replayed: 'true',
    });
    // The same holds for an order's key.
    const order = await createOrder(merchant.test, key + '-order');
    expect(order.status).toBe(201);
    expect((await createOrder(second, key + '-order')).status).toBe(422);
  });

  it('requires the key on order creation', async () => {
    const before = await countOrders(merchant.productId);
    const reply = await createOrder(merchant.test, undefined);
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('IDEMPOTENCY_KEY_REQUIRED');
    expect(await countOrders(merchant.productId)).toBe(before);
  });

  it.each([
    ['empty', ''],
    ['over 255 characters', 'k'.repeat(256)],
    ['not printable ASCII', 'ключ'],
    ['a control character', 'a\tb'],
  ])('refuses a key that is %s with 400 naming Idempotency-Key', async (_, key) => {
    const reply = await service.call({
      method: 'POST',
      url: '/merchant/v1/orders',
      key: merchant.test,
      body: { amount: 1 },
      headers: { 'idempotency-key': key },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('VALIDATION_ERROR');
    expect(reply.body.param).toBe('Idempotency-Key');
  });

  it('accepts a key of exactly 255 characters', async () => {
    expect((await createOrder(merchant.test, 'k'.repeat(255))).status).toBe(201);
  });

  it('stores nothing for a request refused by validation: the key stays free', async () => {
    const key = idem();
    expect((await createOrder(merchant.test, key, { amount: -1 })).status).toBe(400);
    const valid = await createOrder(merchant.test, key, { amount: 1 });
    expect(valid.status).toBe(201);
    expect(valid.headers['idempotent-replayed']).toBeUndefined();
  });

  it('creates exactly one order for 8 concurrent requests with one key', async () => {
    const shop = await service.createMerchant();
    const key = idem();
    const replies = await Promise.all(Array.from({ length: 8 }, () => createOrder(shop.test, key)));
    const created = replies.filter((reply) => reply.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(replies.filter((reply) => reply.status !== 201 && reply.body.code !== 'IDEMPOTENCY_KEY_IN_USE').map((reply) => reply.text)).toEqual([]);
    expect(new Set(created.map((reply) => reply.body.id)).size).toBe(1);
    expect(created.filter((reply) => reply.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(await countOrders(shop.productId)).toBe(1);
  });
});

describe('atomic phases and recovery points', () => {
  const calls: string[] = [];
  let failAt: string | null = null;
  const phases: Steps = {
    started: async (tx) => {
      calls.push('started');
      await tx.query('SELECT 1');
      if (failAt === 'started') throw new Error('injected failure in started');
      return { next: 'charged', resourceId: 'pi_resource' };
    },
    charged: async (_tx, resourceId) => {
      calls.push(`charged:${resourceId}`);
      if (failAt === 'charged') throw new Error('injected failure in charged');
      if (failAt === 'refused') throw new ApiError('CARD_INACTIVE', 'refused');
      return { response: { status: 200, body: { id: resourceId, done: true } } };
    },
  };
  let scope: AuthMerchant;
  beforeAll(() => {
    scope = { actor: { kind: 'api_key', keyId: 'key_x' }, productId: merchant.productId, productName: 'Test shop', livemode: false, scopes: [], feeBps: 100, receiptRequired: true, suspended: false };
  });
  const run = (key: string, body: unknown = { amount: 1 }, path = '/v1/things') =>
    runIdempotent(service.db, scope, key, { id: 'req_first', method: 'POST', path, body }, phases);
  const keyRow = async (key: string) =>
    (
      await service.db.query<{ recovery_point: string; locked_at: Date | null; response_status: number | null; resource_id: string | null }>(
        'SELECT recovery_point, locked_at, response_status, resource_id FROM idempotency_keys WHERE product_id = $1 AND key = $2',
        [merchant.productId, key],
      )
    )[0];

  /** A key row of its own that a phase writes, to see whether the phase's writes commit. */
  const mark = `INSERT INTO idempotency_keys (product_id, livemode, key, request_method, request_path, request_hash, recovery_point) VALUES ($1, false, $2, 'POST', '/mark', '\\x00', 'finished')`;

  it('runs every phase once, in order, and stores the final response', async () => {
    calls.length = 0;
    failAt = null;
    const key = idem();
    const sent = await run(key);
    expect(sent).toEqual({ status: 200, body: '{"id":"pi_resource","done":true}', replayed: false });
    expect(calls).toEqual(['started', 'charged:pi_resource']);
    expect(await keyRow(key)).toMatchObject({ recovery_point: 'finished', locked_at: null, response_status: 200 });
    calls.length = 0;
    expect(await run(key)).toEqual({ ...sent, replayed: true });
    // Its first phase runs again and rolls back once the key is found; nothing after it runs.
    expect(calls).toEqual(['started']);
  });

  it('claims a new key in its first phase\'s transaction: no statement of its own, and one transaction per phase', async () => {
    const key = idem();
    failAt = null;
    const seen = { transactions: 0, outside: 0 };
    const db = service.db;
    const counting: Db = {
      ...db,
      query: (sql, params) => {
        seen.outside += 1;
        return db.query(sql, params);
      },
      transaction: (work) => {
        seen.transactions += 1;
        return db.transaction(work);
      },
    };
    const sent = await runIdempotent(counting, scope, key, { id: 'req_counted', method: 'POST', path: '/v1/things', body: { amount: 1 } }, phases);
    expect(sent.status).toBe(200);
    expect(seen).toEqual({ transactions: 2, outside: 0 });
    expect(await keyRow(key)).toMatchObject({ recovery_point: 'finished', response_status: 200 });
  });

  it('stores a refusal of the first phase under a new key, and replays it', async () => {
    const key = idem();
    calls.length = 0;
    const refusing: Steps = {
      started: async (tx) => {
        calls.push('started');
        await tx.query(mark, [merchant.productId, `${key}-mark`]);
        throw new ApiError('CARD_INACTIVE', 'refused at once');
      },
    };
    const request = { id: 'req_refused', method: 'POST', path: '/v1/things', body: { amount: 1 } };
    const refused = await runIdempotent(service.db, scope, key, request, refusing);
    expect(refused).toMatchObject({ status: 400, replayed: false });
    expect(await keyRow(key)).toMatchObject({ recovery_point: 'finished', locked_at: null, response_status: 400 });
    expect(await keyRow(`${key}-mark`)).toBeUndefined();
    // The retry's own first phase is refused again, and its mark rolls back: the stored refusal answers.
    expect(await runIdempotent(service.db, scope, key, request, refusing)).toEqual({ ...refused, replayed: true });
    expect(calls).toEqual(['started', 'started']);
    expect(await keyRow(`${key}-mark`)).toBeUndefined();
  });

  it('gives a retry the first answer whatever its own first phase does now: what that phase wrote rolls back', async () => {
    const key = idem();
    failAt = null;
    const first = await run(key);
    const again = (outcome: () => never | void): Steps => ({
      started: async (tx) => {
        await tx.query(mark, [merchant.productId, `${key}-mark`]);
        outcome();
        return { response: { status: 201, body: { other: true } } };
      },
    });
    const retry = (steps: Steps) => runIdempotent(service.db, scope, key, { id: 'req_retry', method: 'POST', path: '/v1/things', body: { amount: 1 } }, steps);
    // It succeeds again, is refused against what the first request changed, fails, or finds the body invalid now.
    expect(await retry(again(() => {}))).toEqual({ ...first, replayed: true });
    expect(await retry(again(() => { throw new ApiError('PAYMENT_NOT_REFUNDABLE', 'already refunded'); }))).toEqual({ ...first, replayed: true });
    expect(await retry(again(() => { throw new Error('the state moved on'); }))).toEqual({ ...first, replayed: true });
    expect(await retry(again(() => { throw new ApiError('VALIDATION_ERROR', 'settings changed'); }))).toEqual({ ...first, replayed: true });
    expect(await keyRow(`${key}-mark`)).toBeUndefined();
  });

  it('refuses another method or path with the same key (422)', async () => {
    const key = idem();
    failAt = null;
    await run(key);
    await expect(run(key, { amount: 1 }, '/v1/other')).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
  });

  it('leaves nothing behind when the first phase fails', async () => {
    const key = idem();
    failAt = 'started';
    await expect(run(key)).rejects.toThrow('injected failure in started');
    expect(await keyRow(key)).toBeUndefined();
  });

  it('keeps the committed recovery point when a later phase fails, unlocks the key, and resumes there on retry', async () => {
    const key = idem();
    calls.length = 0;
    failAt = 'charged';
    await expect(run(key)).rejects.toThrow('injected failure in charged');
    expect(await keyRow(key)).toMatchObject({ recovery_point: 'charged', locked_at: null, response_status: null, resource_id: 'pi_resource' });
    calls.length = 0;
    failAt = null;
    const sent = await run(key);
    expect(calls).toEqual(['started', 'charged:pi_resource']);
    expect(sent.replayed).toBe(false);
    expect(JSON.parse(sent.body)).toEqual({ id: 'pi_resource', done: true });
  });

  it('answers 409 IDEMPOTENCY_KEY_IN_USE while another request holds the key, and resumes a crashed holder after the lock timeout', async () => {
    const key = idem();
    failAt = 'charged';
    await expect(run(key)).rejects.toThrow();
    // As if a process were in the middle of the `charged` phase right now.
    await service.db.query('UPDATE idempotency_keys SET locked_at = now() WHERE product_id = $1 AND key = $2', [merchant.productId, key]);
    failAt = null;
    calls.length = 0;
    await expect(run(key)).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE', statusCode: 409 });
    expect(calls).toEqual(['started']);
    // As if that process had been killed eleven seconds ago: its lock was last renewed then.
    await service.db.query("UPDATE idempotency_keys SET locked_at = now() - interval '11 seconds' WHERE product_id = $1 AND key = $2", [
      merchant.productId,
      key,
    ]);
    calls.length = 0;
    const sent = await run(key);
    expect(calls).toEqual(['started', 'charged:pi_resource']);
    expect(sent.status).toBe(200);
  });

  it('renews the lock of a key while its request runs, so that only a dead holder\'s lock lapses', async () => {
    const key = idem();
    const lockedAt = async () =>
      (await service.db.query<{ locked_at: Date }>('SELECT locked_at FROM idempotency_keys WHERE product_id = $1 AND key = $2', [merchant.productId, key]))[0]!
        .locked_at;
    const seen: Date[] = [];
    let readAt = 0;
    const slow: Steps = {
      started: async () => ({ next: 'called', resourceId: 'pi_slow' }),
      called: foreignCall<null>({
        call: async () => {
          seen.push(await lockedAt());
          await new Promise((resolve) => setTimeout(resolve, 3_500));
          readAt = Date.now();
          seen.push(await lockedAt());
          return null;
        },
        record: async () => ({ response: { status: 200, body: { done: true } } }),
        resume: async () => ({ response: { status: 200, body: { resumed: true } } }),
      }),
    };
    expect((await runIdempotent(service.db, scope, key, { id: 'req_slow', method: 'POST', path: '/v1/slow', body: {} }, slow)).status).toBe(200);
    // Renewed while the call ran, and last renewed no longer ago than the renewal interval (3 s, with the read's slack).
    expect(seen[1]!.getTime()).toBeGreaterThan(seen[0]!.getTime());
    expect(readAt - seen[1]!.getTime()).toBeLessThanOrEqual(3_500);
    expect(await lockedAt()).toBeNull();
  });

  it('hands a foreign call what the phase before it carried, and a request resumed there never calls', async () => {
    const key = idem();
    const handed: unknown[] = [];
    let crash = true;
    const steps: Steps = {
      started: async () => ({ next: 'called', resourceId: 'pi_carried', carried: { id: 'pi_carried', amount: 7 } }),
      called: foreignCall<null>({
        call: async (id, carried) => {
          handed.push({ id, carried });
          if (crash) throw new Error('crashed after the call');
          return null;
        },
        record: async () => ({ response: { status: 200, body: { recorded: true } } }),
        resume: async () => ({ response: { status: 200, body: { resumed: true } } }),
      }),
    };
    const request = { id: 'req_carried', method: 'POST', path: '/v1/carried', body: {} };
    await expect(runIdempotent(service.db, scope, key, request, steps)).rejects.toThrow('crashed after the call');
    expect(handed).toEqual([{ id: 'pi_carried', carried: { id: 'pi_carried', amount: 7 } }]);
    crash = false;
    const retried = await runIdempotent(service.db, scope, key, request, steps);
    expect(JSON.parse(retried.body)).toEqual({ resumed: true });
    expect(handed).toHaveLength(1);
  });

  // Only where processes share a database: on the embedded engine a transaction has the one connection to itself, and a
  // process that stalls stalls the database's only user with it.
  it.runIf(engine === 'postgres')('fences a stalled request whose key another took over: its phase writes nothing and it answers 409, the key keeping the other\'s answer', async () => {
    const key = idem();
    const marks = async (id: string) => (await service.db.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [`mark-${id}`])).length;
    let release = () => {};
    const stalled = new Promise<void>((resolve) => (release = resolve));
    let reached = () => {};
    const inPhase = new Promise<void>((resolve) => (reached = resolve));
    // Each runner leaves a mark in its second phase's transaction (a key row of its own), to see whose writes commit:
    // the key is written once the first phase commits, and can only be taken over after that.
    const steps = (id: string, wait: boolean): Steps => ({
      started: async () => ({ next: 'stalling' }),
      stalling: async (tx) => {
        await tx.query(
          `INSERT INTO idempotency_keys (product_id, livemode, key, request_method, request_path, request_hash, recovery_point) VALUES ($1, false, $2, 'POST', '/mark', '\\x00', 'finished')`,
          [merchant.productId, `mark-${id}`],
        );
        if (wait) {
          reached();
          await stalled;
        }
        return { response: { status: 200, body: { by: id } } };
      },
    });
    const request = { id: 'req_a', method: 'POST', path: '/v1/fenced', body: {} };
    const first = runIdempotent(service.db, scope, key, request, steps('a', true));
    await inPhase;
    // The first request stalls past its lock's timeout, as a paused process would; a retry takes the key over.
    await service.db.query(`UPDATE idempotency_keys SET locked_at = now() - interval '1 minute' WHERE product_id = $1 AND key = $2`, [merchant.productId, key]);
    const second = await runIdempotent(service.db, scope, key, { ...request, id: 'req_b' }, steps('b', false));
    expect(second).toEqual({ status: 200, body: '{"by":"b"}', replayed: false });
    release();
    await expect(first).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE' });
    expect([await marks('a'), await marks('b')]).toEqual([0, 1]);
    expect(await runIdempotent(service.db, scope, key, { ...request, id: 'req_c' }, steps('c', false))).toEqual({ status: 200, body: '{"by":"b"}', replayed: true });
  });

  it('stores a business refusal of a phase as the key\'s answer: the retry replays it and runs nothing after its first phase', async () => {
    const key = idem();
    failAt = 'refused';
    calls.length = 0;
    const refused = await run(key);
    expect(refused).toMatchObject({ status: 400, replayed: false });
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'CARD_INACTIVE', message: 'refused', requestId: 'req_first' });
    expect(await keyRow(key)).toMatchObject({ recovery_point: 'finished', locked_at: null, response_status: 400 });
    failAt = null;
    calls.length = 0;
    expect(await run(key)).toEqual({ ...refused, replayed: true });
    expect(calls).toEqual(['started']);
  });

  it('does not store a validation error or a failure (5xx): the retry runs the phases again', async () => {
    const key = idem();
    failAt = 'started';
    await expect(run(key)).rejects.toThrow('injected failure in started');
    const invalid: Steps = {
      started: async () => {
        throw new ApiError('VALIDATION_ERROR', 'amount is wrong', { param: 'amount' });
      },
    };
    await expect(runIdempotent(service.db, scope, key, { id: 'req_x', method: 'POST', path: '/v1/things', body: { amount: 1 } }, invalid)).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    expect(await keyRow(key)).toBeUndefined();
    failAt = null;
    expect((await run(key)).status).toBe(200);
  });
});

describe('retention', () => {
  it('deletes keys older than 24 hours in bounded batches and keeps younger ones', async () => {
    const oldKey = idem();
    const youngKey = idem();
    await createOrder(merchant.test, oldKey);
    await createOrder(merchant.test, youngKey);
    await service.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE product_id = $1 AND key = $2", [
      merchant.productId,
      oldKey,
    ]);
    const worker = idempotencyCleanup(service.db);
    const deleted = await worker.runOnce();
    expect(deleted).toBeGreaterThanOrEqual(1);
    expect(deleted).toBeLessThanOrEqual(worker.batchMax);
    const keys = (await service.db.query<{ key: string }>('SELECT key FROM idempotency_keys WHERE product_id = $1', [merchant.productId])).map(
      (row) => row.key,
    );
    expect(keys).not.toContain(oldKey);
    expect(keys).toContain(youngKey);
    // The key is free again: the same request now creates a new order.
    const again = await createOrder(merchant.test, oldKey);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
  });
});
