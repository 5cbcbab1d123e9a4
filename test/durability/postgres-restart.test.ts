// PostgreSQL restarted under load (`pg_ctlcluster … restart -m immediate`). This stops the server every other test uses,
// so it runs alone: `.ci/run` runs it after the suite with TOLOV_TEST_POSTGRES_RESTART set; otherwise it is skipped.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindCard } from '../support/binding.js';
import { engine, startService, type Merchant, type TestService } from '../support/harness.js';
import { charge, reconcileNow } from '../support/payments.js';

const enabled = engine === 'postgres' && process.env.TOLOV_TEST_POSTGRES_RESTART === '1';
const CHARGES = 60;
const CONCURRENCY = 6;

function restartPostgres(): void {
  const [version] = readdirSync('/etc/postgresql');
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version!, 'main', 'restart', '-m', 'immediate'], { stdio: 'ignore' });
}

let service: TestService;
let shop: Merchant;
let card: string;

describe.runIf(enabled)('PostgreSQL restarted under load', () => {
  beforeAll(async () => {
    service = await startService();
    shop = await service.createMerchant({ feeBps: 100 });
    card = await bindCard(service, shop.test, '8600000000000007');
  });
  afterAll(() => service?.stop());

  it('fails requests cleanly while it is down, recovers, and keeps every invariant', async () => {
    const statuses: number[] = [];
    let next = 0;
    let restarted = false;
    const worker = async () => {
      while (next < CHARGES) {
        const index = next++;
        if (index === CHARGES / 3 && !restarted) {
          restarted = true;
          restartPostgres();
        }
        statuses.push((await charge(service, shop.test, { amount: 1_000 + index, card }, `restart-${index}`)).status);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(restarted).toBe(true);
    // While the server was away, requests failed with 503 and Retry-After, never a wrong answer or an internal error.
    expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([]);

    // The pool recovered: every key, retried, gets its one intent.
    const ids = new Set<string>();
    for (let index = 0; index < CHARGES; index++) {
      let reply = await charge(service, shop.test, { amount: 1_000 + index, card }, `restart-${index}`);
      for (let attempt = 0; reply.status === 409 && attempt < 100; attempt++) {
        // A key whose request died with the connection stays locked until its lock lapses.
        await service.db.query("UPDATE idempotency_keys SET locked_at = now() - interval '2 minutes' WHERE key = $1", [`restart-${index}`]);
        reply = await charge(service, shop.test, { amount: 1_000 + index, card }, `restart-${index}`);
      }
      expect(reply.status, reply.text).toBe(201);
      ids.add(reply.body.id);
    }
    expect(ids.size).toBe(CHARGES);
    for (let round = 0; round < 3; round++) await reconcileNow(service);

    const [counts] = await service.db.query<{ intents: number; processing: number; net: number }>(
      `SELECT count(*)::int AS intents, count(*) FILTER (WHERE status = 'PROCESSING')::int AS processing,
              coalesce(sum(amount - fee) FILTER (WHERE status = 'SUCCEEDED'), 0)::bigint AS net
         FROM payment_intents WHERE product_id = $1`,
      [shop.productId],
    );
    expect(counts).toMatchObject({ intents: CHARGES, processing: 0 });
    const balance = (await service.call({ method: 'GET', url: '/v1/balance', key: shop.test })).body;
    expect(balance.pending + balance.available).toBe(counts!.net);
    const [events] = await service.db.query<{ wrong: number }>(
      `SELECT count(*)::int AS wrong FROM payment_intents i WHERE i.product_id = $1
          AND (i.status IN ('SUCCEEDED', 'FAILED'))::int <> (SELECT count(*) FROM events e WHERE e.object_id = i.id)`,
      [shop.productId],
    );
    expect(events!.wrong).toBe(0);
    // The test bank's books agree with every payment: a debit it lost in the crash was fenced, and its payment failed.
    const [books] = await service.db.query<{ wrong: number }>(
      `SELECT count(*)::int AS wrong FROM payment_intents i LEFT JOIN test_rail_operations o ON o.operation_id = i.id
        WHERE i.product_id = $1 AND (i.status = 'SUCCEEDED') <> (o.status IS NOT DISTINCT FROM 'SUCCEEDED')`,
      [shop.productId],
    );
    expect(books!.wrong).toBe(0);
  }, 180_000);
});
